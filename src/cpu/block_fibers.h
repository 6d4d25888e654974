/* block_fibers.h - the fiber executor of the CPU backend (internal to
 * src/cpu: block_exec.c calls it): every thread of a block is a fiber of
 * the calling worker, switched at barriers and warp exchanges. */
#ifndef MOX_CPU_BLOCK_FIBERS_H
#define MOX_CPU_BLOCK_FIBERS_H

#include "block_exec.h"

/* Runs blocks [first, first + count) of d, each of `threads` threads, on
 * fibers of the calling thread; `dynamic_shared` is the blocks' dynamic
 * shared memory (NULL for none). Returns 0 or ENOMEM (fibers could not be
 * allocated; nothing ran). */
int mox__cpu_run_fibers(mox__cpu_dispatch *d, uint32_t threads, uint64_t first, uint64_t count,
                        void *dynamic_shared);

/* Shared by both executors: mox_fail (first code wins) and the block index
 * of a linear block number (x fastest). */
void mox__cpu_svc_fail(void *dispatch, uint32_t code);
mox_kdim3 mox__cpu_block_coords(const mox__cpu_dispatch *d, uint64_t linear);
/* A lane for dispatch d with no thread index yet. */
void mox__cpu_lane_init(mox_cpu_lane *l, mox__cpu_dispatch *d, const mox_cpu_services *svc, void *block,
                        void *dynamic_shared);

#endif
