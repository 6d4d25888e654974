/* scheduler.c - submitting recorded batches and completing them.
 *
 * Submission (under the device's submission lock): command capacity (A3:
 * a batch that finds no free slot waits in the device's FIFO admission
 * queue and is submitted by the completion that frees one), cross-batch
 * order from the buffers' trackers (A6: waits on unfinished earlier
 * submissions, gates on their unfinished writers, A9), then the backend. Completion (on a backend thread): failure attribution - which
 * dispatch failed, which were gated and by what original failure - the
 * op's result, wakeups, capacity. */
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "op.h"
#include "submission.h"

static bool grow_waits(mox__sub *s)
{
    if (s->nwaits < s->cap_waits)
        return true;
    uint32_t ncap = s->cap_waits * 2;
    mox__sub **n = mox__malloc(ncap * sizeof *n);
    if (!n)
        return false;
    memcpy(n, s->waits, s->nwaits * sizeof *n);
    if (s->waits != s->waits_inline)
        mox__free(s->waits);
    s->waits = n;
    s->cap_waits = ncap;
    return true;
}

typedef struct wait_ctx {
    mox__sub *sub;
    bool oom;
} wait_ctx;

static void add_wait(void *p, mox__sub *earlier)
{
    wait_ctx *c = p;
    mox__sub *s = c->sub;
    for (uint32_t i = 0; i < s->nwaits; i++)
        if (s->waits[i] == earlier)
            return;
    if (!grow_waits(s)) {
        c->oom = true;
        return;
    }
    s->waits[s->nwaits++] = mox__sub_ref(earlier);
}

/* Per dispatch: the unfinished earlier writers of buffers it touches before
 * the batch itself writes them (later accesses depend on that in-batch
 * writer, which inherits the gate). */
static bool build_gates(mox__sub *s)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        if (d->kind != MOX__CMD_KERNEL)
            continue;
        for (uint32_t a = 0; a < d->arg_count; a++) {
            const mox__karg *k = &d->args[a];
            if (!k->buffer)
                continue;
            const mox__ub *ub = &s->ubs[k->ub];
            if (ub->ext_writer.sub && (ub->first_write < 0 || i <= (uint32_t)ub->first_write))
                total++;
        }
    }
    if (!total)
        return true;
    s->gates = mox__malloc(total * sizeof *s->gates);
    if (!s->gates)
        return false;
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        d->gate_first = n;
        if (d->kind == MOX__CMD_KERNEL) {
            for (uint32_t a = 0; a < d->arg_count; a++) {
                const mox__karg *k = &d->args[a];
                if (!k->buffer)
                    continue;
                const mox__ub *ub = &s->ubs[k->ub];
                if (!ub->ext_writer.sub || (ub->first_write >= 0 && i > (uint32_t)ub->first_write))
                    continue;
                bool dup = false;
                for (uint32_t g = d->gate_first; g < n; g++)
                    dup |= s->gates[g].sub == ub->ext_writer.sub &&
                           s->gates[g].dispatch == ub->ext_writer.dispatch;
                if (!dup)
                    s->gates[n++] = ub->ext_writer;
            }
        }
        d->gate_count = n - d->gate_first;
    }
    s->pub.gates = s->gates;
    return true;
}

static bool build_succs(mox__sub *s)
{
    if (!s->npreds)
        return true;
    if (s->npreds > 4 && !(s->succs = mox__malloc(s->npreds * sizeof *s->succs))) {
        s->succs = s->succs_inline;
        return false;
    }
    for (uint32_t i = 0; i < s->count; i++)
        s->d[i]->succ_count = 0;
    for (uint32_t k = 0; k < s->npreds; k++)
        s->d[s->preds[k]]->succ_count++;
    uint32_t at = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        s->d[i]->succ_first = at;
        at += s->d[i]->succ_count;
        s->d[i]->succ_count = 0;
    }
    for (uint32_t i = 0; i < s->count; i++) {
        const mox__dispatch *d = s->d[i];
        for (uint32_t k = d->pred_first; k < d->pred_first + d->pred_count; k++) {
            mox__dispatch *p = s->d[s->preds[k]];
            s->succs[p->succ_first + p->succ_count++] = i;
        }
    }
    s->pub.succs = s->succs;
    return true;
}

static void undo_prepare(mox__sub *s)
{
    for (uint32_t i = 0; i < s->nwaits; i++)
        mox__sub_unref(s->waits[i]);
    s->nwaits = 0;
    for (uint32_t u = 0; u < s->nubs; u++)
        s->ubs[u].ext_writer = (mox__gate){NULL, 0};
    mox__free(s->gates);
    s->gates = NULL;
    s->pub.gates = NULL;
    if (s->succs != s->succs_inline)
        mox__free(s->succs);
    s->succs = s->succs_inline;
}

/* Everything that can fail before any tracker changes, then the trackers,
 * then the backend. Device lock held; a slot is free. NULL on success, else
 * the error (nothing submitted, nothing changed). */
static mox_error *submit_locked(mox_device *dev, mox__sub *s)
{
    if (atomic_load(&dev->health) != MOX_OK)
        return mox__error_create(MOX_ERR_DEVICE_LOST, NULL, 0, dev->lost_error,
                                 "the device was lost; reopen it");
    wait_ctx wc = {s, false};
    for (uint32_t u = 0; u < s->nubs && !wc.oom; u++) {
        mox__ub *ub = &s->ubs[u];
        mox__tracker *t = &ub->buffer->tracker;
        bool writes = ub->last_write >= 0;
        mox__tracker_deps(t, writes, add_wait, &wc);
        const mox__access *w = mox__tracker_writer(t);
        ub->ext_writer = w ? (mox__gate){&w->sub->pub, w->dispatch} : (mox__gate){NULL, 0};
        if (!writes && !mox__tracker_reserve(t))
            wc.oom = true;
    }
    if (wc.oom || !build_gates(s) || !build_succs(s)) {
        undo_prepare(s);
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory submitting a batch");
    }
    /* mox__sub starts with its mox__submission: same pointer values. */
    s->pub.waits = (mox__submission *const *)(void *)s->waits;
    s->pub.wait_count = s->nwaits;

    for (uint32_t u = 0; u < s->nubs; u++) {
        mox__ub *ub = &s->ubs[u];
        bool writes = ub->last_write >= 0;
        mox__tracker_record(&ub->buffer->tracker, s, writes, writes ? (uint32_t)ub->last_write : 0);
    }
    dev->in_flight++;
    s->pub.serial = ++dev->serial;
    atomic_fetch_add(&dev->submissions, 1);
    s->device = mox__device_ref(dev);
    s->submitted = true;
    mox__sub_ref(s); /* the backend's, dropped at the end of completion */
    dev->backend->vt->submit(dev->backend, &s->pub);
    return NULL;
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
    *error = submit_locked(dev, s);
    mox__unlock(&dev->lock);
    if (*error)
        s->waiter = NULL;
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

/* Submits queued batches while slots are free, in queue order. Device lock
 * held. Batches that cannot be submitted (device lost, out of memory) are
 * returned as a list, each with its error in queue_error, for the caller to
 * resolve once the lock is released. */
static mox__sub *admit_queued_locked(mox_device *dev)
{
    mox__sub *failed = NULL, **tail = &failed;
    while (dev->admit_head && dev->in_flight < dev->capacity) {
        mox__sub *s = dev->admit_head;
        dev->admit_head = s->admit_next;
        if (!dev->admit_head)
            dev->admit_tail = NULL;
        s->queued = false;
        s->admit_next = NULL;
        mox_error *err = submit_locked(dev, s);
        if (err) {
            s->queue_error = err;
            *tail = s;
            tail = &s->admit_next;
        } else {
            mox__sub_unref(s); /* the queue's: the backend holds its own now */
        }
    }
    return failed;
}

static void resolve_failed_admissions(mox_device *dev, mox__sub *failed)
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

const mox_result *mox__sub_take_result(mox__sub *s, mox__waker_cell *cell)
{
    mox__lock(&s->lock);
    if (!atomic_load_explicit(&s->done, memory_order_relaxed)) {
        s->waiter = cell;
        mox__unlock(&s->lock);
        return NULL;
    }
    const mox_result *r = s->result;
    s->result = NULL;
    s->waiter = NULL;
    s->detached = true;
    mox__unlock(&s->lock);
    return r;
}

void mox__sub_detach(mox__sub *s)
{
    mox__lock(&s->lock);
    const mox_result *r = s->result;
    s->result = NULL;
    s->waiter = NULL;
    s->detached = true;
    mox__unlock(&s->lock);
    if (r)
        mox_result_release(r);
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
        const mox_error *found = NULL;
        for (uint32_t k = d->pred_first; !found && k < d->pred_first + d->pred_count; k++) {
            mox__dispatch *p = s->d[s->preds[k]];
            if (p->state != MOX_DISPATCH_OK)
                found = cause_of(s, p, device_error);
        }
        for (uint32_t g = d->gate_first; !found && g < d->gate_first + d->gate_count; g++) {
            const mox__gate *gate = &s->gates[g];
            mox__sub *gs = mox__sub_of((mox__submission *)gate->sub);
            mox__dispatch *p = gs->d[gate->dispatch];
            if (p->state != MOX_DISPATCH_OK)
                found = cause_of(gs, p, NULL);
        }
        if (!found)
            found = device_error;
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

static void attribute_failures(mox__sub *s, const mox_error *device_error)
{
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        if (d->state == MOX_DISPATCH_OK)
            continue;
        const mox_error *cause = cause_of(s, d, device_error);
        if (d->state == MOX_DISPATCH_FAILED)
            d->error = mox__error_ref(cause);
        else if (mox_error_code(cause) == MOX_ERR_DEVICE_LOST)
            d->error = mox__error_create(MOX_ERR_DEVICE_LOST, d->kernel_name, 0, cause,
                                         "kernel '%s' did not run", d->kernel_name);
        else
            d->error = mox__error_create(MOX_ERR_GATED, d->kernel_name, mox_error_fail_code(cause),
                                         cause,
                                         "kernel '%s' did not run because work it depends on failed",
                                         d->kernel_name);
    }
}

static const mox_result *build_result(mox__sub *s, mox_error *device_error)
{
    for (uint32_t i = 0; i < s->count; i++)
        if (s->d[i]->state != MOX_DISPATCH_OK && s->d[i]->error)
            return mox__result_error(mox__error_ref(s->d[i]->error));
    if (device_error)
        return mox__result_error(mox__error_ref(device_error));
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
            d->args[a].buffer = NULL;
        }
        return mox__result_args(bufs, d->arg_count);
    }
    return mox__result_ok_shared();
}

void mox__submission_complete(mox__submission *pub, mox_status status, mox_error *error)
{
    mox__sub *s = mox__sub_of(pub);
    mox_device *dev = s->device;
    if (status != MOX_OK) {
        if (!error)
            error = mox__error_new(status, "the backend failed the batch");
        mox__lock(&dev->lock);
        if (mox_error_code(error) == MOX_ERR_DEVICE_LOST && !dev->lost_error) {
            dev->lost_error = mox__error_ref(error);
            atomic_store(&dev->health, MOX_ERR_DEVICE_LOST);
        }
        mox__unlock(&dev->lock);
    } else if (error) {
        mox_error_release(error);
        error = NULL;
    }
    attribute_failures(s, error);
    const mox_result *r = build_result(s, error);
    mox_error_release(error);

    /* Resources are retained until now and no longer (A8); the earlier
     * submissions we waited for may go too. */
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        for (uint32_t a = 0; a < d->arg_count; a++) {
            mox_buffer_release(d->args[a].buffer);
            d->args[a].buffer = NULL;
        }
    }
    for (uint32_t i = 0; i < s->nwaits; i++)
        mox__sub_unref(s->waits[i]);
    s->nwaits = 0;
    s->pub.wait_count = 0;

    mox__lock(&dev->lock);
    dev->in_flight--;
    mox__sub *failed = admit_queued_locked(dev);
    mox__unlock(&dev->lock);
    resolve_failed_admissions(dev, failed);

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
    /* Signal the event fd only now that `done` is visible: an event loop
     * that wakes on it must find the op READY when it polls. */
    mox__device_notify(dev);
    /* Drop our device reference before waking the waiter: a user who waits,
     * then releases everything, then frees the device on their own thread
     * rather than leaving the last reference to this runtime thread. */
    s->device = NULL;
    mox__device_unref(dev);
    if (w) {
        mox__cell_wake(w);
        mox__cell_unpin(w);
    }
    mox__sub_unref(s);
}
