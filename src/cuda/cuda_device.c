/* src/cuda/cuda_device.c - one mox device on CUDA: the primary context,
 * streams, device limits, and the small pools every submission draws from
 * (gate status slots in device memory, host-mapped failure flags, events).
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_CHUNK 1024u

static uint32_t attr(mox__cuda_dev *dev, int which)
{
    int v = 0;
    if (dev->api->cuDeviceGetAttribute(&v, which, dev->device) != CUDA_SUCCESS || v < 0)
        return 0;
    return (uint32_t)v;
}

mox_status mox__cuda_dev_enter(mox__cuda_dev *dev)
{
    CUresult r = dev->api->cuCtxSetCurrent(dev->ctx);
    return r == CUDA_SUCCESS ? MOX_OK : mox__cuda_fail(dev->api, r, "cuCtxSetCurrent", NULL);
}

/* The helpers of mox__cuda_dev_open: a driver call that fails ends the
 * open with its message. */
#define CHECK(call, what)                                                       \
    do {                                                                        \
        CUresult r_ = (call);                                                   \
        if (r_ != CUDA_SUCCESS)                                                 \
            return mox__cuda_fail(api, r_, what, "opening the CUDA device");    \
    } while (0)

/* Retains the device's primary context and makes it current. Reopening
 * after a sticky fault: the process's primary context is still the
 * faulted one (the driver keeps it, even with no reference left; seen on
 * the H200: retain answers CUDA_ERROR_ILLEGAL_ADDRESS). It is unusable for
 * everyone, so reset it and start a fresh one. */
static mox_status retain_context(mox__cuda_dev *dev)
{
    const mox__cuda_api *api = dev->api;
    CUresult r = api->cuDevicePrimaryCtxRetain(&dev->ctx, dev->device);
    if (r == CUDA_SUCCESS) {
        r = api->cuCtxSetCurrent(dev->ctx);
        if (r == CUDA_SUCCESS)
            r = api->cuCtxSynchronize();
        if (r != CUDA_SUCCESS) {
            api->cuDevicePrimaryCtxRelease(dev->device);
            dev->ctx = NULL;
        }
    }
    if (mox__cuda_error_is_sticky(r)) {
        /* The driver checks the thread's current context too: drop the
         * faulted one from this thread before resetting. */
        api->cuCtxSetCurrent(NULL);
        CHECK(api->cuDevicePrimaryCtxReset(dev->device), "cuDevicePrimaryCtxReset");
        r = api->cuDevicePrimaryCtxRetain(&dev->ctx, dev->device);
        if (r != CUDA_SUCCESS) {
            dev->ctx = NULL;
            return mox__cuda_fail(api, r, "cuDevicePrimaryCtxRetain",
                                  "after resetting the context of a faulted device: the driver "
                                  "keeps this process's device lost");
        }
    }
    CHECK(r, "cuDevicePrimaryCtxRetain");
    CHECK(api->cuCtxSetCurrent(dev->ctx), "cuCtxSetCurrent");
    return MOX_OK;
}

/* The device's limits, and whether it can map host memory (the failure
 * flags need it). */
static mox_status read_limits(mox__cuda_dev *dev)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_limits *l = &dev->limits;
    l->max_block[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    l->max_block[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    l->max_block[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    l->max_grid[0] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    l->max_grid[1] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    l->max_grid[2] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    l->max_threads = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    l->warp_size = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    l->shared_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    l->shared_optin = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (l->shared_optin < l->shared_per_block)
        l->shared_optin = l->shared_per_block;
    l->sm_count = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    l->cc_major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    l->cc_minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    mox__cuda_settle_pdl(dev);
    size_t total = 0;
    CHECK(api->cuDeviceTotalMem(&total, dev->device), "cuDeviceTotalMem");
    l->total_mem = total;
    if (!attr(dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) || !attr(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
        return mox__cuda_error(MOX_ERR_DEVICE_UNAVAILABLE,
                               "CUDA device %s cannot map host memory (needed for failure flags)", dev->name);
    return MOX_OK;
}

/* The streams, and the gate status pool: every word OK but the sentinel
 * slot's, FAILED forever. */
static mox_status make_streams_and_pool(mox__cuda_dev *dev)
{
    const mox__cuda_api *api = dev->api;
    for (uint32_t i = 0; i < MOX__CUDA_STREAMS; i++)
        CHECK(api->cuStreamCreate(&dev->streams[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CHECK(api->cuStreamCreate(&dev->copy_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CHECK(api->cuMemAlloc(&dev->pool, (size_t)MOX__CUDA_POOL_SLOTS * 8u), "cuMemAlloc");
    CHECK(api->cuMemsetD32Async(dev->pool, 0, (size_t)MOX__CUDA_POOL_SLOTS * 2u, dev->copy_stream),
          "cuMemsetD32Async");
    CHECK(api->cuMemsetD32Async(dev->pool + 8u * MOX__CUDA_SENTINEL_SLOT, MOX_DISPATCH_FAILED, 1,
                                dev->copy_stream),
          "cuMemsetD32Async");
    CHECK(api->cuStreamSynchronize(dev->copy_stream), "cuStreamSynchronize");
    dev->slot_used = mox__calloc(MOX__CUDA_POOL_SLOTS, 1);
    if (!dev->slot_used)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory opening the CUDA device");
    dev->slot_used[MOX__CUDA_SENTINEL_SLOT] = 1;
    dev->slot_used[MOX__CUDA_OK_SLOT] = 1;
    dev->slot_hint = MOX__CUDA_FIRST_SLOT;
    return MOX_OK;
}

/* The device's identity: handle, context, name, ordinal and UUID. */
static mox_status identify(mox__cuda_dev *dev, int ordinal)
{
    const mox__cuda_api *api = dev->api;
    CHECK(api->cuDeviceGet(&dev->device, ordinal), "cuDeviceGet");
    mox_status st = retain_context(dev);
    if (st != MOX_OK)
        return st;
    CHECK(api->cuDeviceGetName(dev->name, (int)sizeof dev->name - 1, dev->device), "cuDeviceGetName");
    dev->ordinal = (uint32_t)ordinal;
    return mox__cuda_uuid_of(api, dev->device, dev->uuid);
}
#undef CHECK

mox_status mox__cuda_dev_open(int ordinal, mox__cuda_dev **out)
{
    *out = NULL;
    const char *why = NULL;
    const mox__cuda_api *api = mox__cuda_api_get(&why);
    if (!api)
        return mox__cuda_error(MOX_ERR_DEVICE_UNAVAILABLE, "CUDA backend unavailable: %s", why);
    int count = 0;
    CUresult r = api->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuDeviceGetCount", "(no usable CUDA device)");
    if (count <= ordinal)
        return mox__cuda_error(MOX_ERR_DEVICE_UNAVAILABLE,
                               "CUDA backend unavailable: no CUDA device %d (%d found)", ordinal,
                               count);

    mox__cuda_dev *dev = mox__calloc(1, sizeof *dev);
    if (!dev)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory opening the CUDA device");
    dev->api = api;
    atomic_init(&dev->lost, false);
    mox__mutex_init(&dev->lock);
    pthread_mutex_init(&dev->pool_lock, NULL);
    mox__cond_init(&dev->work_cv);
    mox_status st = mox__cuda_read_settings(dev);
    if (st == MOX_OK)
        st = identify(dev, ordinal);
    if (st == MOX_OK)
        st = read_limits(dev);
    if (st == MOX_OK)
        st = make_streams_and_pool(dev);
    if (st == MOX_OK)
        st = mox__cuda_completion_start(dev);
    if (st != MOX_OK) {
        mox__cuda_dev_close(dev);
        return st;
    }
    *out = dev;
    return MOX_OK;
}

/* MOX_CUDA_STATS=1: the backend's counters on stderr when a device closes
 * (how many launches, instantiations, parameter updates... a run needed). */
static void print_stats(const mox__cuda_dev *dev)
{
    if (!dev->print_stats)
        return;
    const mox__cuda_stats *s = &dev->stats;
    fprintf(stderr,
            "mox cuda stats: launches %llu (graph %llu, kernels on streams %llu), "
            "submissions coalesced %llu, plans %llu, instantiations %llu, node updates %llu, "
            "deps uploads %llu, status resets %llu, status reads %llu, live gates %llu, "
            "completed by waiting threads %llu, programmatic edges %llu, event sleeps %llu, "
            "ungated plan nodes %llu, inline offers declined (not launched %llu, shared %llu, "
            "taken %llu), inline watches given back %llu, quiet waits %llu, naps through long runs %llu (woke %.1f us late on average, "
            "%llu overslept the run), waiting threads blocked on their launch %llu, "
            "launches with a spin event %llu, events recorded to sleep on %llu, "
            "launches described against their plan %llu, loads of the copy and fill kernels %llu\n",
            (unsigned long long)s->groups, (unsigned long long)s->graph_launches,
            (unsigned long long)s->stream_launches, (unsigned long long)s->coalesced,
            (unsigned long long)s->plans, (unsigned long long)s->instantiations,
            (unsigned long long)s->node_updates, (unsigned long long)s->deps_uploads,
            (unsigned long long)s->resets, (unsigned long long)s->status_reads,
            (unsigned long long)s->live_gates, (unsigned long long)s->inline_completions,
            (unsigned long long)s->programmatic_edges, (unsigned long long)s->event_sleeps,
            (unsigned long long)s->ungated_nodes, (unsigned long long)s->inline_not_out,
            (unsigned long long)s->inline_shared, (unsigned long long)s->inline_taken,
            (unsigned long long)s->inline_missed, (unsigned long long)s->quiet_waits,
            (unsigned long long)s->inline_naps,
            s->inline_naps ? (double)s->nap_late_ns / 1e3 / (double)s->inline_naps : 0.0,
            (unsigned long long)s->nap_overslept, (unsigned long long)s->inline_blocks,
            (unsigned long long)s->spin_events, (unsigned long long)s->wake_events,
            (unsigned long long)s->replays, (unsigned long long)s->builtin_loads);
}

void mox__cuda_dev_close(mox__cuda_dev *dev)
{
    if (!dev)
        return;
    const mox__cuda_api *api = dev->api;
    if (dev->thread_started)
        print_stats(dev);
    if (dev->ctx)
        api->cuCtxSetCurrent(dev->ctx);
    mox__cuda_completion_stop(dev);
    mox__cuda_trace_close(dev);
    mox__cuda_copy_unload(dev);
    mox__cuda_plans_destroy(dev);
    mox__cuda_stages_destroy(dev);
    for (int k = 0; k < 2; k++) {
        for (uint32_t i = 0; i < dev->free_event_count[k]; i++)
            api->cuEventDestroy(dev->free_events[k][i]);
        mox__free(dev->free_events[k]);
    }
    for (mox__cuda_flag_chunk *c = dev->flag_chunks, *n; c; c = n) {
        n = c->next;
        api->cuMemFreeHost(c->host);
        mox__free(c);
    }
    mox__free(dev->free_flags);
    mox__free(dev->free_flags_dev);
    if (dev->pool)
        api->cuMemFree(dev->pool);
    mox__free(dev->slot_used);
    mox__free(dev->scratch_nodes);
    for (uint32_t i = 0; i < 3; i++)
        mox__free(dev->scratch_u32[i].v);
    for (uint32_t i = 0; i < MOX__CUDA_STREAMS; i++)
        if (dev->streams[i])
            api->cuStreamDestroy(dev->streams[i]);
    if (dev->copy_stream)
        api->cuStreamDestroy(dev->copy_stream);
    if (dev->ctx) {
        api->cuDevicePrimaryCtxRelease(dev->device);
        /* A faulted context must not stay current on this thread (the next
         * open's calls would fail on it). A healthy one stays: the
         * application may use the same primary context itself. */
        if (atomic_load(&dev->lost))
            api->cuCtxSetCurrent(NULL);
    }
    pthread_mutex_destroy(&dev->pool_lock);
    mox__mutex_destroy(&dev->lock);
    mox__free(dev);
}

void mox__cuda_dev_lost(mox__cuda_dev *dev, const char *message)
{
    /* Caller holds dev->lock. The message is written once, before the flag
     * is raised, so readers of a raised flag see it complete. */
    if (atomic_load(&dev->lost))
        return;
    snprintf(dev->lost_message, sizeof dev->lost_message, "CUDA device lost: %s", message);
    atomic_store(&dev->lost, true);
}

/* ---- gate slots: first fit over a byte map. Instances are long-lived
 * (cached), so allocation is rare and a linear scan is fine. ---- */

static int run_free(const mox__cuda_dev *dev, uint32_t base, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (dev->slot_used[base + i])
            return 0;
    return 1;
}

mox_status mox__cuda_slots_alloc(mox__cuda_dev *dev, uint32_t count, uint32_t *base)
{
    if (count == 0)
        count = 1;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t start = pass == 0 ? dev->slot_hint : MOX__CUDA_FIRST_SLOT;
        for (uint32_t b = start; b + count <= MOX__CUDA_POOL_SLOTS; b++) {
            if (dev->slot_used[b])
                continue;
            if (run_free(dev, b, count)) {
                memset(dev->slot_used + b, 1, count);
                dev->slot_hint = b + count;
                *base = b;
                return MOX_OK;
            }
        }
    }
    return mox__cuda_error(MOX_ERR_ALLOCATION_FAILED,
                           "CUDA gate status pool exhausted (%u dispatch slots in use)",
                           MOX__CUDA_POOL_SLOTS);
}

void mox__cuda_slots_free(mox__cuda_dev *dev, uint32_t base, uint32_t count)
{
    if (count == 0)
        count = 1;
    memset(dev->slot_used + base, 0, count);
    if (base < dev->slot_hint)
        dev->slot_hint = base;
}

/* ---- host-mapped failure flags, carved from pinned chunks ---- */

mox_status mox__cuda_flag_alloc(mox__cuda_dev *dev, uint32_t **host, CUdeviceptr *devp)
{
    const mox__cuda_api *api = dev->api;
    if (dev->free_flag_count == 0) {
        mox__cuda_flag_chunk *c = mox__calloc(1, sizeof *c);
        uint32_t cap = dev->free_flag_cap + FLAG_CHUNK;
        uint32_t **nf = mox__realloc(dev->free_flags, cap * sizeof *nf);
        if (nf)
            dev->free_flags = nf;
        CUdeviceptr *nd = mox__realloc(dev->free_flags_dev, cap * sizeof *nd);
        if (nd)
            dev->free_flags_dev = nd;
        if (!c || !nf || !nd) {
            mox__free(c);
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for CUDA failure flags");
        }
        dev->free_flag_cap = cap;
        void *p = NULL;
        CUresult r = api->cuMemHostAlloc(&p, FLAG_CHUNK * sizeof(uint32_t),
                                         CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != CUDA_SUCCESS) {
            mox__free(c);
            return mox__cuda_fail(api, r, "cuMemHostAlloc", "(failure flags)");
        }
        r = api->cuMemHostGetDevicePointer(&c->dev, p, 0);
        if (r != CUDA_SUCCESS) {
            api->cuMemFreeHost(p);
            mox__free(c);
            return mox__cuda_fail(api, r, "cuMemHostGetDevicePointer", "(failure flags)");
        }
        c->host = p;
        memset(p, 0, FLAG_CHUNK * sizeof(uint32_t));
        c->next = dev->flag_chunks;
        dev->flag_chunks = c;
        for (uint32_t i = 0; i < FLAG_CHUNK; i++) {
            dev->free_flags[dev->free_flag_count] = c->host + i;
            dev->free_flags_dev[dev->free_flag_count] = c->dev + 4u * i;
            dev->free_flag_count++;
        }
    }
    dev->free_flag_count--;
    *host = dev->free_flags[dev->free_flag_count];
    *devp = dev->free_flags_dev[dev->free_flag_count];
    **host = 0;
    return MOX_OK;
}

void mox__cuda_flag_free(mox__cuda_dev *dev, uint32_t *host, CUdeviceptr devp)
{
    /* Capacity always covers every flag ever carved, so this cannot overflow. */
    dev->free_flags[dev->free_flag_count] = host;
    dev->free_flags_dev[dev->free_flag_count] = devp;
    dev->free_flag_count++;
}
