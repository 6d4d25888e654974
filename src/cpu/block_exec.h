/* block_exec.h - the CPU block executor (internal): runs the blocks of one
 * kernel dispatch on the calling thread. The CPU backend's thread pool
 * splits a dispatch's blocks among its workers and calls
 * mox__cpu_run_blocks on each; this file knows nothing about pools.
 *
 * Kernels without barriers or warp operations run through the module's
 * block_fn: a plain loop over the block's threads. Cooperative kernels
 * (MOX_KFEAT_BARRIER or MOX_KFEAT_WARP) run each thread of a block as a
 * fiber of the calling worker, scheduled round-robin: a thread runs until
 * it waits at a barrier or warp exchange (or returns), then the next one
 * runs. Fibers and their stacks belong to the calling thread and are
 * reused for every later block; they are freed when the thread exits (or
 * by mox__cpu_thread_release).
 */
#ifndef MOX_CPU_BLOCK_EXEC_H
#define MOX_CPU_BLOCK_EXEC_H

#include <stdatomic.h>
#include <stdint.h>

#include <mox/kernel_abi.h>

/* Most threads per block the executor runs (CUDA's limit too). */
#define MOX__CPU_MAX_BLOCK_THREADS 1024u
/* Most dynamic shared memory per block (mox_device_max_shared_bytes). */
#define MOX__CPU_MAX_DYNAMIC_SHARED (1u << 20)

/* mox__cpu_dispatch.fault values. */
enum {
    MOX__CPU_FAULT_NONE = 0,
    /* Every live thread of a block waited at a barrier or warp operation
     * that could never complete (threads at different collectives, e.g. a
     * barrier under thread-dependent control flow, which moxc should have
     * rejected). The block was abandoned where it stood and the blocks
     * not yet started were skipped: the outputs are unspecified. */
    MOX__CPU_FAULT_DIVERGENT = 1
};

typedef struct mox__cpu_dispatch {
    const mox_cpu_kernel_entry *kernel;  /* from the module's entry table */
    mox_cpu_lane **(*lane_slot)(void);   /* the module's slot function */
    mox_kdim3 grid, block;               /* every component >= 1 */
    void *const *args;                   /* as mox_cpu_thread_fn documents */
    /* MOX_DISPATCH_OK until a thread calls mox_fail, then
     * MOX_DISPATCH_FAILED; the first caller's code is in fail_code. Read
     * fail_code only once every mox__cpu_run_blocks call of the dispatch
     * has returned (the pool's join orders it). */
    _Atomic uint32_t fail_state;
    uint32_t fail_code;
    _Atomic uint32_t fault;              /* MOX__CPU_FAULT_* */
    /* Dynamic shared memory per block (0: none); set after init. Each
     * mox__cpu_run_blocks call allocates it once for its blocks. */
    uint32_t dynamic_shared_bytes;
} mox__cpu_dispatch;

/* Fills *d for a dispatch and clears its failure state. */
void mox__cpu_dispatch_init(mox__cpu_dispatch *d, const mox_cpu_kernel_entry *kernel,
                            mox_cpu_lane **(*lane_slot)(void), mox_kdim3 grid, mox_kdim3 block,
                            void *const *args);

/* Blocks in the grid (the product of its components). */
uint64_t mox__cpu_dispatch_block_count(const mox__cpu_dispatch *d);

/* Runs blocks [first, first + count) of d, by linear block index
 * (x fastest, then y, then z), on the calling thread. Several threads may
 * run disjoint ranges of one dispatch at once.
 * Returns 0, or before running anything: EINVAL when the block has more
 * than MOX__CPU_MAX_BLOCK_THREADS threads or the range exceeds the grid,
 * ENOMEM when fibers or dynamic shared memory could not be allocated. A fault (d->fault) stops the
 * range early and still returns 0; so do blocks once d->fault is set by
 * another thread, which are skipped. */
int mox__cpu_run_blocks(mox__cpu_dispatch *d, uint64_t first, uint64_t count);

/* Frees the calling thread's fibers and stacks now instead of at thread
 * exit. The next cooperative dispatch on this thread allocates them again. */
void mox__cpu_thread_release(void);

#endif
