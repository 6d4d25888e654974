/* mergesort_port.h - the mergeSort sample's constants (mergeSort_common.h,
 * which also declares C++-linkage functions and so cannot be included from
 * C), shared by the port's kernels and host glue. */
#ifndef MOX_WORKLOADS_MERGESORT_PORT_H
#define MOX_WORKLOADS_MERGESORT_PORT_H

#define SHARED_SIZE_LIMIT 1024U
#define SAMPLE_STRIDE 128

#endif
