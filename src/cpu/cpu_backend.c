/* cpu_backend.c - the CPU backend: host memory as device memory, modules
 * loaded from verified bytes (memfd + dlopen of /proc/self/fd/N, never the
 * artifact path again), executions held while the core asks (set_hold),
 * and the vtable. Running an execution on the thread pool is cpu_exec.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "hal/hal.h"
#include "cpu_backend_module.h"
#include "cpu_device.h"
#include "cpu_exec.h"
#include "fiber.h"

static void cpu_execute(mox__backend *base, mox__submission *s)
{
    cpu_backend *be = (cpu_backend *)base;
    mox__cpu_exec_prepare(be, s);
    cpu_sub *cs = sub_state(s);
    mox__lock(&be->lock);
    if (be->hold) {
        cs->next = NULL;
        if (be->held_tail)
            be->held_tail->next = cs;
        else
            be->held_head = cs;
        be->held_tail = cs;
        mox__unlock(&be->lock);
        return;
    }
    mox__unlock(&be->lock);
    mox__cpu_exec_admit(be, cs);
}

static void cpu_set_hold(mox__backend *base, bool hold)
{
    cpu_backend *be = (cpu_backend *)base;
    mox__lock(&be->lock);
    be->hold = hold;
    cpu_sub *held = hold ? NULL : be->held_head;
    if (!hold)
        be->held_head = be->held_tail = NULL;
    mox__unlock(&be->lock);
    /* In execute order; whatever may start goes through mox__cpu_exec_admit, which never
     * completes inline. */
    while (held) {
        cpu_sub *cs = held;
        held = cs->next;
        cs->next = NULL;
        mox__cpu_exec_admit(be, cs);
    }
}

/* ---------------- memory and modules ---------------- */

static mox_error *cpu_buffer_alloc(mox__backend *base, uint64_t bytes, void **handle,
                                   void **address)
{
    (void)base;
    size_t rounded = (size_t)((bytes + 63u) & ~(uint64_t)63u);
    void *p = NULL;
    if (posix_memalign(&p, 64, rounded) != 0 || !p)
        return mox__error_new(MOX_ERR_ALLOCATION_FAILED,
                              "failed to allocate %llu bytes of CPU device memory",
                              (unsigned long long)bytes);
    memset(p, 0, rounded);
    *handle = p;
    *address = p;
    return NULL;
}

static void cpu_buffer_free(mox__backend *base, void *handle)
{
    (void)base;
    mox__free(handle);
}

static mox_error *cpu_buffer_upload(mox__backend *base, void *handle, uint64_t offset,
                                    const void *src, uint64_t bytes)
{
    (void)base;
    memcpy((unsigned char *)handle + offset, src, bytes);
    return NULL;
}

static mox_error *cpu_module_load(mox__backend *base, const mox__module_image *image,
                                  void **module)
{
    (void)base;
    mox_error *error = NULL;
    if (mox__cpu_module_load(image, (mox__cpu_module **)module, &error) != MOX_OK && !error)
        error = mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s' from %s: the CPU code does not load",
                               image->name, image->dir);
    return error;
}

static void cpu_module_unload(mox__backend *base, void *module)
{
    (void)base;
    mox__cpu_module_unload(module);
}

static void cpu_destroy(mox__backend *base)
{
    cpu_backend *be = (cpu_backend *)base;
    mox__pool_destroy(be->pool);
    mox__mutex_destroy(&be->lock);
    mox__free(be);
}

static mox_error *cpu_peer(mox__backend *base, mox__backend *other, uint32_t *link)
{
    *link = ((cpu_backend *)base)->ordinal == ((cpu_backend *)other)->ordinal ? MOX__PEER_SAME
                                                                              : MOX__PEER_HOST;
    return NULL;
}

static const mox__backend_vtable cpu_vtable = {
    .destroy = cpu_destroy,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_upload = cpu_buffer_upload,
    .module_load = cpu_module_load,
    .module_unload = cpu_module_unload,
    .semaphore_init = NULL, /* host waiters need no backend state */
    .semaphore_fini = NULL,
    .execute = cpu_execute,
    .flush = NULL,          /* nothing is held back */
    .complete_inline = NULL, /* completion is already on the worker that finished */
    .set_hold = cpu_set_hold,
    .peer = cpu_peer,
};

/* Queues: enough that independent executions rarely share one (a queue
 * runs its executions one after the other). */
#define CPU_QUEUES 16u

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return UINT64_C(1) << 32;
    return (uint64_t)pages * (uint64_t)size;
}

mox_error *mox__cpu_backend_open(const mox__backend_config *config, mox__backend **out,
                                 mox__backend_info *info)
{
    char why[160];
    if (!mox__cpu_executor_setting_valid(why, sizeof why) || /* block_exec.h */
        !mox__fiber_stack_setting_valid(why, sizeof why))    /* fiber.h */
        return mox__error_new(MOX_ERR_CONFIG, "%s", why);
    uint32_t ordinal = 0;
    mox_error *err = mox__cpu_device_select(config, &ordinal);
    if (err)
        return err;
    cpu_backend *be = mox__calloc(1, sizeof *be);
    if (!be)
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory opening the CPU backend");
    be->ordinal = ordinal;
    int rc;
    be->pool = mox__pool_create(config->cpu_threads, &rc);
    if (!be->pool) {
        mox__free(be);
        if (rc == ENOMEM)
            return mox__error_new(MOX_ERR_OUT_OF_MEMORY,
                                  "out of memory starting the CPU backend's worker threads");
        return mox__error_new(MOX_ERR_BACKEND, "cannot start the CPU backend's worker threads: %s",
                              strerror(rc));
    }
    mox__mutex_init(&be->lock);
    be->base.vt = &cpu_vtable;
    memset(info, 0, sizeof *info);
    mox__cpu_device_name(ordinal, mox__pool_threads(be->pool), info->name, sizeof info->name);
    info->ordinal = ordinal;
    mox__cpu_device_uuid(ordinal, info->uuid);
    /* CUDA's limits, so that a launch valid here is valid on a GPU. */
    info->max_block = mox_dim3_make(1024, 1024, 64);
    info->max_threads_per_block = MOX__CPU_MAX_BLOCK_THREADS;
    info->max_shared_bytes = MOX__CPU_MAX_DYNAMIC_SHARED;
    info->max_buffer_bytes = physical_memory();
    info->warp_size = 32;
    info->features = MOX_FEAT_ATOMICS | MOX_FEAT_WARP_OPS;
    info->module_file = MOX_FILE_CPU_SO;
    info->queue_count = CPU_QUEUES;
    info->submission_state_size = sizeof(cpu_sub);
    info->dispatch_state_size = sizeof(cpu_disp);
    *out = &be->base;
    return NULL;
}
