/* device.c - opening devices (backend selection), refcounting, limits, the
 * event fd. Destruction happens when the last reference goes, which may be
 * on a runtime thread (a completion dropping the last in-flight reference);
 * then a short-lived detached thread does it, since a runtime thread cannot
 * join itself. */
#include "device.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "alloc.h"
#include "artifact/sha256.h"
#include "debug_check.h"
#include "enumerate.h"
#include "error.h"
#include "trace.h"

static _Atomic uint64_t next_context_id = 1;
static _Thread_local bool on_runtime_thread;

void mox__thread_mark_runtime(const char *name)
{
    on_runtime_thread = true;
    pthread_setname_np(pthread_self(), name); /* cosmetic: a failure changes nothing */
}

/* A whole number in `name` (unset or empty: `fallback`), at most `max`. */
static mox_status parse_uint_env(const char *name, const char *unit, unsigned long max,
                                 uint32_t fallback, uint32_t *out)
{
    const char *v = getenv(name);
    *out = fallback;
    if (!v || !*v || mox__parse_setting_uint(v, max, out))
        return MOX_OK;
    return mox__raise(MOX_ERR_CONFIG, "%s must be a number of %s (0 to %lu), not '%s'", name, unit,
                      max, v);
}

static mox_status open_backend(mox_backend which, const mox__backend_config *cfg, mox_device *dev)
{
    if (which == MOX_BACKEND_CUDA || which == MOX_BACKEND_AUTO) {
        mox_error *err = mox__cuda_backend_open
                             ? mox__cuda_backend_open(cfg, &dev->backend, &dev->info)
                             : mox__error_new(MOX_ERR_DEVICE_UNAVAILABLE,
                                              "the CUDA backend is not built into this libmox");
        if (!err) {
            dev->kind = MOX_BACKEND_CUDA;
            return MOX_OK;
        }
        if (which == MOX_BACKEND_CUDA || mox_error_code(err) != MOX_ERR_DEVICE_UNAVAILABLE)
            return mox__set_last(err);
        mox_error_release(err);
    }
    if (!mox__cpu_backend_open)
        return mox__raise(MOX_ERR_DEVICE_UNAVAILABLE, "the CPU backend is not built into this libmox");
    mox_error *err = mox__cpu_backend_open(cfg, &dev->backend, &dev->info);
    if (err)
        return mox__set_last(err);
    dev->kind = MOX_BACKEND_CPU;
    return MOX_OK;
}

static void queues_free(mox_device *dev, uint32_t count)
{
    for (uint32_t q = 0; q < count; q++) {
        if (dev->backend->vt->semaphore_fini)
            dev->backend->vt->semaphore_fini(dev->backend, &dev->sems[q]);
        mox__semaphore_fini(&dev->sems[q]);
    }
    mox__free(dev->sems);
    mox__free(dev->queue_values);
    dev->sems = NULL;
    dev->queue_values = NULL;
}

/* One timeline semaphore per queue of the backend. */
static mox_status queues_create(mox_device *dev)
{
    uint32_t n = dev->info.queue_count ? dev->info.queue_count : 1;
    dev->sems = mox__calloc(n, sizeof *dev->sems);
    dev->queue_values = mox__calloc(n, sizeof *dev->queue_values);
    if (!dev->sems || !dev->queue_values) {
        mox__free(dev->sems);
        mox__free(dev->queue_values);
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory opening a device");
    }
    for (uint32_t q = 0; q < n; q++) {
        mox__semaphore_init(&dev->sems[q], dev->backend, q);
        mox_error *err = dev->backend->vt->semaphore_init
                             ? dev->backend->vt->semaphore_init(dev->backend, &dev->sems[q])
                             : NULL;
        if (err) {
            mox__semaphore_fini(&dev->sems[q]);
            queues_free(dev, q);
            return mox__set_last(err);
        }
    }
    dev->queue_count = n;
    return MOX_OK;
}

mox_status mox_device_open(mox_device **out) { return mox_device_open_with(NULL, out); }

mox_status mox_device_open_with(const mox_device_options *options, mox_device **out)
{
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_open: out is NULL");
    *out = NULL;
    mox_device_options opts = {.backend = MOX_BACKEND_AUTO};
    if (options)
        opts = *options;
    if ((unsigned)opts.backend > MOX_BACKEND_CUDA)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_open: unknown backend %d",
                         (int)opts.backend);
    mox_backend which = opts.backend;
    mox_status st;
    if (which == MOX_BACKEND_AUTO && (st = mox__backend_from_env(&which)) != MOX_OK)
        return st;
    mox__backend_config cfg = {.cpu_threads = opts.cpu_threads};
    char uuid[37];
    if ((st = mox__selection_config(&opts, &cfg, uuid)) != MOX_OK)
        return st;
    uint32_t delay, spin_us;
    if ((st = parse_uint_env("MOX_DEBUG_PREPARE_DELAY_MS", "milliseconds", 600000, 0, &delay)) !=
        MOX_OK)
        return st;
    if ((st = parse_uint_env("MOX_WAIT_SPIN_US", "microseconds", 60000000, MOX__WAIT_SPIN_US,
                             &spin_us)) != MOX_OK)
        return st;
    if ((st = mox__trace_env_start()) != MOX_OK)
        return st;

    /* libcrypto's one-time set-up, now rather than amid user work (sha256.h). */
    if (!mox_sha256_init())
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory initialising libcrypto's SHA-256");
    mox_device *dev = mox__calloc(1, sizeof *dev);
    if (!dev)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory opening a device");
    atomic_init(&dev->refs, 1);
    dev->magic = MOX__MAGIC_DEVICE;
    dev->id = atomic_fetch_add(&next_context_id, 1);
    dev->capacity = opts.command_capacity ? opts.command_capacity : 64;
    dev->prepare_delay_ms = delay;
    dev->wait_spin_ns = 1000ull * spin_us;
    atomic_init(&dev->health, MOX_OK);
    atomic_init(&dev->submissions, 0);
    atomic_init(&dev->event_fd, -1); /* created on first request */
    atomic_init(&dev->finishing, 0);
    mox__mutex_init(&dev->lock);
    pthread_mutex_init(&dev->worker_lock, NULL);
    pthread_cond_init(&dev->worker_cond, NULL);

    cfg.context_id = dev->id;
    if ((st = open_backend(which, &cfg, dev)) != MOX_OK)
        goto fail;
    if ((st = queues_create(dev)) != MOX_OK) {
        dev->backend->vt->destroy(dev->backend);
        goto fail;
    }
    if ((st = mox__worker_start(dev)) != MOX_OK) {
        queues_free(dev, dev->queue_count);
        dev->backend->vt->destroy(dev->backend);
        goto fail;
    }
    *out = dev;
    return MOX_OK;
fail:
    MOX__KILL(dev);
    pthread_cond_destroy(&dev->worker_cond);
    pthread_mutex_destroy(&dev->worker_lock);
    mox__mutex_destroy(&dev->lock);
    mox__free(dev);
    return st;
}

static void destroy(mox_device *dev)
{
    /* A completion that gave its reference back early may still be
     * writing the event fd: a few instructions away. */
    while (atomic_load_explicit(&dev->finishing, memory_order_acquire) != 0)
        sched_yield();
    mox__worker_stop(dev);
    mox__devmods_free(dev);
    queues_free(dev, dev->queue_count);
    dev->backend->vt->destroy(dev->backend);
    mox_error_release(dev->lost_error);
    pthread_cond_destroy(&dev->worker_cond);
    pthread_mutex_destroy(&dev->worker_lock);
    mox__mutex_destroy(&dev->lock);
    int fd = atomic_load(&dev->event_fd);
    if (fd >= 0)
        close(fd);
    MOX__KILL(dev);
    mox__free(dev);
}

static void *reaper(void *p)
{
    pthread_setname_np(pthread_self(), "mox-reaper");
    destroy(p);
    return NULL;
}

void mox__device_destroy_last(mox_device *device)
{
    if (on_runtime_thread) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, reaper, device);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            return;
        /* Cannot spawn: leak the device rather than deadlock joining ourselves. */
        return;
    }
    destroy(device);
}

mox_device *mox_device_retain(mox_device *device)
{
    MOX__CHECK(device, DEVICE);
    return device ? mox__device_ref(device) : NULL;
}

void mox_device_release(mox_device *device)
{
    MOX__CHECK(device, DEVICE);
    mox__device_unref(device);
}

mox_backend mox_device_backend(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->kind : MOX_BACKEND_AUTO;
}
const char *mox_device_name(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.name : "";
}
mox_dim3 mox_device_max_block(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.max_block : mox_dim3_make(0, 0, 0);
}
uint32_t mox_device_max_threads_per_block(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.max_threads_per_block : 0;
}
uint64_t mox_device_max_buffer_bytes(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.max_buffer_bytes : 0;
}
uint32_t mox_device_warp_size(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.warp_size : 0;
}
uint32_t mox_device_max_shared_bytes(const mox_device *d)
{
    return MOX__CHECK(d, DEVICE), d ? d->info.max_shared_bytes : 0;
}
int mox_device_event_fd(mox_device *d)
{
    MOX__CHECK(d, DEVICE);
    if (!d) {
        mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_event_fd: device is NULL");
        return -1;
    }
    int fd = atomic_load(&d->event_fd);
    if (fd >= 0)
        return fd;
    /* Created on first request, so devices nobody watches pay no write per
     * completion. Readable at once: whatever happened before the caller
     * had the fd, they should poll their ops. */
    int made = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
    if (made < 0) {
        mox__raise(MOX_ERR_BACKEND, "eventfd failed: %s", strerror(errno));
        return -1;
    }
    int expected = -1;
    if (!atomic_compare_exchange_strong(&d->event_fd, &expected, made)) {
        close(made);
        return expected;
    }
    return made;
}

uint64_t mox_device_submission_count(const mox_device *d)
{
    MOX__CHECK(d, DEVICE);
    return d ? atomic_load(&((mox_device *)d)->submissions) : 0;
}

mox_status mox_device_health(const mox_device *d)
{
    MOX__CHECK(d, DEVICE);
    if (!d)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_health: device is NULL");
    return (mox_status)atomic_load(&((mox_device *)d)->health);
}

void mox__device_notify(mox_device *device)
{
    int fd = atomic_load_explicit(&device->event_fd, memory_order_acquire);
    if (fd < 0)
        return;
    uint64_t one = 1;
    /* EAGAIN (counter saturated) still leaves the fd readable. */
    ssize_t n = write(fd, &one, sizeof one);
    (void)n;
}
