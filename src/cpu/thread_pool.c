/* thread_pool.c - chunked job queue and its workers (see thread_pool.h).
 *
 * Claiming a chunk takes the pool lock briefly; chunks are sized so that a
 * job gives each worker a few of them (load balance without per-block
 * locking). Idle workers sleep on a condition variable. */
#include "thread_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/sync.h"
#include "core/trace.h"
#include "hal/hal.h"

struct mox__pool {
    mox__mutex lock; /* core/sync.h: a futex word */
    mox__cond cond;
    mox__pool_job *head, *tail;
    uint32_t idle;
    _Atomic uint32_t queued; /* jobs in the queue, for spinning workers */
    bool stop;
    uint32_t nthreads;
    pthread_t *threads;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The pool whose worker the calling thread is, if any. Initial-exec, as
 * alloc.h's block cache: every push reads it, and a shared library's
 * default model costs a __tls_get_addr call per access. */
static _Thread_local mox__pool *current_pool __attribute__((tls_model("initial-exec")));

static void *worker_main(void *p)
{
    mox__pool *pool = p;
    current_pool = pool;
    mox__thread_mark_runtime("mox-cpu");
    mox__trace_thread_name("mox cpu worker");
    mox__lock(&pool->lock);
    for (;;) {
        if (!pool->head && !pool->stop) {
            /* Dependent dispatches often follow within microseconds: spin
             * a little before sleeping (a sleeping worker costs a futex
             * round trip to wake). */
            mox__unlock(&pool->lock);
            for (int i = 0; i < 1000 && !atomic_load_explicit(&pool->queued, memory_order_relaxed); i++)
                cpu_relax();
            mox__lock(&pool->lock);
        }
        while (!pool->head && !pool->stop) {
            pool->idle++;
            mox__cond_wait(&pool->cond, &pool->lock, 0);
            pool->idle--;
        }
        if (!pool->head)
            break; /* stopping, nothing queued */
        mox__pool_job *job = pool->head;
        uint64_t first = job->next;
        uint64_t count = job->total - first < job->chunk ? job->total - first : job->chunk;
        job->next += count;
        if (job->next >= job->total) {
            atomic_fetch_sub_explicit(&pool->queued, 1, memory_order_relaxed);
            pool->head = job->next_ready;
            if (!pool->head)
                pool->tail = NULL;
        }
        if (pool->head && pool->idle) {
            /* More work queued (chunks of this job or other jobs): let an
             * idle worker take it. */
            mox__cond_signal(&pool->cond);
        }
        mox__unlock(&pool->lock);

        /* Read what we need before running: once the last chunk is
         * counted, its worker may finish (and free) the job; a job claimed
         * whole is this worker's alone and is not touched after run()
         * unless it has a finish function (a start job's run may end with
         * its owner freed). */
        uint64_t total = job->total;
        void (*finish)(mox__pool_job *) = job->finish;
        if (first == 0 && count == total) {
            job->run(job, first, count);
            if (finish)
                finish(job);
        } else {
            job->run(job, first, count);
            if (atomic_fetch_add_explicit(&job->done, count, memory_order_acq_rel) + count == total)
                finish(job);
        }

        mox__lock(&pool->lock);
    }
    mox__unlock(&pool->lock);
    return NULL;
}

mox__pool *mox__pool_create(uint32_t threads, int *error)
{
    *error = ENOMEM;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (uint32_t)n : 1u;
    }
    mox__pool *pool = mox__calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->threads = mox__calloc(threads, sizeof *pool->threads);
    if (!pool->threads) {
        mox__free(pool);
        return NULL;
    }
    mox__mutex_init(&pool->lock);
    mox__cond_init(&pool->cond);
    for (uint32_t i = 0; i < threads; i++) {
        if ((*error = pthread_create(&pool->threads[i], NULL, worker_main, pool)) != 0) {
            pool->nthreads = i;
            mox__pool_destroy(pool);
            return NULL;
        }
        pool->nthreads = i + 1;
    }
    return pool;
}

void mox__pool_destroy(mox__pool *pool)
{
    mox__lock(&pool->lock);
    pool->stop = true;
    mox__cond_broadcast(&pool->cond);
    mox__unlock(&pool->lock);
    for (uint32_t i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    mox__mutex_destroy(&pool->lock);
    mox__free(pool->threads);
    mox__free(pool);
}

uint32_t mox__pool_threads(const mox__pool *pool) { return pool->nthreads; }

uint64_t mox__pool_chunk(const mox__pool *pool, uint64_t total, uint64_t unit_work)
{
    uint64_t c = total / ((uint64_t)pool->nthreads * 4u);
    if (unit_work) {
        uint64_t least = (MOX__POOL_MIN_WORK + unit_work - 1) / unit_work;
        c = c > least ? c : least;
    }
    c = c < total ? c : total;
    return c ? c : 1;
}

void mox__pool_push(mox__pool *pool, mox__pool_job *job)
{
    if (job->chunk == 0)
        job->chunk = mox__pool_chunk(pool, job->total, job->unit_work);
    job->next = 0;
    atomic_store_explicit(&job->done, 0, memory_order_relaxed);
    job->next_ready = NULL;
    mox__lock(&pool->lock);
    if (pool->tail)
        pool->tail->next_ready = job;
    else
        pool->head = job;
    pool->tail = job;
    atomic_fetch_add_explicit(&pool->queued, 1, memory_order_relaxed);
    /* A worker pushing (a successor, a waiting submission) comes back for
     * the job itself right after, and wakes helpers then if there is more:
     * waking a sleeper here would only add a futex call to the critical
     * path. Other threads (submitters) wake one. */
    if (pool->idle && current_pool != pool)
        mox__cond_signal(&pool->cond);
    mox__unlock(&pool->lock);
}
