/* src/cuda/cuda_stage.c - pinned host memory: the staging pool transfers
 * copy through, and the same memory lent to the core for uploads the
 * device reads in place (HAL host_alloc / host_free, hal.h "Uploads from
 * device-readable host memory").
 *
 * Chunks come in power-of-two classes from cuMemHostAlloc (portable: every
 * context may use them; under unified addressing, which the device open
 * requires, the device reads them at their host address). Freed chunks are
 * kept up to STAGE_CACHE_BYTES. host_free calls no driver (it runs inside
 * a completion): a chunk it gives back past the cache goes on the pool's
 * `doomed` list, which the next stage_get or host_alloc (or the device's
 * close) frees.
 */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define STAGE_HEADER 64u              /* the class at 0, `doomed` links at 8 */
#define STAGE_MIN_CLASS 12u           /* 4 KiB */
#define STAGE_CACHE_BYTES (512ull << 20)

static uint32_t stage_class(size_t bytes)
{
    uint32_t c = STAGE_MIN_CLASS;
    while (c < 39 && ((size_t)1 << c) < bytes)
        c++;
    return c;
}

static unsigned char *base_of(void *stage)
{
    return (unsigned char *)stage - STAGE_HEADER;
}

static void *doomed_next(void *stage)
{
    void *next;
    memcpy(&next, base_of(stage) + 8, sizeof next);
    return next;
}

/* Frees a list of doomed chunks (no lock held: driver calls). */
static void free_doomed(mox__cuda_dev *dev, void *list)
{
    while (list) {
        void *next = doomed_next(list);
        dev->api->cuMemFreeHost(base_of(list));
        list = next;
    }
}

/* Returns a list taken by pool_take to the pool's (this thread could not
 * free it). */
static void put_back_doomed(mox__cuda_dev *dev, void *list)
{
    pthread_mutex_lock(&dev->pool_lock);
    while (list) {
        void *next = doomed_next(list);
        memcpy(base_of(list) + 8, &dev->stages.doomed, sizeof list);
        dev->stages.doomed = list;
        list = next;
    }
    pthread_mutex_unlock(&dev->pool_lock);
}

/* A pooled chunk of class c, if there is one; takes the doomed list too
 * (*doomed, for the caller to free with no lock held). */
static void *pool_take(mox__cuda_dev *dev, uint32_t c, void **doomed)
{
    mox__cuda_stage_pool *sp = &dev->stages;
    void *stage = NULL;
    pthread_mutex_lock(&dev->pool_lock);
    if (sp->count[c] != 0) {
        stage = sp->free[c][--sp->count[c]];
        sp->cached_bytes -= (uint64_t)1 << c;
    }
    *doomed = sp->doomed;
    sp->doomed = NULL;
    pthread_mutex_unlock(&dev->pool_lock);
    return stage;
}

mox_status mox__cuda_stage_get(mox__cuda_dev *dev, size_t bytes, void **out)
{
    uint32_t c = stage_class(bytes);
    void *doomed = NULL;
    *out = pool_take(dev, c, &doomed);
    free_doomed(dev, doomed);
    if (*out)
        return MOX_OK;
    void *base = NULL;
    CUresult r = dev->api->cuMemHostAlloc(&base, ((size_t)1 << c) + STAGE_HEADER,
                                          CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(dev->api, r, "cuMemHostAlloc", "(transfer staging)");
    *(uint32_t *)base = c;
    *out = (unsigned char *)base + STAGE_HEADER;
    return MOX_OK;
}

/* Keeps `stage` in the pool if the cache has room (pool_lock held). */
static bool keep_locked(mox__cuda_stage_pool *sp, void *stage, uint32_t c)
{
    if (sp->cached_bytes + ((uint64_t)1 << c) > STAGE_CACHE_BYTES)
        return false;
    if (sp->count[c] == sp->cap[c]) {
        uint32_t cap = sp->cap[c] ? 2u * sp->cap[c] : 4u;
        void **n = mox__realloc(sp->free[c], cap * sizeof *n);
        if (!n)
            return false;
        sp->free[c] = n;
        sp->cap[c] = cap;
    }
    sp->free[c][sp->count[c]++] = stage;
    sp->cached_bytes += (uint64_t)1 << c;
    return true;
}

void mox__cuda_stage_put(mox__cuda_dev *dev, void *stage)
{
    unsigned char *base = base_of(stage);
    pthread_mutex_lock(&dev->pool_lock);
    bool kept = keep_locked(&dev->stages, stage, *(uint32_t *)base);
    pthread_mutex_unlock(&dev->pool_lock);
    if (!kept)
        dev->api->cuMemFreeHost(base);
}

void *mox__cuda_host_lend(mox__cuda_dev *dev, size_t bytes, uint64_t *device_address)
{
    /* A lost device's pool may be gone with its context (a reopen resets
     * the primary context): the core copies into ordinary memory, and the
     * submission fails as any on a lost device. */
    *device_address = 0;
    if (atomic_load(&dev->lost))
        return NULL;
    void *doomed = NULL;
    void *stage = pool_take(dev, stage_class(bytes), &doomed);
    if (!stage || doomed) {
        /* Allocating and freeing need the device's context current on
         * this (the program's) thread; its own is current again after. */
        CUcontext prev = NULL;
        dev->api->cuCtxGetCurrent(&prev);
        if (prev == dev->ctx || mox__cuda_dev_enter(dev) == MOX_OK) {
            free_doomed(dev, doomed);
            if (!stage && mox__cuda_stage_get(dev, bytes, &stage) != MOX_OK)
                stage = NULL;
        } else if (doomed) {
            put_back_doomed(dev, doomed);
        }
        if (prev != dev->ctx)
            dev->api->cuCtxSetCurrent(prev);
    }
    *device_address = (uint64_t)(uintptr_t)stage; /* unified addressing: the same */
    return stage;
}

void mox__cuda_host_return(mox__cuda_dev *dev, void *stage)
{
    unsigned char *base = base_of(stage);
    mox__cuda_stage_pool *sp = &dev->stages;
    pthread_mutex_lock(&dev->pool_lock);
    if (!keep_locked(sp, stage, *(uint32_t *)base)) {
        memcpy(base + 8, &sp->doomed, sizeof sp->doomed);
        sp->doomed = stage;
    }
    pthread_mutex_unlock(&dev->pool_lock);
}

void mox__cuda_stages_destroy(mox__cuda_dev *dev)
{
    mox__cuda_stage_pool *sp = &dev->stages;
    for (uint32_t c = 0; c < 40; c++) {
        for (uint32_t i = 0; i < sp->count[c]; i++)
            dev->api->cuMemFreeHost(base_of(sp->free[c][i]));
        mox__free(sp->free[c]);
        sp->free[c] = NULL;
        sp->count[c] = sp->cap[c] = 0;
    }
    free_doomed(dev, sp->doomed);
    sp->doomed = NULL;
    sp->cached_bytes = 0;
}
