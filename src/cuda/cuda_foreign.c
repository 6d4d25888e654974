/* src/cuda/cuda_foreign.c - points and gates of other devices
 * (docs/multi-device.md, docs/backends.md "Several devices").
 *
 * Each queue's semaphore carries a state (sem->be, mox__cuda_sem): the
 * launches of that stream pushed to completion and not finished, each
 * with its event and status words, and the highest value finished. It is
 * the one place another CUDA device looks, under the state's lock (a leaf),
 * never into the owner's own lists:
 *   - a wait on another device's point becomes cuStreamWaitEvent on the
 *     event of the launch that signals it (events may be waited on from
 *     another context): the device waits, no host thread decides;
 *   - a gate on another device's dispatch that may still fail copies that
 *     dispatch's status word into the gated node's own slot first (a peer
 *     copy), holding the owner's instance (foreign_readers) so that its
 *     words are not reset until the copy ran.
 * A point with no launch yet (the owner holds it back) or of another
 * backend cannot be waited for on the device: its execution is held, with
 * everything later on this device, until host waiters see it reached (the
 * one host-decided order: rare, and copies between backends are staged
 * through the host anyway). A launch that waited for other devices'
 * points completes after them (the core reads their states), woken by
 * waiters on their semaphores. */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* An event of a launch that another device's launcher will wait for on
 * the device (cuStreamWaitEvent, called with no lock held): not given back
 * to the owner's pool - where the owner's launcher could record it again -
 * before that call was made. */
typedef struct mox__cuda_evpin {
    struct mox__cuda_evpin *next;
    CUevent event;
    uint32_t count;
    bool orphan;                      /* its launch finished: the last unpin gives it back */
} mox__cuda_evpin;

struct mox__cuda_sem {
    mox__cuda_dev *owner;
    pthread_mutex_t lock;             /* a leaf */
    mox__cuda_group *head, *tail;     /* registered launches, oldest first */
    uint64_t finished;                /* values up to it finished: states final */
    mox__cuda_evpin *pins;
};

/* A host waiter of a launch on another device's point. */
struct mox__cuda_fwait {
    mox__sem_waiter w;
    mox__cuda_group *g;
    mox__cuda_dev *dev;
    bool fired;                       /* dev->lock */
};
typedef struct mox__cuda_fwait mox__cuda_fwait;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        abort(); /* a few bytes of bookkeeping */
    return q;
}

mox_error *mox__cuda_sem_init(mox__cuda_dev *dev, mox__semaphore *sem)
{
    mox__cuda_sem *st = calloc(1, sizeof *st);
    if (!st)
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA semaphore");
    st->owner = dev;
    pthread_mutex_init(&st->lock, NULL);
    sem->be = st;
    if (sem->queue < MOX__CUDA_STREAMS)
        dev->sems[sem->queue] = st;
    return NULL;
}

void mox__cuda_sem_fini(mox__cuda_dev *dev, mox__semaphore *sem)
{
    mox__cuda_sem *st = sem->be;
    if (!st)
        return;
    if (sem->queue < MOX__CUDA_STREAMS && dev->sems[sem->queue] == st)
        dev->sems[sem->queue] = NULL;
    pthread_mutex_destroy(&st->lock);
    free(st);
    sem->be = NULL;
}

void mox__cuda_sem_register(mox__cuda_dev *dev, mox__cuda_group *g)
{
    mox__cuda_sem *st = g->stream < MOX__CUDA_STREAMS ? dev->sems[g->stream] : NULL;
    if (!st || g->first_value == 0)
        return;
    pthread_mutex_lock(&st->lock);
    g->sem_prev = st->tail;
    g->sem_next = NULL;
    if (st->tail)
        st->tail->sem_next = g;
    else
        st->head = g;
    st->tail = g;
    g->sem = st;
    pthread_mutex_unlock(&st->lock);
}

bool mox__cuda_sem_unregister(mox__cuda_dev *dev, mox__cuda_group *g)
{
    (void)dev;
    mox__cuda_sem *st = g->sem;
    if (!st)
        return true;
    bool back = true;
    pthread_mutex_lock(&st->lock);
    for (mox__cuda_evpin *p = st->pins; g->launched && p; p = p->next)
        if (p->event == g->event) {
            p->orphan = true;
            back = false;
        }
    if (g->sem_prev)
        g->sem_prev->sem_next = g->sem_next;
    else
        st->head = g->sem_next;
    if (g->sem_next)
        g->sem_next->sem_prev = g->sem_prev;
    else
        st->tail = g->sem_prev;
    if (g->last_value > st->finished)
        st->finished = g->last_value; /* a stream's launches finish in order */
    pthread_mutex_unlock(&st->lock);
    g->sem = NULL;
    g->sem_next = g->sem_prev = NULL;
    return back;
}

/* ---- what another device's state says about a point ---- */

typedef enum pt_state {
    PT_SETTLED,   /* finished on the device: its states are final */
    PT_LIVE,      /* launched: *g is its launch (event, status words) */
    PT_FAILED,    /* its launch failed: it completes with an error */
    PT_UNKNOWN    /* no launch yet (held back, or not executed) */
} pt_state;

/* The state of another CUDA device's point. Caller holds st->lock. */
static pt_state classify_locked(mox__cuda_sem *st, uint64_t value, mox__cuda_group **out)
{
    for (mox__cuda_group *g = st->head; g; g = g->sem_next)
        if (g->first_value <= value && value <= g->last_value) {
            *out = g;
            return g->launched ? PT_LIVE : PT_FAILED;
        }
    return value <= st->finished ? PT_SETTLED : PT_UNKNOWN;
}

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
        mox__cuda_dev *owner = st->owner;
        CUcontext prev = NULL;
        owner->api->cuCtxGetCurrent(&prev);
        pthread_mutex_lock(&owner->lock);
        /* A request of the owner's launcher: run here when it is idle, else
         * by the thread launching there (then this point may still have no
         * launch when it is looked at, and the host waits instead). */
        if (!mox__cuda_held(owner) && mox__cuda_pending_covers(owner, pt->sem->queue, pt->value)) {
            owner->flush_mask |= 1u << pt->sem->queue;
            mox__cuda_launcher_enter(owner);
        }
        pthread_mutex_unlock(&owner->lock);
        owner->api->cuCtxSetCurrent(prev);
    }
}

/* ---- executions held for another device's point ---- */

static void point_reached(void *ctx)
{
    mox__cuda_sub *me = ctx;
    mox__cuda_dev *dev = me->dev;
    CUcontext prev = NULL;
    dev->api->cuCtxGetCurrent(&prev);
    pthread_mutex_lock(&dev->lock);
    if (--me->fwaits_left == 0) {
        if (me->fwaiters != me->fwaiters_inline)
            free(me->fwaiters);
        me->fwaiters = NULL;
        me->blocked = false;
        if (--dev->blocked == 0)
            mox__cuda_release_held(dev);
    }
    pthread_mutex_unlock(&dev->lock); /* `me` may be launched and gone from here */
    dev->api->cuCtxSetCurrent(prev);
}

/* Whether point `pt` of another device can be waited for on the device. */
static bool waitable_on_device(const mox__sem_point *pt)
{
    mox__cuda_sem *st = cuda_state(pt);
    if (!st)
        return false; /* another backend: the host waits */
    mox__cuda_group *g = NULL;
    pthread_mutex_lock(&st->lock);
    pt_state s = classify_locked(st, pt->value, &g);
    pthread_mutex_unlock(&st->lock);
    return s != PT_UNKNOWN;
}

bool mox__cuda_foreign_block(mox__cuda_dev *dev, mox__cuda_sub *me)
{
    const mox__submission *pub = me->pub;
    uint32_t n = 0;
    for (uint32_t i = 0; i < pub->wait_count; i++)
        if (foreign(dev, &pub->waits[i]) && !settled_on_host(&pub->waits[i]) &&
            !waitable_on_device(&pub->waits[i]))
            n++;
    if (n == 0)
        return false;
    me->dev = dev;
    me->fwaiters = n <= 2 ? me->fwaiters_inline : xrealloc(NULL, n * sizeof *me->fwaiters);
    me->fwaits_left = n + 1; /* + 1 while registering (dev->lock is held meanwhile) */
    me->blocked = true;
    dev->blocked++;
    uint32_t k = 0;
    for (uint32_t i = 0; i < pub->wait_count && k < n; i++) {
        const mox__sem_point *pt = &pub->waits[i];
        if (!foreign(dev, pt) || settled_on_host(pt) || waitable_on_device(pt))
            continue;
        mox__sem_waiter *w = &me->fwaiters[k++];
        w->fn = point_reached;
        w->ctx = me;
        w->value = pt->value;
        if (!mox__semaphore_wait_async(pt->sem, w))
            me->fwaits_left--;
    }
    me->fwaits_left -= n - k; /* points that became waitable meanwhile */
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
    pthread_mutex_lock(&dev->lock);
    fw->fired = true; /* the group may complete and go once the lock is released */
    if (dev->waiting)
        pthread_cond_signal(&dev->work_cv);
    pthread_mutex_unlock(&dev->lock);
}

void mox__cuda_foreign_collect(mox__cuda_dev *dev, mox__cuda_group *g)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < g->nsubs; s++)
        for (uint32_t i = 0; i < g->subs[s]->wait_count; i++)
            n += foreign(dev, &g->subs[s]->waits[i]) && !settled_on_host(&g->subs[s]->waits[i]);
    if (n == 0)
        return;
    g->foreign = xrealloc(NULL, n * sizeof *g->foreign);
    mox__cuda_fwait *fw = xrealloc(NULL, n * sizeof *fw);
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
    for (; k < n; k++)
        fw[k].fired = true; /* reached meanwhile: no slot used */
    g->foreign_count = n;
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

static void pin_event_locked(mox__cuda_sem *st, CUevent event)
{
    for (mox__cuda_evpin *p = st->pins; p; p = p->next)
        if (p->event == event) {
            p->count++;
            return;
        }
    mox__cuda_evpin *p = xrealloc(NULL, sizeof *p);
    *p = (mox__cuda_evpin){st->pins, event, 1, false};
    st->pins = p;
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
        mox__cuda_group *src = NULL;
        pthread_mutex_lock(&st->lock);
        pt_state s = classify_locked(st, pt->value, &src);
        if (s == PT_LIVE)
            pin_event_locked(st, src->event);
        pthread_mutex_unlock(&st->lock);
        if (s == PT_UNKNOWN)
            return mox__cuda_error(MOX_ERR_BACKEND,
                                   "a point of another CUDA device had no launch when the "
                                   "execution waiting for it launched");
        if (s != PT_LIVE)
            continue; /* finished, or failed to launch: nothing to wait for on the device */
        if (out->n == out->cap) {
            out->cap = out->cap ? 2u * out->cap : 4u;
            out->v = xrealloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = (mox__cuda_fevent){st, src->event};
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
    for (uint32_t i = 0; i < ev->n; i++) {
        mox__cuda_sem *st = ev->v[i].st;
        mox__cuda_evpin *gone = NULL;
        pthread_mutex_lock(&st->lock);
        for (mox__cuda_evpin **p = &st->pins; *p; p = &(*p)->next)
            if ((*p)->event == ev->v[i].event) {
                if (--(*p)->count == 0) {
                    gone = *p;
                    *p = gone->next;
                }
                break;
            }
        pthread_mutex_unlock(&st->lock);
        if (gone && gone->orphan)
            mox__cuda_event_put(st->owner, gone->event);
        free(gone);
    }
    free(ev->v);
    ev->v = NULL;
    ev->n = ev->cap = 0;
}

/* ---- gates on another device's dispatches ---- */

static void push_pin(mox__cuda_group *g, mox__cuda_dev *owner, mox__cuda_inst *inst)
{
    g->pins = xrealloc(g->pins, (g->pin_count + 1) * sizeof *g->pins);
    g->pins[g->pin_count++] = (mox__cuda_pin){owner, inst};
}

static void push_mirror(mox__cuda_group *g, uint32_t node, CUdeviceptr word, CUcontext ctx)
{
    g->mirrors = xrealloc(g->mirrors, (g->mirror_count + 1) * sizeof *g->mirrors);
    g->mirrors[g->mirror_count++] = (mox__cuda_mirror){node, word, ctx};
}

/* Where the status word of dispatch j of `sub` in launch `src` lives. */
static CUdeviceptr status_word(const mox__cuda_sem *st, const mox__cuda_group *src,
                               const mox__submission *sub, uint32_t j)
{
    uint32_t offset = 0;
    for (uint32_t k = 0; k < src->nsubs; k++)
        if (src->subs[k] == sub)
            offset = mox__cuda_sub_of(sub)->offset;
    return st->owner->pool + 8ull * (src->inst->slot_base + offset + j);
}

mox_status mox__cuda_foreign_gate(mox__cuda_dev *dev, mox__cuda_group *g, const mox__gate *gate,
                                  uint32_t node, bool *skip, bool *intra, uint32_t *slot)
{
    const mox__submission *sub = gate->sub;
    const mox__dispatch *d = sub->dispatches[gate->dispatch];
    *skip = *intra = false;
    mox__cuda_sem *st = cuda_state(&sub->signal);
    pt_state s = PT_SETTLED;
    mox__cuda_group *src = NULL;
    if (st && !settled_on_host(&sub->signal)) {
        pthread_mutex_lock(&st->lock);
        s = classify_locked(st, sub->signal.value, &src);
        if (s == PT_LIVE && mox__cuda_may_fail(d)) {
            /* Held from here until this launch completes. */
            atomic_fetch_add(&src->inst->foreign_readers, 1);
            push_pin(g, st->owner, src->inst);
            push_mirror(g, node, status_word(st, src, sub, gate->dispatch), st->owner->ctx);
        }
        pthread_mutex_unlock(&st->lock);
    }
    switch (s) {
    case PT_SETTLED: { /* final: read it here */
        bool bad = d->state != MOX_DISPATCH_OK;
        *slot = bad ? MOX__CUDA_SENTINEL_SLOT : MOX__CUDA_OK_SLOT;
        g->check_status |= bad;
        *skip = !bad;
        return MOX_OK;
    }
    case PT_FAILED:
        *slot = MOX__CUDA_SENTINEL_SLOT;
        g->check_status = true;
        return MOX_OK;
    case PT_LIVE:
        if (!mox__cuda_may_fail(d)) {
            *skip = true; /* it cannot end anything but OK */
            return MOX_OK;
        }
        *intra = true;
        *slot = node;
        g->check_status = true;
        atomic_fetch_add(&dev->stats.live_gates, 1);
        return MOX_OK;
    case PT_UNKNOWN:
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
        pthread_mutex_lock(&owner->lock);
        if (atomic_fetch_sub(&inst->foreign_readers, 1) == 1)
            mox__cuda_inst_release(owner, inst);
        pthread_mutex_unlock(&owner->lock);
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
