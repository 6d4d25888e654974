/* device.h - the device object: one scheduling context (backend, submission
 * lock, command capacity, access trackers' lock, module table, preparation
 * worker, event fd). Refcounted by users, buffers, ops and in-flight
 * submissions, so dropping the last user reference never blocks: in-flight
 * work keeps the internals alive. */
#ifndef MOX_CORE_DEVICE_H
#define MOX_CORE_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>

#include <mox/device.h>

#include "hal/hal.h"
#include "semaphore.h"
#include "sync.h"

typedef struct mox__modinfo mox__modinfo;

/* mox_op_wait watches a batch on a device whose backend can complete it
 * inline (CUDA) for up to this long before it sleeps: like the CUDA
 * runtime's default spin wait, the waiter sees the end itself instead of
 * waiting for two thread wake-ups (docs/async.md "How mox_op_wait waits"). */
#define MOX__WAIT_SPIN_US 5000u

/* Module preparation state per (device, module). */
enum { MOX__MOD_NONE = 0, MOX__MOD_QUEUED = 1, MOX__MOD_READY = 2, MOX__MOD_FAILED = 3 };

struct mox__devmod {
    const mox__modinfo *info;
    _Atomic int state;         /* MOX__MOD_*; READY/FAILED set under the device lock */
    void *handle;              /* backend module, READY */
    mox_error *error;          /* FAILED; device lock (a retry replaces it) */
    bool transient;            /* FAILED for lack of memory: a first use retries; device lock */
    mox__wait_list waiters;    /* ops waiting for preparation; device lock */
    mox__devmod *next;         /* device's module list; device lock */
    mox__devmod *queue_next;   /* worker queue; worker lock */
};

struct mox_device {
    uint32_t magic;            /* MOX__MAGIC_DEVICE while live (debug_check.h) */
    _Atomic unsigned refs;
    /* Completions that gave their reference back but still notify the
     * event fd (mox__device_unref_early); destroy() waits for none. */
    _Atomic unsigned finishing;
    uint64_t id;               /* process-unique context id */
    mox_backend kind;
    mox__backend *backend;
    mox__backend_info info;
    _Atomic int event_fd;      /* -1 until mox_device_event_fd is first called */

    /* The submission lock: capacity, trackers, queues, module table and the
     * wait lists below. Never held while calling the backend: executions
     * leave through the issue list, in the order the trackers saw. */
    mox__mutex lock;
    uint32_t capacity;
    /* Taken under the lock; given back by a completion without it when
     * nothing is queued (`queued`, read then: admission.c). */
    _Atomic uint32_t in_flight;
    uint64_t serial;
    /* Batches waiting for a command slot, in submission order (FIFO):
     * linked through mox__sub.admit_next; each holds a reference.
     * `queued` counts them (written under the lock). */
    struct mox__sub *admit_head, *admit_tail;
    _Atomic uint32_t queued;
    /* Prepared executions not yet handed to the backend, in serial order.
     * `issue_pending` counts those appended and not yet executed: whoever
     * takes it from 0 drains the list with no lock held, and stops, with
     * no lock either, when it brings it back to 0 (scheduler.c). */
    struct mox__sub *issue_head, *issue_tail;
    _Atomic uint32_t issue_pending;
    /* Queues: one semaphore each, the last value handed out, the next
     * queue for work that waits on nothing. */
    uint32_t queue_count;
    mox__semaphore *sems;
    uint64_t *queue_values;
    uint32_t next_queue;
    mox__devmod *modules;
    mox_error *lost_error;     /* set once, when the device is lost */
    _Atomic int health;        /* MOX_OK or MOX_ERR_DEVICE_LOST */
    _Atomic uint64_t submissions;

    /* Preparation worker (rule A3: first-use module loading off the
     * polling thread). */
    pthread_t worker;
    bool worker_running;
    pthread_mutex_t worker_lock; /* with worker_cond: a pthread mutex */
    pthread_cond_t worker_cond;
    mox__devmod *queue_head, *queue_tail;
    bool worker_stop;
    uint32_t prepare_delay_ms; /* MOX_DEBUG_PREPARE_DELAY_MS */
    /* How long mox_op_wait watches a device batch before it sleeps
     * (MOX_WAIT_SPIN_US, default MOX__WAIT_SPIN_US; docs/async.md). */
    uint64_t wait_spin_ns;
};

/* Inline: ops, submissions and launches take and drop a reference each
 * per dispatch; only the last drop calls out (mox__device_destroy_last). */
static inline mox_device *mox__device_ref(mox_device *device)
{
    atomic_fetch_add_explicit(&device->refs, 1, memory_order_relaxed);
    return device;
}
/* Destroys a device whose last reference was just dropped. */
void mox__device_destroy_last(mox_device *device);
static inline void mox__device_unref(mox_device *device)
{
    if (device && atomic_fetch_sub_explicit(&device->refs, 1, memory_order_acq_rel) == 1)
        mox__device_destroy_last(device);
}
/* A completion's reference, given back before its op turns READY, so that
 * a user who waits and then releases everything drops the last reference
 * on their own thread: mox_device_release then joins the device's threads
 * before it returns (docs/async.md, "Ownership"). The device stays usable
 * for mox__device_notify until mox__device_finish: destroy() waits for
 * every such completion. When the reference is the last one it is kept
 * (true), and mox__device_finish drops it. */
static inline bool mox__device_unref_early(mox_device *device)
{
    atomic_fetch_add_explicit(&device->finishing, 1, memory_order_relaxed);
    unsigned n = atomic_load_explicit(&device->refs, memory_order_relaxed);
    while (n > 1)
        if (atomic_compare_exchange_weak_explicit(&device->refs, &n, n - 1, memory_order_acq_rel,
                                                  memory_order_relaxed))
            return false;
    atomic_fetch_sub_explicit(&device->finishing, 1, memory_order_release);
    return true;
}
static inline void mox__device_finish(mox_device *device, bool kept)
{
    if (kept)
        mox__device_unref(device);
    else
        atomic_fetch_sub_explicit(&device->finishing, 1, memory_order_release);
}
/* Writes the event fd: some op of this device may have progressed. */
void mox__device_notify(mox_device *device);

/* Module table (module.c / worker.c). */
/* Finds or creates the device's entry for a module. NULL on out of memory. */
mox__devmod *mox__devmod_get(mox_device *device, const mox__modinfo *info);
/* Queues preparation; the device lock must be held and state == NONE. */
void mox__devmod_request(mox_device *device, mox__devmod *dm);
/* Puts a module whose preparation failed for lack of memory back to NONE,
 * so that this first use prepares it again; device lock held. */
void mox__devmod_retry_locked(mox__devmod *dm);
/* The FAILED module's error (a reference), read under the device lock. */
mox_error *mox__devmod_error(mox_device *device, mox__devmod *dm);
mox_status mox__worker_start(mox_device *device);
void mox__worker_stop(mox_device *device);
void mox__devmods_free(mox_device *device);

#endif
