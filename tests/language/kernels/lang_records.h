/* lang_records.h - records of the kernel-language tests, shared by the host and the
 * kernels: vectors as members, an over-aligned member. */
#ifndef MOX_TEST_LANG_RECORDS_H
#define MOX_TEST_LANG_RECORDS_H
#include <mox/kernel.h>

typedef struct Body {
    mox_float4 pos;
    mox_float3 vel;
    float mass;
} Body;

typedef struct Tagged {
    uint8_t tag;
    _Alignas(16) float w[3];
    mox_half2 h;
} Tagged;

#endif
