/* thread_pool.h - the CPU backend's workers: a FIFO of ready jobs, each
 * split into chunks that idle workers claim, so one dispatch's blocks run
 * in parallel and independent dispatches run side by side. The worker that
 * finishes a job's last chunk calls its finish function (no separate
 * completion thread, no join). Jobs are never run on the pushing thread. */
#ifndef MOX_CPU_THREAD_POOL_H
#define MOX_CPU_THREAD_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mox__pool mox__pool;
typedef struct mox__pool_job mox__pool_job;

struct mox__pool_job {
    /* set by the owner before push */
    uint64_t total;            /* units of work (>= 1) */
    uint64_t chunk;            /* units per claim (>= 1); 0 = pick (see mox__pool_chunk) */
    uint64_t unit_work;        /* how much one unit does (a block: its threads); 0 = unknown */
    void (*run)(mox__pool_job *job, uint64_t first, uint64_t count);
    /* Once, after every unit ran. May be NULL only for a one-unit job; the
     * pool then never touches the job after run() returns. */
    void (*finish)(mox__pool_job *job);
    /* pool private */
    uint64_t next;             /* first unclaimed unit; pool lock */
    _Atomic uint64_t done;
    mox__pool_job *next_ready;
};

/* Starts `threads` workers (0 = number of online CPUs). NULL on failure,
 * with *error = ENOMEM (no memory) or pthread_create's error. */
mox__pool *mox__pool_create(uint32_t threads, int *error);
/* Stops and joins the workers; no job may be pending. */
void mox__pool_destroy(mox__pool *pool);
uint32_t mox__pool_threads(const mox__pool *pool);
/* The chunk a job gets when it leaves it 0: about four claims per worker
 * (load balance without per-unit locking), but never less work per claim
 * than MOX__POOL_MIN_WORK units of unit_work (a dispatch of tiny blocks
 * wakes no more workers than it can keep busy). */
#define MOX__POOL_MIN_WORK 8192u
uint64_t mox__pool_chunk(const mox__pool *pool, uint64_t total, uint64_t unit_work);
/* Queues a job. Thread-safe; callable from finish functions. */
void mox__pool_push(mox__pool *pool, mox__pool_job *job);

#endif
