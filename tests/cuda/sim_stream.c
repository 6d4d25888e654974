/* tests/cuda/sim_stream.c - the simulated driver's streams, events and
 * kernel launches; the operations they queue run on each stream's worker
 * thread (sim_cuda.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sim_driver.h"

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags);
CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    STICKY();
    CUstream st = calloc(1, sizeof *st);
    if (!st)
        return CUDA_ERROR_OUT_OF_MEMORY;
    st->ctx = t_current;
    if (pthread_create(&st->thread, NULL, sim_stream_main, st) != 0) {
        free(st);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *s = st;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s);
CUresult cuStreamDestroy_v2(CUstream s)
{
    pthread_mutex_lock(&g_lock);
    /* CUDA lets queued work finish; so do we (unless the context died). */
    while ((s->head || s->busy) && !s->ctx->sticky)
        pthread_cond_wait(&g_cv, &g_lock);
    s->stop = true;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_lock(&g_lock);
    for (op *o = s->head, *n; o; o = n) {
        n = o->next;
        if (o->kind == OP_GRAPH)
            sim_exec_done(o->exec); /* never ran (the context faulted) */
        free(o->nodes);
        free(o);
    }
    pthread_mutex_unlock(&g_lock);
    free(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags);
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
    (void)flags;
    op *o = sim_op_new(OP_WAIT);
    o->event = e;
    pthread_mutex_lock(&g_lock);
    o->gen = e->recorded; /* the record captured now, as in CUDA */
    pthread_mutex_unlock(&g_lock);
    return sim_submit(s, o);
}

EXPORT CUresult cuStreamSynchronize(CUstream s);
CUresult cuStreamSynchronize(CUstream s)
{
    pthread_mutex_lock(&g_lock);
    while ((s->head || s->busy) && !s->ctx->sticky)
        pthread_cond_wait(&g_cv, &g_lock);
    CUresult r = s->ctx->sticky;
    pthread_mutex_unlock(&g_lock);
    return r;
}

EXPORT CUresult cuCtxSynchronize(void);
CUresult cuCtxSynchronize(void)
{
    STICKY();
    return CUDA_SUCCESS; /* the backend only uses it in benchmarks */
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags);
CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void)flags;
    STICKY();
    *e = calloc(1, sizeof **e);
    if (*e)
        (*e)->ctx = t_current;
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e);
CUresult cuEventDestroy_v2(CUevent e)
{
    free(e);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s);
CUresult cuEventRecord(CUevent e, CUstream s)
{
    op *o = sim_op_new(OP_RECORD);
    o->event = e;
    pthread_mutex_lock(&g_lock);
    if (s->ctx->sticky || e->ctx != s->ctx) {
        CUresult r = s->ctx->sticky ? s->ctx->sticky : CUDA_ERROR_INVALID_HANDLE;
        pthread_mutex_unlock(&g_lock);
        free(o);
        return r;
    }
    o->gen = ++e->recorded;
    sim_enqueue(s, o);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent e);
CUresult cuEventQuery(CUevent e)
{
    pthread_mutex_lock(&g_lock);
    CUresult r = e->ctx->sticky ? e->ctx->sticky
                                : (e->completed >= e->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
    pthread_mutex_unlock(&g_lock);
    return r;
}

EXPORT CUresult cuEventSynchronize(CUevent e);
CUresult cuEventSynchronize(CUevent e)
{
    pthread_mutex_lock(&g_lock);
    while (e->completed < e->recorded && !e->ctx->sticky)
        pthread_cond_wait(&g_cv, &g_lock);
    CUresult r = e->ctx->sticky;
    pthread_mutex_unlock(&g_lock);
    return r;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b);
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    /* Like the driver: both recorded and completed, else not ready. */
    pthread_mutex_lock(&g_lock);
    bool ready = a->recorded && b->recorded && a->completed >= a->recorded &&
                 b->completed >= b->recorded;
    double d = ready ? ((double)b->done_ns - (double)a->done_ns) / 1e6 : 0.0;
    pthread_mutex_unlock(&g_lock);
    *ms = (float)d;
    return ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared, CUstream s, void **params, void **extra);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        CUstream s, void **params, void **extra)
{
    (void)shared;
    (void)extra;
    STICKY();
    unsigned int grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    op *o = sim_op_new(OP_KERNEL);
    CUresult r = sim_make_launch(f, grid, block, params, &o->launch);
    if (r != CUDA_SUCCESS) {
        free(o);
        return r;
    }
    o->fn = f;
    return sim_submit(s, o);
}

