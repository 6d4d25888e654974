/* scheduler.c - from a polled batch to the backend: command capacity (A3:
 * a batch that finds no free slot waits in the device's FIFO admission
 * queue, admission.c, and is submitted by the completion that frees one),
 * preparation under the device lock - both devices' locks, by id, for a
 * copy between devices (prepare.c: order, queue, wait list) - then the
 * issue list, which hands executions to the backend in serial order with
 * no lock held. Completion is in completion.c. */
#include <sched.h>

#include "alloc.h"
#include "error.h"
#include "op.h"
#include "submission.h"
#include "trace.h"

bool mox__issue_locked(mox_device *dev, mox__sub *s)
{
    s->issue_next = NULL;
    if (dev->issue_tail)
        dev->issue_tail->issue_next = s;
    else
        dev->issue_head = s;
    dev->issue_tail = s;
    /* Appended before it is counted: a drainer that sees the count takes
     * the lock, this one's, to pop, and so finds it. */
    return atomic_fetch_add_explicit(&dev->issue_pending, 1, memory_order_acq_rel) == 0;
}

/* A point of another device's semaphore must have been handed to that
 * device's execute before this execution is (the HAL's promise: a backend
 * finds the launch that signals it). It was prepared before, so it is on
 * that device's issue list or being executed by the thread draining it:
 * a short wait, and never for this thread (a thread drains the source's
 * list before the destination's, scheduler.c). */
static void wait_foreign_issued(const mox_device *dev, const mox__submission *pub)
{
    for (uint32_t i = 0; i < pub->wait_count; i++) {
        mox__semaphore *sem = pub->waits[i].sem;
        if (sem->owner == dev->backend)
            continue;
        while (atomic_load_explicit(&sem->issued, memory_order_acquire) < pub->waits[i].value &&
               !mox__semaphore_failure(sem))
            sched_yield();
    }
}

/* The head of the issue list, taken off it by the draining thread (the
 * count says it is there). Device lock held. */
static mox__sub *issue_pop_locked(mox_device *dev)
{
    mox__sub *s = dev->issue_head;
    dev->issue_head = s->issue_next;
    if (!dev->issue_head)
        dev->issue_tail = NULL;
    s->issue_next = NULL;
    return s;
}

/* Hands `s` (popped by the draining thread) and then the rest of the list
 * to the backend, each with no lock held; the lock is taken again only when
 * more was appended meanwhile. */
static void issue_drain_from(mox_device *dev, mox__sub *s)
{
    for (;;) {
        wait_foreign_issued(dev, &s->pub);
        /* `s` may complete (and go) as soon as the backend has it. */
        mox__sem_point signal = s->pub.signal;
        if (mox__trace_on())
            mox__trace_submit(&s->pub);
        dev->backend->vt->execute(dev->backend, &s->pub);
        atomic_store_explicit(&signal.sem->issued, signal.value, memory_order_release);
        if (atomic_fetch_sub_explicit(&dev->issue_pending, 1, memory_order_acq_rel) == 1)
            return;
        mox__lock(&dev->lock);
        s = issue_pop_locked(dev);
        mox__unlock(&dev->lock);
    }
}

void mox__issue_drain(mox_device *dev)
{
    mox__lock(&dev->lock);
    mox__sub *s = issue_pop_locked(dev);
    mox__unlock(&dev->lock);
    issue_drain_from(dev, s);
}

void mox__lock_pair(mox_device *a, mox_device *b)
{
    if (!b || b == a) {
        mox__lock(&a->lock);
        return;
    }
    mox_device *first = a->id < b->id ? a : b;
    mox__lock(&first->lock);
    mox__lock(first == a ? &b->lock : &a->lock);
}

void mox__unlock_pair(mox_device *a, mox_device *b)
{
    if (b && b != a)
        mox__unlock(&b->lock);
    mox__unlock(&a->lock);
}

mox_device *mox__issue_staged_locked(mox__sub *s)
{
    if (!s->staged || !s->staged->submitted)
        return NULL;
    return mox__issue_locked(s->other, s->staged) ? s->other : NULL;
}

mox__submit_result mox__sub_submit(mox_device *dev, mox__sub *s, mox__waker_cell *cell,
                                   mox_error **error)
{
    /* The waiter is set before the batch can complete (it may complete on
     * another thread as soon as the backend has it, or be submitted from
     * the admission queue by a completing batch). Nobody else sees `s` yet. */
    s->waiter = cell;
    mox__lock_pair(dev, s->other);
    if (mox__admit_needed_locked(dev, s)) {
        /* No slot, or batches queued before this one: wait in line. The
         * runtime submits it when a slot frees - no further poll is needed,
         * and its waker is called once, when the batch completes. */
        mox__admit_enqueue_locked(dev, s);
        /* A completion that gave a slot back meanwhile may have seen the
         * queue empty (it looks without the lock): the slots are looked at
         * again now that the batch is counted. */
        bool drain = false, cross = false;
        mox__sub *failed = mox__admit_queued_locked(dev, &drain, &cross);
        mox__unlock_pair(dev, s->other);
        mox__resolve_failed_admissions(failed);
        if (drain)
            mox__issue_drain(dev);
        if (cross)
            mox__admit_cross(dev);
        *error = NULL;
        return MOX__SUBMIT_QUEUED;
    }
    *error = mox__sub_prepare_locked(dev, s);
    bool drain = !*error && mox__issue_locked(dev, s);
    /* This thread drains: the list's head goes out without taking the
     * lock once more (the list may hold earlier batches, and the count
     * keeps anyone else from draining meanwhile). */
    mox__sub *first = drain ? issue_pop_locked(dev) : NULL;
    mox_device *drain_other = mox__issue_staged_locked(s);
    mox__unlock_pair(dev, s->other);
    if (*error)
        s->waiter = NULL;
    if (drain_other)
        mox__issue_drain(drain_other);
    if (drain)
        issue_drain_from(dev, first);
    return MOX__SUBMIT_DONE;
}

