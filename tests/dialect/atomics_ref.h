/* atomics_ref.h - what the atomics_script kernel (kernels_src.h) must
 * record, worked out by hand from its comments. Host C and C++. */
#ifndef MOX_TEST_ATOMICS_REF_H
#define MOX_TEST_ATOMICS_REF_H

#include <stdint.h>

static const uint32_t atomics_script_want[] = {
    10u, 10u, 5u, 0xfffffffeu, 100u, 100u, 0x80000000u, 0x80000000u, 0x8000000fu, 0xcu,
    0u, 42u, 1u, 42u, 1u,
    0xfffffff6u, 0xfffffff6u, 0x7ffffff6u, 0x8000000au, 0x8000000au, 3u, 2u, 0xfffffff2u, 13u,
    0u, 0xfffffff7u, 1u, 0u, 28u,
};
#define ATOMICS_SCRIPT_STEPS (sizeof atomics_script_want / sizeof atomics_script_want[0])

#endif
