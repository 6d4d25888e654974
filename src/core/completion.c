/* completion.c - a batch's end (A4, A7, A9): failure attribution (which
 * dispatch failed, which were gated and by what original failure), the
 * op's result, the semaphore, the waker and the event fd, then the command
 * slot it frees. */
#include "alloc.h"
#include "error.h"
#include "op.h"
#include "submission.h"
#include "testing.h"
#include "trace.h"

static _Atomic uint64_t order_counter;

uint64_t mox__order_stamp(void) { return atomic_fetch_add(&order_counter, 1) + 1; }

mox__waker_cell *mox__sub_publish(mox__sub *s, const mox_result *r, const mox_result **unused)
{
    s->done_at = mox__order_stamp();
    mox__spin_lock(&s->lock);
    atomic_store_explicit(&s->done, true, memory_order_release);
    mox__waker_cell *w = s->waiter;
    s->waiter = NULL;
    if (w)
        mox__cell_pin(w);
    if (!s->detached) {
        s->result = r;
        r = NULL;
    }
    mox__spin_unlock(&s->lock);
    *unused = r;
    return w;
}

const mox_result *mox__sub_take_result(mox__sub *s, mox__waker_cell *cell)
{
    mox__spin_lock(&s->lock);
    if (!atomic_load_explicit(&s->done, memory_order_relaxed)) {
        s->waiter = cell;
        mox__spin_unlock(&s->lock);
        return NULL;
    }
    const mox_result *r = s->result;
    s->result = NULL;
    s->waiter = NULL;
    s->detached = true;
    mox__spin_unlock(&s->lock);
    return r;
}

void mox__sub_detach(mox__sub *s)
{
    mox__spin_lock(&s->lock);
    const mox_result *r = s->result;
    s->result = NULL;
    s->waiter = NULL;
    s->detached = true;
    mox__spin_unlock(&s->lock);
    if (r)
        mox_result_release(r);
}

/* The first dispatch d waits for that did not end OK: a predecessor in
 * its batch (*in = s) or a gate's dispatch in an earlier batch (*in its
 * batch); NULL when none. */
static mox__dispatch *failed_dependency(mox__sub *s, const mox__dispatch *d, mox__sub **in)
{
    for (uint32_t k = d->pred_first; k < d->pred_first + d->pred_count; k++) {
        mox__dispatch *p = s->d[s->preds[k]];
        if (p->state != MOX_DISPATCH_OK) {
            *in = s;
            return p;
        }
    }
    for (uint32_t g = d->gate_first; g < d->gate_first + d->gate_count; g++) {
        const mox__gate *gate = &s->gates[g];
        mox__sub *gs = mox__sub_of((mox__submission *)gate->sub);
        mox__dispatch *p = gs->d[gate->dispatch];
        if (p->state != MOX_DISPATCH_OK) {
            *in = gs;
            return p;
        }
    }
    return NULL;
}

/* The original failure behind a FAILED or GATED dispatch, computed once
 * and cached in d->cause. A GATED dispatch's cause is that of a failed or
 * gated predecessor in its batch, else of a gate in an earlier batch. The
 * earlier batch may still be completing on another thread (its backend
 * finished, which let this batch run, but its completion is in progress):
 * whoever computes a cause first installs it, the other adopts it. The
 * earlier batch keeps its own gates' batches alive until it installed its
 * causes, so the walk never reaches freed memory. */
static const mox_error *cause_of(mox__sub *s, mox__dispatch *d, const mox_error *device_error)
{
    mox_error *c = atomic_load_explicit(&d->cause, memory_order_acquire);
    if (c)
        return c;
    mox_error *made = NULL;
    if (d->state == MOX_DISPATCH_FAILED) {
        if (device_error)
            made = mox__error_create(mox_error_code(device_error), d->kernel_name, 0, device_error,
                                     "kernel '%s' failed", d->kernel_name);
        else if (d->fault)
            made = mox__error_create(d->fault_status ? (mox_status)d->fault_status
                                                     : MOX_ERR_KERNEL_FAILED,
                                     d->kernel_name, 0, NULL, "kernel '%s' failed: %s",
                                     d->kernel_name, d->fault);
        else
            made = mox__error_create(MOX_ERR_KERNEL_FAILED, d->kernel_name, d->fail_code, NULL,
                                     "kernel '%s' failed: mox_fail(%u)", d->kernel_name,
                                     d->fail_code);
    } else {
        mox__sub *ps = NULL;
        mox__dispatch *p = failed_dependency(s, d, &ps);
        /* an earlier batch's dispatch: that batch's device error, not this one's */
        const mox_error *found = p ? cause_of(ps, p, ps == s ? device_error : NULL) : device_error;
        made = found ? mox__error_ref(found)
                     : mox__error_create(MOX_ERR_BACKEND, d->kernel_name, 0, NULL,
                                         "kernel '%s' did not run (the backend gave no reason)",
                                         d->kernel_name);
    }
    mox_error *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&d->cause, &expected, made, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        mox_error_release(made);
        return expected;
    }
    return made;
}

/* A dispatch that did not run. Gated (MOX_ERR_GATED, "... because work it
 * depends on failed") when a dispatch it depends on failed or was gated.
 * Otherwise nothing it depends on failed: its device was lost, or the
 * backend could not launch it (e.g. MOX_ERR_MODULE_LOAD for a refused
 * kernel module), and it keeps that error's code (the error itself when
 * the backend gave none). A copy or a fill names
 * no kernel: "the copy did not run ...". */
static void gated_error(mox__sub *s, mox__dispatch *d, const mox_error *cause,
                        const mox_error *device_error)
{
    bool lost = mox_error_code(cause) == MOX_ERR_DEVICE_LOST;
    mox__sub *in;
    bool gated = !lost && failed_dependency(s, d, &in) != NULL;
    if (!gated && !lost && cause != device_error) {
        d->error = mox__error_ref(cause); /* "... did not run (the backend gave no reason)" */
        return;
    }
    mox_status code = gated ? MOX_ERR_GATED : mox_error_code(cause);
    unsigned fail_code = gated ? mox_error_fail_code(cause) : 0;
    const char *why = gated ? " because work it depends on failed" : "";
    if (d->kind == MOX__CMD_COPY || d->kind == MOX__CMD_FILL)
        d->error = mox__error_create(code, NULL, fail_code, cause, "the %s did not run%s",
                                     d->kind == MOX__CMD_COPY ? "copy" : "fill", why);
    else
        d->error = mox__error_create(code, d->kernel_name, fail_code, cause,
                                     "kernel '%s' did not run%s", d->kernel_name, why);
}

/* Whether any dispatch did not end OK (then each got its error). */
static bool attribute_failures(mox__sub *s, const mox_error *device_error)
{
    bool failed = false;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        if (d->state == MOX_DISPATCH_OK)
            continue;
        failed = true;
        const mox_error *cause = cause_of(s, d, device_error);
        if (d->state == MOX_DISPATCH_FAILED)
            d->error = mox__error_ref(cause);
        else
            gated_error(s, d, cause, device_error);
    }
    return failed;
}

static const mox_result *build_result(mox__sub *s, bool failed, mox_error *device_error)
{
    for (uint32_t i = 0; failed && i < s->count; i++)
        if (s->d[i]->state != MOX_DISPATCH_OK && s->d[i]->error)
            return mox__result_error(mox__error_ref(s->d[i]->error));
    if (device_error)
        return mox__result_error(mox__error_ref(device_error));
    if (s->yield_count) {
        mox_buffer *bufs[2] = {s->yield_bufs[0], s->yield_bufs[1]};
        s->yield_bufs[0] = s->yield_bufs[1] = NULL;
        return mox__result_args(bufs, s->yield_count);
    }
    if (s->yields_bytes) {
        void *bytes = s->owned_host;
        s->owned_host = NULL;
        return mox__result_bytes(bytes, s->owned_size);
    }
    if (s->yields_args) {
        mox__dispatch *d = s->d[0];
        mox_buffer *bufs[MOX_MAX_PARAMS];
        for (uint32_t a = 0; a < d->arg_count; a++) {
            bufs[a] = d->args[a].buffer;
            if (bufs[a])
                s->ubs[d->args[a].ub].refs--; /* the result has its reference now */
            d->args[a].buffer = NULL;
        }
        return mox__result_args(bufs, d->arg_count);
    }
    return mox__result_ok_shared();
}

/* A device-wide fault: the device reports it from now on, and its
 * semaphores fail so that nothing waiting on them (here or on another
 * device) can hang. */
static void device_lost(mox_device *dev, mox_error *error)
{
    mox__lock(&dev->lock);
    bool first = !dev->lost_error;
    if (first) {
        dev->lost_error = mox__error_ref(error);
        atomic_store(&dev->health, MOX_ERR_DEVICE_LOST);
    }
    mox__unlock(&dev->lock);
    for (uint32_t q = 0; first && q < dev->queue_count; q++)
        mox__semaphore_fail(&dev->sems[q], mox__error_ref(error));
}

/* Whether `error` is the failure of another device's semaphore this
 * execution waited on (that device was lost, not this one: HAL). */
static bool foreign_failure(const mox_device *dev, const mox__submission *pub,
                            const mox_error *error)
{
    for (uint32_t i = 0; i < pub->wait_count; i++)
        if (pub->waits[i].sem->owner != dev->backend &&
            mox__semaphore_failure(pub->waits[i].sem) == error)
            return true;
    return false;
}

/* The command slot goes back; a batch queued for one is admitted. With
 * nothing queued no lock is taken: the slot is given back before the queue
 * is looked at, and a submitter queues before it looks at the slots again
 * (scheduler.c), both sequentially consistent, so one of the two sees the
 * other and no queued batch waits for a slot that is free. */
/* The host memory backends lent to this execution's uploads, given back
 * once the device is done reading it (hal.h). */
static void give_back_lent_host(mox__sub *s)
{
    for (uint32_t i = 0; i < s->count; i++)
        if (s->d[i]->owned_host_be)
            mox__dispatch_host_release(s->d[i]);
}

static void give_back_slot(mox_device *dev)
{
    atomic_fetch_sub(&dev->in_flight, 1);
    if (atomic_load(&dev->queued))
        mox__admit_run(dev);
}

void mox__execution_complete(mox__submission *pub, mox_error *error)
{
    mox__sub *s = mox__sub_of(pub);
    mox_device *dev = s->device;
    mox__testing_complete_point();
    /* Causes first: what waits for this execution may complete as soon as
     * the semaphore moves or fails, and walks into these causes (a copy on
     * another device gated on them could otherwise install one without
     * this execution's device error). */
    bool dispatch_failed = attribute_failures(s, error);
    if (error && mox_error_code(error) == MOX_ERR_DEVICE_LOST && !foreign_failure(dev, pub, error))
        device_lost(dev, error);
    /* The states are final, but executions waiting for this one start only
     * once its op is READY (the semaphore moves after the publication
     * below): whatever resolves after it, its op has resolved first, so a
     * program that waited for a later op finds this one READY. */
    mox__semaphore *sem = pub->signal.sem;
    const uint64_t value = pub->signal.value;
    const mox_result *r = build_result(s, dispatch_failed, error);
    if (mox__trace_on())
        mox__trace_complete(pub, mox_result_status(r)); /* the batch's outcome, as its op resolves */
    mox_error_release(error);

    /* Resources are retained until now and no longer (A8); the earlier
     * submissions we waited for may go too. Host memory a backend lent to
     * uploads goes back first, while its buffers keep the device. */
    if (__builtin_expect(pub->transfer_count != 0, 0))
        give_back_lent_host(s);
    /* Every buffer argument of a recorded dispatch is in the ub table
     * (mox__sub_push), which counts them: one drop per buffer. */
    for (uint32_t u = 0; u < s->nubs; u++)
        if (s->ubs[u].refs)
            mox__buffer_unref_n(s->ubs[u].buffer, s->ubs[u].refs);
    s->args_released = true; /* the dispatches' references are gone (mox__sub_unref) */
    for (int i = 0; i < 2; i++) {
        mox__buffer_unref(s->yield_bufs[i]); /* still here when the op failed */
        s->yield_bufs[i] = NULL;
    }
    for (uint32_t i = 0; i < s->nwaits; i++)
        mox__sub_unref(s->waits[i]);
    s->nwaits = 0;
    s->pub.wait_count = 0;

    /* A copy's source device was needed only to prepare it; its buffer
     * (released above) kept it alive until now. */
    mox__device_unref(s->other);
    s->other = NULL;

    give_back_slot(dev);

    /* Our device reference goes before the op turns READY: a user who
     * waits (or spins on the op), then releases everything, frees the
     * device on their own thread rather than leaving the last reference to
     * this runtime thread. */
    s->device = NULL;
    bool kept = mox__device_unref_early(dev);
    const mox_result *unused = NULL;
    mox__waker_cell *w = mox__sub_publish(s, r, &unused);
    /* `s` may be gone from here on (its op dropped); the semaphore is the
     * device's, which stays until mox__device_finish. */
    mox__semaphore_signal(sem, value);
    /* Signal the event fd only now that `done` is visible: an event loop
     * that wakes on it must find the op READY when it polls. */
    mox__device_notify(dev);
    mox__device_finish(dev, kept);
    /* A dropped op's result: its buffers may hold the device's last
     * references, so only now. */
    mox_result_release(unused);
    if (w) {
        mox__cell_wake(w);
        mox__cell_unpin(w);
    }
    mox__sub_unref(s);
}
