/* binomial_port.h - the per-option data the binomialOptions port's kernel
 * reads: the original's __TOptionData (preprocessed on the host; the name
 * changes because C reserves names with two leading underscores). The
 * original keeps an array of them in __constant__ memory; the port reads
 * them from a read buffer. */
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
