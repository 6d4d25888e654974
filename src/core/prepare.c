/* prepare.c - a batch's place in the device's order, computed under the
 * device lock before it executes (A6, A9): the unfinished earlier batches
 * it conflicts with (from the buffers' trackers), the gates on their
 * unfinished writers, its queue, its HAL wait list (one semaphore point per
 * other queue) and its signal value. */
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "submission.h"
#include "tracker_ops.h"

static __attribute__((noinline)) bool grow_waits_slow(mox__sub *s)
{
    uint32_t ncap = s->cap_waits * 2;
    mox__sub **n = mox__malloc(ncap * sizeof *n);
    if (!n)
        return false;
    memcpy(n, s->waits, s->nwaits * sizeof *n);
    if (s->waits != s->waits_inline)
        mox__free(s->waits);
    s->waits = n;
    s->cap_waits = ncap;
    s->heap_arrays = true;
    return true;
}

static inline bool grow_waits(mox__sub *s)
{
    return s->nwaits < s->cap_waits || grow_waits_slow(s);
}

/* The waits being gathered, and choose_queue's pick among them so far:
 * the queue of the latest (highest serial, the first of equals) on the
 * batch's own backend (UINT32_MAX: none yet). */
typedef struct wait_ctx {
    mox__sub *sub;
    const mox__backend *backend;
    uint64_t latest;
    uint32_t queue;
    bool oom;
} wait_ctx;

/* Inline: the trackers' visitor of every buffer the batch touches. */
static inline void add_wait(void *p, mox__sub *earlier)
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
    if (earlier->pub.signal.sem->owner == c->backend && earlier->pub.serial > c->latest) {
        c->latest = earlier->pub.serial;
        c->queue = earlier->pub.queue;
    }
}

/* The gates being laid out: s->gates, its inline storage, then the heap. */
typedef struct gate_list {
    mox__gate *at;
    uint32_t n, cap;
} gate_list;

static __attribute__((noinline)) bool gates_grow(mox__sub *s, gate_list *g)
{
    mox__gate *bigger = mox__malloc(2 * g->cap * sizeof *bigger);
    if (!bigger)
        return false;
    memcpy(bigger, g->at, g->n * sizeof *bigger);
    if (g->at != s->gates_inline)
        mox__free(g->at);
    s->gates = g->at = bigger;
    s->heap_arrays = true;
    g->cap *= 2;
    return true;
}

/* Appends ub's unfinished earlier writer to dispatch i's gates (those
 * from g->at[first] on, n so far) unless the dispatch comes after the
 * batch's own first write of it (gate_to; -1: no such writer) or one of
 * its gates names that writer already. false on out of memory. */
static inline bool add_gate(mox__sub *s, uint32_t i, const mox__ub *ub, uint32_t first,
                            uint32_t *n, gate_list *g)
{
    if ((int32_t)i > ub->gate_to)
        return true;
    bool dup = false;
    for (uint32_t e = first; e < *n; e++)
        dup |= g->at[e].sub == ub->ext_writer.sub && g->at[e].dispatch == ub->ext_writer.dispatch;
    if (dup)
        return true;
    if (*n == g->cap) {
        g->n = *n;
        if (!gates_grow(s, g))
            return false;
    }
    g->at[(*n)++] = ub->ext_writer;
    return true;
}

static inline bool gated_kind(const mox__dispatch *d)
{
    return d->kind == MOX__CMD_KERNEL || d->kind == MOX__CMD_COPY || d->kind == MOX__CMD_FILL;
}

/* Dispatch i's gates, appended to g: the unfinished earlier writers of
 * buffers it touches before the batch itself writes them (later accesses
 * depend on that in-batch writer, which inherits the gate), in argument
 * order. Device work is gated (A9); host transfers never are. */
static inline bool add_gates(mox__sub *s, uint32_t i, mox__dispatch *d, gate_list *g)
{
    /* Locals: the gates' stores (uint32_t dispatch) could alias all these. */
    const uint32_t first = g->n;
    uint32_t n = first;
    d->gate_first = first;
    uint32_t args = gated_kind(d) ? d->arg_count : 0;
    const mox__karg *karg = d->args;
    const mox__ub *ubs = s->ubs;
    for (uint32_t a = 0; a < args; a++) {
        const mox__karg *k = &karg[a];
        if (k->buffer && !add_gate(s, i, &ubs[k->ub], first, &n, g))
            return false;
    }
    g->n = n;
    d->gate_count = n - first;
    return true;
}

/* The gates of a batch whose seal took its tables from the memo (`laid`,
 * record_memo.h): the same as add_gates gives, from each dispatch's gate
 * candidates (the buffers it touches before the batch writes them, in
 * argument order, each once) instead of its arguments. */
static bool build_gates_laid(mox__sub *s, int32_t gate_to)
{
    gate_list g = {s->gates_inline, 0, MOX__SUB_INLINE_GATES};
    s->gates = g.at;
    mox__dispatch **ds = s->d;
    const mox__ub *ubs = s->ubs;
    const uint8_t *c = (const uint8_t *)s->cands;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = ds[i];
        const uint32_t first = g.n;
        uint32_t n = first, cands = *c++;
        const uint8_t *u = c;
        c += cands;
        d->gate_first = first;
        if ((int32_t)i > gate_to || !gated_kind(d))
            cands = 0;
        for (uint32_t k = 0; k < cands; k++)
            if (!add_gate(s, i, &ubs[u[k]], first, &n, &g))
                return false;
        g.n = n;
        d->gate_count = n - first;
    }
    s->pub.gates = g.n ? g.at : NULL;
    return true;
}

/* One pass over the dispatches: each one's gates (when an earlier writer
 * of the batch's buffers is unfinished: `gated`; none after dispatch
 * gate_to, the last any buffer's gate reaches) and successors (the
 * inverse of preds, counted as they were recorded: succ_count is the
 * cursor while they are filled in, and ends where it was). A failure
 * leaves them half done: the batch then resolves with it and is never
 * prepared again. */
static bool build_gates_and_succs(mox__sub *s, bool gated, int32_t gate_to)
{
    /* A block, like the arrays recording grows (submission.c). */
    if (s->npreds > 4 && !(s->succs = mox__block_alloc(s->npreds * sizeof *s->succs))) {
        s->succs = s->succs_inline;
        return false;
    }
    s->heap_arrays |= s->npreds > 4;
    gate_list g = {s->gates_inline, 0, MOX__SUB_INLINE_GATES};
    if (gated)
        s->gates = g.at;
    mox__dispatch **ds = s->d;
    const uint32_t *preds = s->preds;
    uint32_t *succs = s->succs;
    uint32_t at = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = ds[i];
        d->succ_first = at;
        at += d->succ_count;
        d->succ_count = 0;
        for (uint32_t k = d->pred_first; k < d->pred_first + d->pred_count; k++) {
            mox__dispatch *p = ds[preds[k]];
            succs[p->succ_first + p->succ_count++] = i;
        }
        if (!gated)
            continue;
        if ((int32_t)i > gate_to) {
            d->gate_first = g.n;
            d->gate_count = 0;
        } else if (!add_gates(s, i, d, &g)) {
            return false;
        }
    }
    s->pub.succs = s->npreds ? succs : NULL;
    s->pub.gates = g.n ? g.at : NULL;
    return true;
}

/* The batch's gates and, unless its seal laid them out, its successors.
 * false on out of memory. */
static inline bool build_gates(mox__sub *s, bool gated, int32_t gate_to)
{
    if (s->laid)
        return !gated || build_gates_laid(s, gate_to);
    return !(gated || s->npreds) || build_gates_and_succs(s, gated, gate_to);
}

static void undo_prepare(mox__sub *s)
{
    for (uint32_t i = 0; i < s->nwaits; i++)
        mox__sub_unref(s->waits[i]);
    s->nwaits = 0;
    for (uint32_t u = 0; u < s->nubs; u++)
        s->ubs[u].ext_writer = (mox__gate){NULL, 0};
    if (s->gates != s->gates_inline)
        mox__free(s->gates);
    s->gates = NULL;
    s->pub.gates = NULL;
    if (!s->laid) { /* (a laid batch's successors are its own, from its seal) */
        if (s->succs != s->succs_inline)
            mox__block_free(s->succs, s->npreds * sizeof *s->succs);
        s->succs = s->succs_inline;
    }
    s->npoints = 0;
}

/* The queue of the latest unfinished batch this one waits for (the order
 * then costs nothing: queues are FIFO; add_wait found it), else the next
 * queue round robin so that independent work overlaps. */
static uint32_t choose_queue(mox_device *dev, const wait_ctx *wc)
{
    uint32_t q = wc->queue;
    if (q == UINT32_MAX) {
        q = dev->next_queue;
        dev->next_queue = (q + 1) % dev->queue_count;
    }
    return q;
}

/* One point per other queue, of this device or another: the highest value
 * this batch waits for there (a timeline reaching it has passed every lower
 * one). */
static bool build_points(mox__sub *s, const mox__semaphore *own)
{
    s->npoints = 0;
    for (uint32_t i = 0; i < s->nwaits; i++) {
        const mox__submission *w = &s->waits[i]->pub;
        if (w->signal.sem == own)
            continue;
        uint32_t k = 0;
        while (k < s->npoints && s->points[k].sem != w->signal.sem)
            k++;
        if (k < s->npoints) {
            if (w->signal.value > s->points[k].value)
                s->points[k].value = w->signal.value;
            continue;
        }
        if (s->npoints == s->cap_points) {
            uint32_t cap = 2 * s->cap_points;
            mox__sem_point *n = mox__malloc(cap * sizeof *n);
            if (!n)
                return false;
            memcpy(n, s->points, s->npoints * sizeof *n);
            if (s->points != s->points_inline)
                mox__free(s->points);
            s->points = n;
            s->cap_points = cap;
            s->heap_arrays = true;
        }
        s->points[s->npoints++] = w->signal;
    }
    return true;
}

/* A copy between backends: its download (s->staged, on s->other, whose
 * lock is held) is prepared first, into a stage it owns, and this upload
 * waits for it. If this one then fails to prepare, the download still runs
 * alone: harmless, into its own stage. */
static mox_error *prepare_staged(mox__sub *s, wait_ctx *wc)
{
    mox__sub *down = s->staged;
    down->owned_host = mox__malloc(down->owned_size);
    if (!down->owned_host)
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory staging %zu bytes of a copy",
                              down->owned_size);
    down->d[0]->host = down->owned_host;
    s->d[0]->host = down->owned_host;
    mox_error *err = mox__sub_prepare_locked(s->other, down);
    if (err)
        return err;
    add_wait(wc, down);
    return wc->oom ? mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory submitting a batch")
                   : NULL;
}

mox_error *mox__sub_prepare_locked(mox_device *dev, mox__sub *s)
{
    if (atomic_load(&dev->health) != MOX_OK)
        return mox__error_create(MOX_ERR_DEVICE_LOST, NULL, 0, dev->lost_error,
                                 "the device was lost; reopen it");
    if (s->other && atomic_load(&s->other->health) != MOX_OK)
        return mox__error_create(MOX_ERR_DEVICE_LOST, NULL, 0, s->other->lost_error,
                                 "the source device of the copy was lost; reopen it");
    wait_ctx wc = {s, dev->backend, 0, UINT32_MAX, false};
    if (s->staged && !s->staged->submitted) {
        mox_error *err = prepare_staged(s, &wc);
        if (err) {
            undo_prepare(s);
            return err;
        }
    }
    bool gated = false; /* an unfinished earlier writer of one of its buffers */
    int32_t gate_to = -1; /* the last dispatch a gate reaches */
    for (uint32_t u = 0; u < s->nubs && !wc.oom; u++) {
        mox__ub *ub = &s->ubs[u];
        mox__tracker *t = &ub->buffer->tracker;
        bool writes = ub->last_write >= 0;
        mox__tracker_deps(t, writes, s->queued_at, add_wait, &wc);
        const mox__access *w = mox__tracker_writer(t);
        if (w) {
            /* Dispatches up to the batch's first write of the buffer take
             * the gate (all of them when the batch only reads it). */
            ub->ext_writer = (mox__gate){&w->sub->pub, w->dispatch};
            ub->gate_to = ub->first_write >= 0 ? ub->first_write : INT32_MAX;
            gate_to = ub->gate_to > gate_to ? ub->gate_to : gate_to;
            gated = true;
        } else {
            ub->gate_to = -1; /* ext_writer is then never read */
        }
        if (!writes && !mox__tracker_reserve(t))
            wc.oom = true;
    }
    uint32_t queue = wc.oom ? 0 : choose_queue(dev, &wc);
    if (wc.oom || !build_gates(s, gated, gate_to) || !build_points(s, &dev->sems[queue])) {
        undo_prepare(s);
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory submitting a batch");
    }
    s->pub.queue = queue;
    s->pub.waits = s->points;
    s->pub.wait_count = s->npoints;
    s->pub.signal = (mox__sem_point){&dev->sems[queue], ++dev->queue_values[queue]};
    /* The references of its tracker entries and the backend's (dropped at
     * the end of completion), taken at once. */
    atomic_fetch_add_explicit(&s->refs, s->nubs + 1, memory_order_relaxed);
    for (uint32_t u = 0; u < s->nubs; u++) {
        mox__ub *ub = &s->ubs[u];
        bool writes = ub->last_write >= 0;
        mox__tracker_record_unref(&ub->buffer->tracker, s, writes,
                                  writes ? (uint32_t)ub->last_write : 0);
    }
    dev->in_flight++;
    s->pub.serial = ++dev->serial;
    s->pub.context_id = dev->id;
    atomic_fetch_add(&dev->submissions, 1);
    s->device = mox__device_ref(dev);
    s->submitted = true;
    return NULL;
}
