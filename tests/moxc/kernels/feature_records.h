/* feature_records.h - records of the "features" golden module: a vector member
 * and an over-aligned member. */
#ifndef MOXC_TEST_FEATURE_RECORDS_H
#define MOXC_TEST_FEATURE_RECORDS_H
#include <mox/kernel.h>

typedef struct Particle4 {
    mox_float4 pos;
    mox_float3 vel;
    _Alignas(8) uint32_t id;
} Particle4;

#endif
