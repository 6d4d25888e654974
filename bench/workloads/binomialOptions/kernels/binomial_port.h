/* binomial_port.h - the per-option data the binomialOptions port's kernel
 * reads: the original's __TOptionData (preprocessed on the host; the name
 * changes because C reserves names with two leading underscores). Both
 * keep an array of MAX_OPTIONS of them in the constant bank: the original
 * in __constant__ memory, the port in a MOX_TABLE parameter. */
#ifndef MOX_WORKLOADS_BINOMIAL_PORT_H
#define MOX_WORKLOADS_BINOMIAL_PORT_H

#include "realtype.h" /* the original's real (float) */

typedef struct OptionDataGPU {
    real S;
    real X;
    real vDt;
    real puByDf;
    real pdByDf;
} OptionDataGPU;

#endif
