/* src/cuda/cuda_foreign.c - points and gates of other devices
 * (docs/multi-device.md, docs/backends.md "Several devices").
 *
 * Another CUDA device's points and dispatches are found through its queue
 * semaphores' states (cuda_sem.c), never its own lists:
 *   - a wait on another device's point becomes cuStreamWaitEvent on the
 *     event of the launch that signals it (events may be waited on from
 *     another context): the device waits, no host thread decides;
 *   - a gate on another device's dispatch that may still fail copies that
 *     dispatch's status word into the gated node's own slot first (a peer
 *     copy), holding the owner's instance (foreign_readers) so that its
 *     words are not reset until the copy ran.
 * A point with no launch yet (the owner holds it back) or of another
 * backend cannot be waited for on the device: its execution is held, with
 * everything later on this device (what was held back before it goes out:
 * the point may wait for it), until host waiters see it reached (the
 * one host-decided order: rare, and copies between backends are staged
 * through the host anyway). A launch that waited for other devices'
 * points completes after them (the core reads their states), woken by
 * waiters on their semaphores. */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* A host waiter of a launch on another device's point. */
struct mox__cuda_fwait {
    mox__sem_waiter w;
    mox__cuda_group *g;
    mox__cuda_dev *dev;
    bool fired;                       /* dev->lock */
};
typedef struct mox__cuda_fwait mox__cuda_fwait;

static bool foreign(const mox__cuda_dev *dev, const mox__sem_point *pt)
{
    return pt->sem->owner != &dev->base;
}

static bool settled_on_host(const mox__sem_point *pt)
{
    return mox__semaphore_reached(pt->sem, pt->value) || mox__semaphore_failure(pt->sem);
}

static mox__cuda_sem *cuda_state(const mox__sem_point *pt)
{
    return mox__cuda_is_cuda(pt->sem->owner) ? pt->sem->be : NULL;
}

void mox__cuda_foreign_flush(mox__cuda_dev *dev, const mox__submission *pub)
{
    for (uint32_t i = 0; i < pub->wait_count; i++) {
        const mox__sem_point *pt = &pub->waits[i];
        mox__cuda_sem *st = foreign(dev, pt) && !settled_on_host(pt) ? cuda_state(pt) : NULL;
        if (!st)
            continue;
        mox__cuda_dev *owner = mox__cuda_sem_owner(st);
        CUcontext prev = NULL;
        owner->api->cuCtxGetCurrent(&prev);
        mox__lock(&owner->lock);
        /* A request of the owner's launcher: run here when it is idle, else
         * by the thread launching there (then this point may still have no
         * launch when it is looked at, and the host waits instead). */
        if (!owner->hold && mox__cuda_pending_covers(owner, pt->sem->queue, pt->value)) {
            owner->flush_mask |= 1u << pt->sem->queue;
            mox__cuda_launcher_enter(owner);
        }
        mox__unlock(&owner->lock);
        owner->api->cuCtxSetCurrent(prev);
    }
}

/* ---- executions held for another device's point ---- */

static void point_reached(void *ctx)
{
    mox__cuda_sub *me = ctx;
    mox__cuda_dev *dev = me->dev;
    /* The process's driver table, not the device's: once the lock is given
     * back, `me` may launch and complete, and the device be closed and
     * freed (TSan saw dev->api read after mox__cuda_dev_close freed it). */
    const mox__cuda_api *api = dev->api;
    CUcontext prev = NULL;
    api->cuCtxGetCurrent(&prev);
    mox__lock(&dev->lock);
    if (--me->fwaits_left == 0) {
        if (me->fwaiters != me->fwaiters_inline)
            free(me->fwaiters);
        me->fwaiters = NULL;
        me->blocked = false;
        dev->blocked--;
        /* What waited behind it goes, up to the next blocked execution:
         * also while others are blocked, since what it held back may be
         * what their points wait for on the other device. */
        mox__cuda_release_held(dev);
    }
    mox__unlock(&dev->lock); /* `me`, and `dev`, may be gone from here */
    api->cuCtxSetCurrent(prev);
}

/* Whether point `pt` of another device can be waited for on the device. */
static bool waitable_on_device(const mox__sem_point *pt)
{
    mox__cuda_sem *st = cuda_state(pt);
    if (!st)
        return false; /* another backend: the host waits */
    return mox__cuda_sem_point(st, pt->value, NULL) != MOX__CUDA_PT_UNKNOWN;
}

/* Registers a host waiter of `me` on `pt` (the k-th of its points). */
static void hold_for(mox__cuda_sub *me, uint32_t k, const mox__sem_point *pt)
{
    mox__sem_waiter *w = &me->fwaiters[k];
    w->fn = point_reached;
    w->ctx = me;
    w->value = pt->value;
    if (!mox__semaphore_wait_async(pt->sem, w))
        me->fwaits_left--;
}

/* The points of other devices `pub` must see reached on the host before it
 * launches, at most `max`; registered for `me` unless it is NULL (counted
 * only). Its waits that no device can wait for yet, and the executions of
 * other devices' deferred dispatches its gates name (MOX_KFEAT_GATE_DEFERRED):
 * such a dispatch may leave its status word OK behind a failed dependency,
 * so mirroring that one word would let the gated copy run; once its
 * execution completed its derived state is final (cuda_gates.c carries a
 * deferred dispatch's slots to readers on its own device only). Rare: a
 * copy across devices of what a deferred kernel wrote. */
static uint32_t host_points(const mox__cuda_dev *dev, const mox__submission *pub, mox__cuda_sub *me,
                            uint32_t max)
{
    uint32_t n = 0;
    bool other_device = false;
    for (uint32_t i = 0; i < pub->wait_count && n < max; i++) {
        const mox__sem_point *pt = &pub->waits[i];
        other_device |= foreign(dev, pt);
        if (!foreign(dev, pt) || settled_on_host(pt) || waitable_on_device(pt))
            continue;
        if (me)
            hold_for(me, n, pt);
        n++;
    }
    /* A gate on another device's dispatch comes with a wait on its point:
     * without one there is no such gate to look for. */
    for (uint32_t i = 0; other_device && i < pub->count && n < max; i++) {
        const mox__dispatch *d = pub->dispatches[i];
        for (uint32_t k = 0; k < d->gate_count && n < max; k++) {
            const mox__gate *gate = &pub->gates[d->gate_first + k];
            const mox__sem_point *pt = &gate->sub->signal;
            if (!foreign(dev, pt) || settled_on_host(pt) ||
                !(gate->sub->dispatches[gate->dispatch]->kernel_features & MOX_KFEAT_GATE_DEFERRED))
                continue;
            if (me)
                hold_for(me, n, pt);
            n++;
        }
    }
    return n;
}

bool mox__cuda_foreign_block(mox__cuda_dev *dev, mox__cuda_sub *me)
{
    const mox__submission *pub = me->pub;
    uint32_t n = host_points(dev, pub, NULL, UINT32_MAX);
    if (n == 0)
        return false;
    me->dev = dev;
    me->fwaiters = n <= 2 ? me->fwaiters_inline : mox__cuda_xrealloc(NULL, n * sizeof *me->fwaiters);
    me->fwaits_left = n + 1; /* + 1 while registering (dev->lock is held meanwhile) */
    me->blocked = true;
    dev->blocked++;
    uint32_t k = host_points(dev, pub, me, n);
    me->fwaits_left -= n - k; /* points reached, or made waitable, meanwhile */
    if (--me->fwaits_left > 0)
        return true;
    if (me->fwaiters != me->fwaiters_inline)
        free(me->fwaiters);
    me->fwaiters = NULL;
    me->blocked = false;
    dev->blocked--;
    return false;
}

/* ---- a launch waiting for other devices ---- */

static void fired(void *ctx)
{
    mox__cuda_fwait *fw = ctx;
    mox__cuda_dev *dev = fw->dev;
    mox__lock(&dev->lock);
    fw->fired = true; /* the group may complete and go once the lock is released */
    if (dev->waiting)
        mox__cond_signal(&dev->work_cv);
    mox__unlock(&dev->lock);
}

void mox__cuda_foreign_collect(mox__cuda_dev *dev, mox__cuda_group *g)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < g->nsubs; s++)
        for (uint32_t i = 0; i < g->subs[s]->wait_count; i++)
            n += foreign(dev, &g->subs[s]->waits[i]) && !settled_on_host(&g->subs[s]->waits[i]);
    if (n == 0)
        return;
    g->foreign = mox__cuda_xrealloc(NULL, n * sizeof *g->foreign);
    mox__cuda_fwait *fw = mox__cuda_xrealloc(NULL, n * sizeof *fw);
    memset(fw, 0, n * sizeof *fw);
    g->foreign_waiters = fw;
    uint32_t k = 0;
    for (uint32_t s = 0; s < g->nsubs; s++)
        for (uint32_t i = 0; i < g->subs[s]->wait_count && k < n; i++) {
            const mox__sem_point *pt = &g->subs[s]->waits[i];
            if (!foreign(dev, pt) || settled_on_host(pt))
                continue;
            g->foreign[k] = *pt;
            fw[k] = (mox__cuda_fwait){{fired, &fw[k], pt->value, NULL}, g, dev, false};
            /* dev->lock is held: a waiter firing elsewhere waits for it. */
            if (!mox__semaphore_wait_async(pt->sem, &fw[k].w))
                fw[k].fired = true;
            k++;
        }
    g->foreign_count = k; /* fewer when some were reached meanwhile */
}

bool mox__cuda_foreign_ready(const mox__cuda_group *g)
{
    const mox__cuda_fwait *fw = g->foreign_waiters;
    for (uint32_t i = 0; i < g->foreign_count; i++)
        if (!fw[i].fired)
            return false;
    return true;
}

mox_error *mox__cuda_foreign_failure(const mox__cuda_group *g)
{
    for (uint32_t i = 0; i < g->foreign_count; i++) {
        const mox__sem_point *pt = &g->foreign[i];
        if (!mox__semaphore_reached(pt->sem, pt->value) && mox__semaphore_failure(pt->sem))
            return mox__semaphore_failure(pt->sem);
    }
    return NULL;
}

mox_status mox__cuda_foreign_events(mox__cuda_dev *dev, const mox__submission *pub,
                                    mox__cuda_fevents *out)
{
    for (uint32_t i = 0; i < pub->wait_count; i++) {
        const mox__sem_point *pt = &pub->waits[i];
        if (!foreign(dev, pt) || settled_on_host(pt))
            continue;
        mox__cuda_sem *st = cuda_state(pt);
        if (!st)
            return mox__cuda_error(MOX_ERR_BACKEND, "a point of another backend was not reached "
                                                    "when the execution waiting for it launched");
        CUevent event = NULL;
        mox__cuda_pt s = mox__cuda_sem_point(st, pt->value, &event);
        if (s == MOX__CUDA_PT_UNKNOWN)
            return mox__cuda_error(MOX_ERR_BACKEND,
                                   "a point of another CUDA device had no launch when the "
                                   "execution waiting for it launched");
        if (s != MOX__CUDA_PT_LIVE)
            continue; /* finished, or failed to launch: nothing to wait for on the device */
        if (out->n == out->cap) {
            out->cap = out->cap ? 2u * out->cap : 4u;
            out->v = mox__cuda_xrealloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = (mox__cuda_fevent){st, event};
    }
    return MOX_OK;
}

mox_status mox__cuda_foreign_wait_events(mox__cuda_dev *dev, CUstream stream,
                                         const mox__cuda_fevents *ev)
{
    for (uint32_t i = 0; i < ev->n; i++) {
        CUresult r = dev->api->cuStreamWaitEvent(stream, ev->v[i].event, 0);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(dev->api, r, "cuStreamWaitEvent",
                                  "(waiting for another device's launch)");
    }
    return MOX_OK;
}

void mox__cuda_foreign_unpin_events(mox__cuda_fevents *ev)
{
    for (uint32_t i = 0; i < ev->n; i++)
        mox__cuda_sem_unpin_event(ev->v[i].st, ev->v[i].event);
    free(ev->v);
    ev->v = NULL;
    ev->n = ev->cap = 0;
}

/* ---- gates on another device's dispatches ---- */

static void push_pin(mox__cuda_group *g, mox__cuda_dev *owner, mox__cuda_inst *inst)
{
    g->pins = mox__cuda_xrealloc(g->pins, (g->pin_count + 1) * sizeof *g->pins);
    g->pins[g->pin_count++] = (mox__cuda_pin){owner, inst};
}

static void push_mirror(mox__cuda_group *g, uint32_t node, CUdeviceptr word, CUcontext ctx)
{
    g->mirrors = mox__cuda_xrealloc(g->mirrors, (g->mirror_count + 1) * sizeof *g->mirrors);
    g->mirrors[g->mirror_count++] = (mox__cuda_mirror){node, word, ctx};
}

mox_status mox__cuda_foreign_gate(mox__cuda_dev *dev, mox__cuda_group *g, const mox__gate *gate,
                                  uint32_t node, bool *skip, bool *intra, uint32_t *slot)
{
    const mox__submission *sub = gate->sub;
    const mox__dispatch *d = sub->dispatches[gate->dispatch];
    *skip = *intra = false;
    mox__cuda_sem *st = cuda_state(&sub->signal);
    mox__cuda_pt s = MOX__CUDA_PT_SETTLED;
    bool may_fail = false;
    if (st && !settled_on_host(&sub->signal)) {
        CUdeviceptr word = 0;
        mox__cuda_inst *inst = NULL;
        s = mox__cuda_sem_gate(st, sub, gate->dispatch, &may_fail, &word, &inst);
        if (may_fail) { /* held until this launch completes */
            mox__cuda_dev *owner = mox__cuda_sem_owner(st);
            push_pin(g, owner, inst);
            push_mirror(g, node, word, owner->ctx);
        }
    }
    switch (s) {
    case MOX__CUDA_PT_SETTLED: { /* final: read it here */
        bool bad = d->state != MOX_DISPATCH_OK;
        *slot = bad ? MOX__CUDA_SENTINEL_SLOT : MOX__CUDA_OK_SLOT;
        g->check_status |= bad;
        *skip = !bad;
        return MOX_OK;
    }
    case MOX__CUDA_PT_FAILED:
        *slot = MOX__CUDA_SENTINEL_SLOT;
        g->check_status = true;
        return MOX_OK;
    case MOX__CUDA_PT_LIVE:
        if (!may_fail) {
            *skip = true; /* it cannot end anything but OK */
            return MOX_OK;
        }
        if (d->kernel_features & MOX_KFEAT_GATE_DEFERRED) /* held until settled: mox__cuda_foreign_block */
            return mox__cuda_error(MOX_ERR_BACKEND, "a gate on another CUDA device's deferred dispatch "
                                                    "was still running when the gated copy launched");
        *intra = true;
        *slot = node;
        g->check_status = true;
        atomic_fetch_add(&dev->stats.live_gates, 1);
        return MOX_OK;
    case MOX__CUDA_PT_UNKNOWN:
        break;
    }
    return mox__cuda_error(MOX_ERR_BACKEND, "a gate on another CUDA device's dispatch had no "
                                            "launch when the gated execution launched");
}

void mox__cuda_foreign_release(mox__cuda_group *g)
{
    for (uint32_t i = 0; i < g->pin_count; i++) {
        mox__cuda_dev *owner = g->pins[i].owner;
        mox__cuda_inst *inst = g->pins[i].inst;
        mox__lock(&owner->lock);
        if (atomic_fetch_sub(&inst->foreign_readers, 1) == 1)
            mox__cuda_inst_release(owner, inst);
        mox__unlock(&owner->lock);
    }
    g->pin_count = 0;
}

void mox__cuda_foreign_free(mox__cuda_group *g)
{
    free(g->foreign);
    free(g->foreign_waiters);
    free(g->pins);
    free(g->mirrors);
}
