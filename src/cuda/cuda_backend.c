/* src/cuda/cuda_backend.c - the CUDA backend as the core sees it: the
 * HAL vtable (src/hal/hal.h) over the files of this folder. Entry points
 * turn the backend's per-thread error message (cuda_error.c) into the core's
 * error objects. */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mox__cuda_dev *dev_of(mox__backend *b)
{
    return (mox__cuda_dev *)b;
}

static void be_destroy(mox__backend *b)
{
    mox__cuda_dev_close(dev_of(b));
}

static mox_error *be_buffer_alloc(mox__backend *b, uint64_t bytes, void **handle, void **address)
{
    CUdeviceptr p = 0;
    mox_status st = mox__cuda_buffer_alloc(dev_of(b), bytes, &p);
    if (st != MOX_OK)
        return mox__cuda_last_error(st);
    *handle = (void *)(uintptr_t)p;
    *address = (void *)(uintptr_t)p;
    return NULL;
}

static void be_buffer_free(mox__backend *b, void *handle)
{
    mox__cuda_buffer_free(dev_of(b), (CUdeviceptr)(uintptr_t)handle);
}

static mox_error *be_buffer_upload(mox__backend *b, void *handle, uint64_t offset, const void *src,
                                   uint64_t bytes)
{
    if (bytes == 0)
        return NULL;
    mox_status st =
        mox__cuda_buffer_upload(dev_of(b), (CUdeviceptr)(uintptr_t)handle + offset, src, bytes);
    return st == MOX_OK ? NULL : mox__cuda_last_error(st);
}

static mox_error *be_module_load(mox__backend *b, const mox__module_image *image, void **module)
{
    mox__cuda_module *m = NULL;
    mox_status st = mox__cuda_module_load(dev_of(b), image->bytes, image->size, image->abi, &m);
    if (st != MOX_OK)
        return mox__error_new(st, "loading module %s from %s: %s", image->name, image->dir,
                              mox__cuda_last_message());
    *module = m;
    return NULL;
}

static void be_module_unload(mox__backend *b, void *module)
{
    (void)b;
    mox__cuda_module_unload(module);
}

static void be_execute(mox__backend *b, mox__submission *sub)
{
    mox__cuda_submit(dev_of(b), sub);
}

static void be_flush(mox__backend *b, mox__submission *sub)
{
    mox__cuda_flush(dev_of(b), sub);
}

static bool be_complete_inline(mox__backend *b, mox__submission *sub, const mox__inline_wait *wait)
{
    return mox__cuda_complete_inline(dev_of(b), sub, wait);
}

static void be_set_hold(mox__backend *b, bool hold)
{
    mox__cuda_set_hold(dev_of(b), hold);
}

static mox_error *be_semaphore_init(mox__backend *b, mox__semaphore *sem)
{
    return mox__cuda_sem_init(dev_of(b), sem);
}

static void be_semaphore_fini(mox__backend *b, mox__semaphore *sem)
{
    mox__cuda_sem_fini(dev_of(b), sem);
}

static mox_error *be_peer(mox__backend *b, mox__backend *other, uint32_t *link)
{
    mox_status st = mox__cuda_peer_link(dev_of(b), dev_of(other), link);
    return st == MOX_OK ? NULL : mox__cuda_last_error(st);
}

static void *be_host_alloc(mox__backend *b, size_t bytes, uint64_t *device_address)
{
    return mox__cuda_host_lend(dev_of(b), bytes, device_address);
}

static void be_host_free(mox__backend *b, void *host)
{
    mox__cuda_host_return(dev_of(b), host);
}

/* A thread spinning in mox_op_wait keeps the completion thread awake
 * (cuda_complete.c): a count, read as a hint. */
static void be_watch(mox__backend *b, bool on)
{
    mox__cuda_dev *dev = dev_of(b);
    if (on)
        atomic_fetch_add_explicit(&dev->watchers, 1, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&dev->watchers, 1, memory_order_relaxed);
}

/* A queue's semaphore state lists that stream's launches in flight, for
 * other CUDA devices waiting on its values (cuda_foreign.c); the device's
 * own waits find the launch in its in-flight list (cuda_submit.c). */
static const mox__backend_vtable cuda_vtable = {
    .destroy = be_destroy,
    .buffer_alloc = be_buffer_alloc,
    .buffer_free = be_buffer_free,
    .buffer_upload = be_buffer_upload,
    .module_load = be_module_load,
    .module_unload = be_module_unload,
    .semaphore_init = be_semaphore_init,
    .semaphore_fini = be_semaphore_fini,
    .execute = be_execute,
    .flush = be_flush,
    .complete_inline = be_complete_inline,
    .watch = be_watch,
    .set_hold = be_set_hold,
    .peer = be_peer,
    .host_alloc = be_host_alloc,
    .host_free = be_host_free,
};

bool mox__cuda_is_cuda(const mox__backend *b) { return b && b->vt == &cuda_vtable; }

mox_error *mox__cuda_device_count(uint32_t *count)
{
    *count = 0;
    const mox__cuda_api *api = mox__cuda_api_get(NULL);
    if (!api)
        return NULL; /* no driver: no device */
    int n = 0;
    CUresult r = api->cuDeviceGetCount(&n);
    if (r == CUDA_ERROR_NO_DEVICE)
        return NULL;
    if (r != CUDA_SUCCESS)
        return mox__cuda_last_error(mox__cuda_fail(api, r, "cuDeviceGetCount", NULL));
    *count = n > 0 ? (uint32_t)n : 0u;
    return NULL;
}

mox_error *mox__cuda_backend_open(const mox__backend_config *config, mox__backend **out,
                                  mox__backend_info *info)
{
    int ordinal = 0;
    mox__cuda_dev *dev = NULL;
    mox_status st = mox__cuda_select(config, &ordinal);
    if (st == MOX_OK)
        st = mox__cuda_dev_open(ordinal, &dev);
    if (st != MOX_OK)
        return mox__cuda_last_error(st);
    dev->base.vt = &cuda_vtable;
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", dev->name);
    info->max_block = mox_dim3_make(dev->limits.max_block[0], dev->limits.max_block[1],
                                    dev->limits.max_block[2]);
    info->max_threads_per_block = dev->limits.max_threads;
    info->max_shared_bytes = dev->limits.shared_optin;
    info->max_buffer_bytes = dev->limits.total_mem;
    info->warp_size = dev->limits.warp_size;
    info->features = MOX_FEAT_ATOMICS | MOX_FEAT_WARP_OPS;
    info->module_file = MOX_FILE_FATBIN;
    info->queue_count = MOX__CUDA_STREAMS;
    info->submission_state_size = sizeof(mox__cuda_sub);
    info->dispatch_state_size = sizeof(mox__cuda_dstate);
    info->ordinal = dev->ordinal;
    memcpy(info->uuid, dev->uuid, sizeof info->uuid);
    *out = &dev->base;
    return NULL;
}
