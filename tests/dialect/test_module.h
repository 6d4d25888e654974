/* test_module.h - the CPU test module's kernels (test_module.c) and a
 * harness that runs a dispatch's blocks through the executor, split among
 * several pthreads like the CPU backend's pool does (harness.c). */
#ifndef MOX_TEST_DIALECT_MODULE_H
#define MOX_TEST_DIALECT_MODULE_H

#include <stdbool.h>
#include <stdint.h>

#include <mox/kernel_abi.h>

#include "cpu/block_exec.h"
#include "harness.h"

enum test_kernel {
    TK_GEOM,
    TK_GEOM_COOP,
    TK_BLOCK_REDUCE,
    TK_WARP_REDUCE,
    TK_WARP_OPS,
    TK_ATOMICS_GLOBAL,
    TK_ATOMICS_SCRIPT,
    TK_SHARED_HIST,
    TK_FAIL_SOME,
    TK_FAIL_SOME_COOP,
    TK_EARLY_RETURN,
    TK_DIVERGENT,
    TK_F16_CONVERT,
    TK_COUNT
};

const mox_cpu_module_entry *test_dialect_module(void);
/* Whether the module has kernel k (the work-group variant lacks the two
 * kernels that break moxc's rules on purpose). */
bool test_kernel_available(enum test_kernel k);


/* harness_run_entry (harness.h) for kernel k of the test module. */
static inline int harness_run(enum test_kernel k, mox_kdim3 grid, mox_kdim3 block, void *const *args,
                              unsigned threads, uint64_t chunk, mox__cpu_dispatch *d) {
    const mox_cpu_module_entry *m = test_dialect_module();
    return harness_run_entry(&m->kernels[k], m->lane_slot, grid, block, args, threads, chunk, d);
}

#endif
