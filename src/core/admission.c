/* admission.c - the admission queue (A3): a batch that finds no free
 * command slot, or batches queued before it, waits in its device's FIFO
 * queue; the completion that frees a slot prepares the head. A batch
 * whose kernel's module is still being prepared at its first poll waits
 * in the same queue (`modules_pending`): the preparation worker runs the
 * queue again once the module is loaded. The queue's order is the
 * cross-batch order (A6). A copy between two devices touches
 * both orders, so it waits in both devices' queues (in its source's as a
 * placeholder): it is prepared once it is the head of both and its own
 * device has a slot - nothing queued before it on either device is
 * overtaken, nothing queued after it overtakes it. Both devices' locks are
 * taken then, lower id first (scheduler.c mox__lock_pair). Every copy is
 * appended to both queues under both locks, so two copies are in the same
 * order in every queue they share: the earliest is at both heads first,
 * and no two wait for each other. */
#include "alloc.h"
#include "error.h"
#include "op.h"
#include "submission.h"

/* A batch's link in `dev`'s queue: its source's queue holds a copy by
 * admit_next_other. */
static mox__sub **link_in(mox__sub *s, const mox_device *dev)
{
    return s->other == dev ? &s->admit_next_other : &s->admit_next;
}

static void append(mox_device *dev, mox__sub *s)
{
    *link_in(s, dev) = NULL;
    if (dev->admit_tail)
        *link_in(dev->admit_tail, dev) = s;
    else
        dev->admit_head = s;
    dev->admit_tail = s;
    atomic_fetch_add(&dev->queued, 1);
}

static void unlink_from(mox_device *dev, mox__sub *s)
{
    mox__sub *prev = NULL;
    mox__sub **p = &dev->admit_head;
    while (*p != s) {
        prev = *p;
        p = link_in(*p, dev);
    }
    *p = *link_in(s, dev);
    if (dev->admit_tail == s)
        dev->admit_tail = prev;
    *link_in(s, dev) = NULL;
    atomic_fetch_sub(&dev->queued, 1);
}

bool mox__admit_needed_locked(mox_device *dev, const mox__sub *s)
{
    if (atomic_load(&dev->health) != MOX_OK)
        return false; /* preparation fails at once */
    return s->modules_pending || dev->in_flight >= dev->capacity || dev->admit_head ||
           (s->other && s->other->admit_head);
}

/* Whether the batch's kernels have their modules now (the dispatches then
 * hold the handles; a module nobody asked for yet is requested). False
 * while one is still being prepared - the preparation worker runs the
 * queue again when it is done (worker.c) - or when one failed: *failed, a
 * reference. Device lock held. */
static bool modules_loaded_locked(mox_device *dev, mox__sub *s, mox_error **failed)
{
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        if (d->kind != MOX__CMD_KERNEL || d->module)
            continue;
        mox__devmod *dm = d->devmod;
        int st = atomic_load_explicit(&dm->state, memory_order_acquire);
        if (st == MOX__MOD_NONE)
            mox__devmod_request(dev, dm);
        if (st == MOX__MOD_FAILED)
            *failed = mox__error_ref(dm->error);
        if (st != MOX__MOD_READY)
            return false;
        d->module = dm->handle;
    }
    s->modules_pending = false;
    return true;
}

void mox__admit_enqueue_locked(mox_device *dev, mox__sub *s)
{
    s->queued = true;
    if (!s->queued_at)
        s->queued_at = mox__order_stamp();
    s->home = dev;
    mox__sub_ref(s); /* the queue's */
    append(dev, s);
    if (s->other)
        append(s->other, s);
}

/* Prepares `s`, taken out of the queues, onto the issue lists; a failure
 * goes onto *failed for resolving once the locks are released. */
static void admit_one(mox_device *dev, mox__sub *s, mox__sub ***failed_tail, bool *drain,
                      bool *drain_other)
{
    s->queued = false;
    s->admit_next = s->admit_next_other = NULL;
    mox_error *err = mox__sub_prepare_locked(dev, s);
    if (mox__issue_staged_locked(s))
        *drain_other = true;
    if (err) {
        s->queue_error = err;
        **failed_tail = s;
        *failed_tail = &s->admit_next;
    } else {
        *drain |= mox__issue_locked(dev, s);
        mox__sub_unref(s); /* the queue's: the backend holds its own now */
    }
}

/* Takes `s`, whose module failed, out of the queue onto *failed. */
static void fail_head(mox_device *dev, mox__sub *s, mox_error *err, mox__sub ***failed_tail)
{
    unlink_from(dev, s);
    s->queued = false;
    s->admit_next = s->admit_next_other = NULL;
    s->queue_error = err;
    **failed_tail = s;
    *failed_tail = &s->admit_next;
}

/* Single-device heads while slots are free; stops at a copy between
 * devices (*cross) and at a batch whose module is still being prepared
 * (nothing overtakes it). Device lock held. */
static mox__sub *admit_locked(mox_device *dev, mox__sub *failed, bool *drain, bool *cross)
{
    mox__sub **tail = &failed;
    while (*tail)
        tail = &(*tail)->admit_next;
    while (dev->admit_head && dev->in_flight < dev->capacity) {
        mox__sub *s = dev->admit_head;
        if (s->other) {
            *cross = true;
            break;
        }
        mox_error *module_error = NULL;
        if (s->modules_pending && atomic_load(&dev->health) == MOX_OK &&
            !modules_loaded_locked(dev, s, &module_error)) {
            if (!module_error)
                break;
            fail_head(dev, s, module_error, &tail);
            continue;
        }
        unlink_from(dev, s);
        bool unused = false;
        admit_one(dev, s, &tail, drain, &unused);
    }
    return failed;
}

mox__sub *mox__admit_queued_locked(mox_device *dev, bool *drain, bool *cross)
{
    return admit_locked(dev, NULL, drain, cross);
}

/* Resolves a batch that never reached the backend with `error`: the same
 * hand-over as a completion (result, done, event fd, waker). */
static void resolve_unsubmitted(mox_device *dev, mox__sub *s, mox_error *error)
{
    const mox_result *unused = NULL;
    mox__waker_cell *w = mox__sub_publish(s, mox__result_error(error), &unused);
    mox__device_notify(dev);
    mox_result_release(unused);
    if (w) {
        mox__cell_wake(w);
        mox__cell_unpin(w);
    }
}

void mox__resolve_failed_admissions(mox__sub *failed)
{
    while (failed) {
        mox__sub *s = failed;
        failed = s->admit_next;
        s->admit_next = NULL;
        mox_error *err = s->queue_error;
        s->queue_error = NULL;
        resolve_unsubmitted(s->home, s, err);
        mox__sub_unref(s); /* the queue's */
    }
}

/* What one attempt at a copy at the head of a queue leaves to do. */
typedef struct cross_step {
    mox_device *home, *other;  /* referenced */
    bool admitted;
    bool home_cross, other_cross; /* their queues stopped at a copy again */
} cross_step;

/* Admits the copy at the head of dev's queue if it heads its other queue
 * too and its device has a slot, then what follows it in both queues. */
static void try_cross(mox_device *dev, cross_step *st)
{
    mox__lock(&dev->lock);
    mox__sub *h = dev->admit_head;
    if (!h || !h->other) {
        mox__unlock(&dev->lock);
        return;
    }
    st->home = mox__device_ref(h->home);
    st->other = mox__device_ref(h->other);
    mox__sub_ref(h); /* it may be dropped from the queues meanwhile */
    mox__unlock(&dev->lock);

    mox__lock_pair(st->home, st->other);
    mox__sub *failed = NULL, **tail = &failed;
    bool drain_home = false, drain_other = false;
    if (h->queued && st->home->admit_head == h && st->other->admit_head == h &&
        st->home->in_flight < st->home->capacity) {
        unlink_from(st->home, h);
        unlink_from(st->other, h);
        admit_one(st->home, h, &tail, &drain_home, &drain_other);
        st->admitted = true;
        failed = admit_locked(st->home, failed, &drain_home, &st->home_cross);
        failed = admit_locked(st->other, failed, &drain_other, &st->other_cross);
    }
    mox__unlock_pair(st->home, st->other);
    mox__resolve_failed_admissions(failed);
    /* A staged copy's download (on other) is handed over before the
     * upload that waits for it. */
    if (drain_other)
        mox__issue_drain(st->other);
    if (drain_home)
        mox__issue_drain(st->home);
    mox__sub_unref(h);
}

/* Devices still to look at, referenced; few distinct ones. */
#define CROSS_WORK 16

static void push_work(mox_device **work, uint32_t *n, mox_device *dev)
{
    for (uint32_t i = 0; i < *n; i++)
        if (work[i] == dev) {
            mox__device_unref(dev);
            return;
        }
    if (*n < CROSS_WORK) {
        work[(*n)++] = dev;
        return;
    }
    mox__admit_cross(dev); /* more distinct devices than fit: look now */
    mox__device_unref(dev);
}

void mox__admit_cross(mox_device *dev)
{
    mox_device *work[CROSS_WORK];
    uint32_t n = 0;
    work[n++] = mox__device_ref(dev);
    while (n) {
        mox_device *d = work[--n];
        cross_step st = {NULL, NULL, false, false, false};
        try_cross(d, &st);
        mox__device_unref(d);
        if (st.admitted && st.home_cross)
            push_work(work, &n, mox__device_ref(st.home));
        if (st.admitted && st.other_cross)
            push_work(work, &n, mox__device_ref(st.other));
        mox__device_unref(st.home);
        mox__device_unref(st.other);
    }
}

void mox__admit_run(mox_device *dev)
{
    bool drain = false, cross = false;
    mox__lock(&dev->lock);
    mox__sub *failed = admit_locked(dev, NULL, &drain, &cross);
    mox__unlock(&dev->lock);
    mox__resolve_failed_admissions(failed);
    if (drain)
        mox__issue_drain(dev);
    if (cross)
        mox__admit_cross(dev);
}

bool mox__sub_dequeue(mox_device *dev, mox__sub *s)
{
    /* s->other is read only while `s` is queued (admission, which comes
     * before its completion releases it, needs this lock). */
    mox__lock(&dev->lock);
    if (!s->queued) {
        mox__unlock(&dev->lock);
        return false;
    }
    mox_device *other = s->other ? mox__device_ref(s->other) : NULL;
    if (other) {
        mox__unlock(&dev->lock);
        mox__lock_pair(dev, other);
    }
    bool was_queued = s->queued; /* it may have been admitted meanwhile */
    if (was_queued) {
        unlink_from(dev, s);
        if (other)
            unlink_from(other, s);
        s->queued = false;
    }
    mox__unlock_pair(dev, other);
    if (was_queued) {
        mox__sub_unref(s); /* the queue's; the caller still holds its own */
        /* What waited behind it (a copy at the other queue's head, or the
         * batches behind such a copy) may go now. */
        mox__admit_run(dev);
        if (other)
            mox__admit_run(other);
    }
    mox__device_unref(other);
    return was_queued;
}
