/* scheduler.c - from a polled batch to the backend: command capacity (A3:
 * a batch that finds no free slot waits in the device's FIFO admission
 * queue and is submitted by the completion that frees one), preparation
 * under the device lock (prepare.c: order, queue, wait list), then the
 * issue list, which hands executions to the backend in serial order with
 * no lock held. Completion is in completion.c. */
#include "alloc.h"
#include "error.h"
#include "op.h"
#include "submission.h"

/* Appends a prepared batch to the issue list. Device lock held. Returns
 * true when the caller must drain it (nobody is draining). */
static bool issue_locked(mox_device *dev, mox__sub *s)
{
    s->issue_next = NULL;
    if (dev->issue_tail)
        dev->issue_tail->issue_next = s;
    else
        dev->issue_head = s;
    dev->issue_tail = s;
    if (dev->issuing)
        return false;
    dev->issuing = true;
    return true;
}

void mox__issue_drain(mox_device *dev)
{
    mox__lock(&dev->lock);
    for (;;) {
        mox__sub *s = dev->issue_head;
        if (!s) {
            dev->issuing = false;
            break;
        }
        dev->issue_head = s->issue_next;
        if (!dev->issue_head)
            dev->issue_tail = NULL;
        s->issue_next = NULL;
        mox__unlock(&dev->lock);
        /* `s` may complete (and go) as soon as the backend has it. */
        dev->backend->vt->execute(dev->backend, &s->pub);
        mox__lock(&dev->lock);
    }
    mox__unlock(&dev->lock);
}

mox__submit_result mox__sub_submit(mox_device *dev, mox__sub *s, mox__waker_cell *cell,
                                   mox_error **error)
{
    /* The waiter is set before the batch can complete (it may complete on
     * another thread as soon as the backend has it, or be submitted from
     * the admission queue by a completing batch). Nobody else sees `s` yet. */
    s->waiter = cell;
    mox__lock(&dev->lock);
    if (atomic_load(&dev->health) == MOX_OK &&
        (dev->in_flight >= dev->capacity || dev->admit_head)) {
        /* No slot, or batches queued before this one: wait in line. The
         * runtime submits it when a slot frees - no further poll is needed,
         * and its waker is called once, when the batch completes. */
        s->queued = true;
        s->admit_next = NULL;
        mox__sub_ref(s); /* the queue's */
        if (dev->admit_tail)
            dev->admit_tail->admit_next = s;
        else
            dev->admit_head = s;
        dev->admit_tail = s;
        mox__unlock(&dev->lock);
        *error = NULL;
        return MOX__SUBMIT_QUEUED;
    }
    *error = mox__sub_prepare_locked(dev, s);
    bool drain = !*error && issue_locked(dev, s);
    mox__unlock(&dev->lock);
    if (*error)
        s->waiter = NULL;
    if (drain)
        mox__issue_drain(dev);
    return MOX__SUBMIT_DONE;
}

bool mox__sub_dequeue(mox_device *dev, mox__sub *s)
{
    mox__lock(&dev->lock);
    bool was_queued = s->queued;
    if (was_queued) {
        mox__sub **p = &dev->admit_head;
        mox__sub *prev = NULL;
        while (*p != s) {
            prev = *p;
            p = &(*p)->admit_next;
        }
        *p = s->admit_next;
        if (dev->admit_tail == s)
            dev->admit_tail = prev;
        s->queued = false;
        s->admit_next = NULL;
    }
    mox__unlock(&dev->lock);
    if (was_queued)
        mox__sub_unref(s); /* the queue's; the caller still holds its own */
    return was_queued;
}

/* Resolves a batch that never reached the backend with `error`: the same
 * hand-over as a completion (result, done, event fd, waker). */
static void resolve_unsubmitted(mox_device *dev, mox__sub *s, mox_error *error)
{
    const mox_result *r = mox__result_error(error);
    mox__lock(&s->lock);
    atomic_store_explicit(&s->done, true, memory_order_release);
    mox__waker_cell *w = s->waiter;
    s->waiter = NULL;
    if (w)
        mox__cell_pin(w);
    if (!s->detached) {
        s->result = r;
        r = NULL;
    }
    mox__unlock(&s->lock);
    if (r)
        mox_result_release(r);
    mox__device_notify(dev);
    if (w) {
        mox__cell_wake(w);
        mox__cell_unpin(w);
    }
}

/* Prepares queued batches while slots are free, in queue order, onto the
 * issue list (*drain: the caller must drain it). Device lock held. Batches
 * that cannot be submitted (device lost, out of memory) are returned as a
 * list, each with its error in queue_error, for the caller to resolve once
 * the lock is released. */
mox__sub *mox__admit_queued_locked(mox_device *dev, bool *drain)
{
    mox__sub *failed = NULL, **tail = &failed;
    while (dev->admit_head && dev->in_flight < dev->capacity) {
        mox__sub *s = dev->admit_head;
        dev->admit_head = s->admit_next;
        if (!dev->admit_head)
            dev->admit_tail = NULL;
        s->queued = false;
        s->admit_next = NULL;
        mox_error *err = mox__sub_prepare_locked(dev, s);
        if (err) {
            s->queue_error = err;
            *tail = s;
            tail = &s->admit_next;
        } else {
            *drain |= issue_locked(dev, s);
            mox__sub_unref(s); /* the queue's: the backend holds its own now */
        }
    }
    return failed;
}

void mox__resolve_failed_admissions(mox_device *dev, mox__sub *failed)
{
    while (failed) {
        mox__sub *s = failed;
        failed = s->admit_next;
        s->admit_next = NULL;
        mox_error *err = s->queue_error;
        s->queue_error = NULL;
        resolve_unsubmitted(dev, s, err);
        mox__sub_unref(s); /* the queue's */
    }
}

