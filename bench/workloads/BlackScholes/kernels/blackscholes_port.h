/* blackscholes_port.h - the record the BlackScholes port's kernel and its
 * host glue share: two options' worth of one input, as the original's
 * float2 (8 bytes; the dialect's record has 4-byte alignment, so its loads
 * are two 4-byte loads where the original does one 8-byte load). */
#ifndef MOX_WORKLOADS_BLACKSCHOLES_PORT_H
#define MOX_WORKLOADS_BLACKSCHOLES_PORT_H

typedef struct BsPair {
    float x;
    float y;
} BsPair;

#endif
