/* block_exec.h - the CPU block executor (internal): runs the blocks of one
 * kernel dispatch on the calling thread. The CPU backend's thread pool
 * splits a dispatch's blocks among its workers and calls
 * mox__cpu_run_blocks on each; this file knows nothing about pools.
 *
 * A kernel with a work-group function (mox_cpu_kernel_entry.group_fn) runs
 * one call per block: moxc turned the block's threads into loops
 * (executor "loops"), or the function calls the kernel once per thread
 * ("thread-calls", barrier-free kernels only). The others ("fibers") run
 * each thread of a block as a fiber of the calling worker, scheduled
 * round-robin: a thread runs until it waits at a barrier or warp exchange
 * (or returns), then the next one runs (block_fibers.c). Fibers and their
 * stacks belong to the calling thread and are reused for every later
 * block; they are freed when the thread exits (or by
 * mox__cpu_thread_release).
 *
 * MOX_CPU_EXECUTOR=fibers makes every kernel run on fibers (the reference
 * executor, to compare results); unset or empty keeps each kernel's own.
 */
#ifndef MOX_CPU_BLOCK_EXEC_H
#define MOX_CPU_BLOCK_EXEC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
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
     * not yet started were skipped: the outputs are unspecified. Only the
     * fiber executor detects this. */
    MOX__CPU_FAULT_DIVERGENT = 1
};

typedef struct mox__cpu_dispatch {
    const mox_cpu_kernel_entry *kernel;  /* from the module's entry table */
    mox_cpu_lane **(*lane_slot)(void);   /* the module's slot function */
    mox_kdim3 grid, block;               /* every component >= 1 */
    void *const *args;                   /* as mox_cpu_thread_fn documents */
    /* Bytes of dynamic shared memory each block gets (0 after init). */
    uint32_t dynamic_shared_bytes;
    /* MOX_DISPATCH_OK until a thread calls mox_fail, then
     * MOX_DISPATCH_FAILED; the first caller's code is in fail_code. Read
     * fail_code only once every mox__cpu_run_blocks call of the dispatch
     * has returned (the pool's join orders it). */
    _Atomic uint32_t fail_state;
    uint32_t fail_code;
    _Atomic uint32_t fault;              /* MOX__CPU_FAULT_* */
} mox__cpu_dispatch;

/* Fills *d for a dispatch and clears its failure state. */
void mox__cpu_dispatch_init(mox__cpu_dispatch *d, const mox_cpu_kernel_entry *kernel,
                            mox_cpu_lane **(*lane_slot)(void), mox_kdim3 grid, mox_kdim3 block,
                            void *const *args);

/* Blocks in the grid (the product of its components). */
uint64_t mox__cpu_dispatch_block_count(const mox__cpu_dispatch *d);
/* Threads per block (the product of the block's components). */
uint64_t mox__cpu_dispatch_block_threads(const mox__cpu_dispatch *d);

/* Runs blocks [first, first + count) of d, by linear block index
 * (x fastest, then y, then z), on the calling thread. Several threads may
 * run disjoint ranges of one dispatch at once.
 * Returns 0, or before running anything: EINVAL when the block has more
 * than MOX__CPU_MAX_BLOCK_THREADS threads or the range exceeds the grid,
 * ENOMEM when fibers or dynamic shared memory could not be allocated. A
 * fault (d->fault) stops the range early and still returns 0; so do blocks
 * once d->fault is set by another thread, which are skipped. */
int mox__cpu_run_blocks(mox__cpu_dispatch *d, uint64_t first, uint64_t count);

/* Frees the calling thread's fibers and stacks now instead of at thread
 * exit. The next cooperative dispatch on this thread allocates them again. */
void mox__cpu_thread_release(void);

/* Whether MOX_CPU_EXECUTOR is valid ("" / unset / "fibers"); false fills
 * `why` with a message naming the value. Read once per process. */
bool mox__cpu_executor_setting_valid(char *why, size_t why_size);

#endif
