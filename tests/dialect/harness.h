/* harness.h - runs one dispatch's blocks through the CPU block executor
 * (mox__cpu_run_blocks) on several pthreads, split the way the CPU
 * backend's pool splits them (harness.c). Shared by the dialect tests and
 * the work-group executor tests (tests/cpu). */
#ifndef MOX_TEST_HARNESS_H
#define MOX_TEST_HARNESS_H

#include <stdint.h>

#include <mox/kernel_abi.h>

#include "cpu/block_exec.h"

static inline mox_kdim3 kdim3(uint32_t x, uint32_t y, uint32_t z) {
    mox_kdim3 d = {x, y, z};
    return d;
}

/* Runs every block of `kernel` over grid x block with `threads` pthreads
 * (1 = on the caller), each taking chunks of `chunk` blocks in turn. Fills
 * *d (its fail/fault state is the result). Returns the first nonzero
 * mox__cpu_run_blocks result, else 0. */
int harness_run_entry(const mox_cpu_kernel_entry *kernel, mox_cpu_lane **(*lane_slot)(void), mox_kdim3 grid,
                      mox_kdim3 block, void *const *args, unsigned threads, uint64_t chunk, mox__cpu_dispatch *d);

#endif
