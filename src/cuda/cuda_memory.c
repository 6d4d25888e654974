/* src/cuda/cuda_memory.c - device memory and host transfers.
 *
 * Buffers come from cuMemAllocAsync (device memory from the device's
 * default pool; never managed memory). Unlike cuMemAlloc'd memory, freeing
 * it performs no implicit device synchronisation, so dropping a buffer never
 * waits for unrelated work in flight (the core frees a buffer only after
 * every submission that used it completed).
 *
 * Transfers go through pinned staging (cuda_stage.c): a download inside a
 * submission copies device -> staging on the stream and the completion
 * thread copies staging -> the host destination; an upload copies host ->
 * staging at submit and staging -> device on the stream, unless its bytes
 * are in pinned memory the core had lent (mox_buffer_upload's, hal.h):
 * then it copies from there directly. Pageable copies would make the
 * driver block the submitting thread until the stream drains.
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UPLOAD_CHUNK (8u << 20)

mox_status mox__cuda_buffer_alloc(mox__cuda_dev *dev, uint64_t bytes, CUdeviceptr *out)
{
    const mox__cuda_api *api = dev->api;
    mox_status st = mox__cuda_dev_enter(dev);
    if (st != MOX_OK)
        return st;
    CUdeviceptr p = 0;
    CUresult r = api->cuMemAllocAsync(&p, (size_t)bytes, dev->copy_stream);
    if (r != CUDA_SUCCESS) {
        char ctx[96];
        snprintf(ctx, sizeof ctx, "(%llu bytes)", (unsigned long long)bytes);
        return mox__cuda_fail(api, r, "cuMemAllocAsync", ctx);
    }
    r = api->cuMemsetD8Async(p, 0, (size_t)bytes, dev->copy_stream);
    if (r == CUDA_SUCCESS)
        r = api->cuStreamSynchronize(dev->copy_stream);
    if (r != CUDA_SUCCESS) {
        st = mox__cuda_fail(api, r, "cuMemsetD8Async", "(zeroing a new buffer)");
        api->cuMemFree(p);
        return st;
    }
    *out = p;
    return MOX_OK;
}

void mox__cuda_buffer_free(mox__cuda_dev *dev, CUdeviceptr p)
{
    /* Called on any thread - also another device's completion thread, when
     * a copy releases the last reference to its source: the thread's own
     * context is current again afterwards. Fails only on a lost device,
     * where nothing more can be done. */
    CUcontext prev = NULL;
    dev->api->cuCtxGetCurrent(&prev);
    if (dev->api->cuCtxSetCurrent(dev->ctx) == CUDA_SUCCESS)
        dev->api->cuMemFree(p);
    if (prev != dev->ctx)
        dev->api->cuCtxSetCurrent(prev);
}

/* Double-buffered through two pinned chunks of the staging pool and two
 * pooled events, its own: concurrent uploads share nothing but the copy
 * stream, so no lock is held over the driver calls. */
mox_status mox__cuda_buffer_upload(mox__cuda_dev *dev, CUdeviceptr dst, const void *src,
                                   uint64_t bytes)
{
    const mox__cuda_api *api = dev->api;
    mox_status st = mox__cuda_dev_enter(dev);
    void *stage[2] = {NULL, NULL};
    CUevent done[2] = {NULL, NULL};
    size_t chunk = bytes < UPLOAD_CHUNK ? (size_t)bytes : UPLOAD_CHUNK;
    for (int i = 0; i < 2 && st == MOX_OK; i++) {
        st = mox__cuda_stage_get(dev, chunk, &stage[i]);
        if (st == MOX_OK)
            st = mox__cuda_event_get(dev, false, &done[i]);
    }
    CUresult r = CUDA_SUCCESS;
    const char *call = "";
    /* Fill one chunk while the other is on its way. */
    uint64_t off = 0;
    for (uint32_t k = 0; st == MOX_OK && r == CUDA_SUCCESS && off < bytes; k++) {
        uint32_t i = k & 1u;
        size_t n = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
        if (k >= 2) {
            call = "cuEventSynchronize";
            r = api->cuEventSynchronize(done[i]);
            if (r != CUDA_SUCCESS)
                break;
        }
        memcpy(stage[i], (const unsigned char *)src + off, n);
        call = "cuMemcpyHtoDAsync";
        r = api->cuMemcpyHtoDAsync(dst + off, stage[i], n, dev->copy_stream);
        if (r == CUDA_SUCCESS) {
            call = "cuEventRecord";
            r = api->cuEventRecord(done[i], dev->copy_stream);
        }
        off += n;
    }
    if (st == MOX_OK && r == CUDA_SUCCESS) {
        call = "cuStreamSynchronize";
        r = api->cuStreamSynchronize(dev->copy_stream);
    }
    if (st == MOX_OK && r != CUDA_SUCCESS) {
        st = mox__cuda_fail(api, r, call, "(uploading to a buffer)");
        api->cuStreamSynchronize(dev->copy_stream); /* the stages may still be read */
    }
    for (int i = 0; i < 2; i++) {
        if (stage[i])
            mox__cuda_stage_put(dev, stage[i]);
        if (done[i])
            mox__cuda_event_put(dev, false, done[i]);
    }
    return st;
}

static bool push_stage(mox__cuda_group *g, void *stage)
{
    void **n = mox__realloc(g->stages, (g->stage_count + 1) * sizeof *n);
    if (!n)
        return false;
    g->stages = n;
    g->stages[g->stage_count++] = stage;
    return true;
}

mox_status mox__cuda_transfer(mox__cuda_dev *dev, mox__cuda_group *g, const mox__dispatch *d,
                              CUstream stream)
{
    const mox__cuda_api *api = dev->api;
    if (d->bytes == 0)
        return MOX_OK;
    CUdeviceptr addr = (CUdeviceptr)(uintptr_t)d->address + d->offset;
    if (d->kind == MOX__CMD_UPLOAD && d->param_count == 3) {
        /* the bytes are in pinned memory the core had lent (hal.h): no
         * staging; among other nodes, a graph node next time */
        if (d->bytes <= dev->upload_node_max)
            mox__cuda_builtins_preload(dev, g);
        CUresult r = api->cuMemcpyHtoDAsync(addr, d->host, (size_t)d->bytes, stream);
        return r == CUDA_SUCCESS ? MOX_OK
                                 : mox__cuda_fail(api, r, "cuMemcpyHtoDAsync", "(buffer upload)");
    }
    void *stage = NULL;
    mox_status st = mox__cuda_stage_get(dev, (size_t)d->bytes, &stage);
    if (st != MOX_OK)
        return st;
    if (!push_stage(g, stage)) {
        mox__cuda_stage_put(dev, stage);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a transfer");
    }
    CUresult r;
    if (d->kind == MOX__CMD_UPLOAD) {
        memcpy(stage, d->host, (size_t)d->bytes);
        r = api->cuMemcpyHtoDAsync(addr, stage, (size_t)d->bytes, stream);
        return r == CUDA_SUCCESS ? MOX_OK
                                 : mox__cuda_fail(api, r, "cuMemcpyHtoDAsync", "(buffer upload)");
    }
    mox__cuda_copyback *n = mox__realloc(g->copybacks, (g->copyback_count + 1) * sizeof *n);
    if (!n)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a transfer");
    g->copybacks = n;
    g->copybacks[g->copyback_count++] = (mox__cuda_copyback){stage, d->host, (size_t)d->bytes};
    r = api->cuMemcpyDtoHAsync(stage, addr, (size_t)d->bytes, stream);
    return r == CUDA_SUCCESS ? MOX_OK
                             : mox__cuda_fail(api, r, "cuMemcpyDtoHAsync", "(buffer download)");
}
