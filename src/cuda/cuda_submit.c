/* src/cuda/cuda_submit.c - from core submissions to launches.
 *
 * Queues are streams: the core picks the queue (the stream of the latest
 * unfinished execution it waits on, else round robin) and names, in the
 * wait list, the points of other queues it needs. A point becomes
 * cuStreamWaitEvent on the event of the launch that signals it: the device
 * waits, no host thread decides.
 *
 * Coalescing: while a stream already has `defer_depth` launches queued
 * (default 2: one running, one waiting behind it, so the GPU never idles on
 * the completion thread), new submissions for it wait in a pending list;
 * when one of the stream's launches completes, or the list reaches
 * MOX__CUDA_MERGE_SUBS, the list goes out as ONE launch: one graph holding
 * every submission's dispatches, with edges for the waits between them, one
 * event. Back-to-back submissions thus cost one graph launch, not one each;
 * a submission to an idle stream goes out at once.
 *
 * Gates on dispatches of earlier launches become dependencies on their
 * status slots (the device checks them when the dispatch starts); a reader
 * count keeps that launch's instance from being reset until this launch
 * completes.
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zeroed blocks per launch (counts are small): malloc + memset, as glibc's
 * calloc bypasses the per-thread cache (src/core/alloc.c); the asm hides p's
 * origin, or GCC fuses the pair back into calloc. */
static void *zalloc(size_t count, size_t size)
{
    void *p = mox__malloc(count * size);
    __asm__("" : "+r"(p));
    if (p)
        memset(p, 0, count * size);
    return p;
}

static bool has_transfer(const mox__submission *pub)
{
    for (uint32_t i = 0; i < pub->count; i++)
        if (pub->dispatches[i]->kind != MOX__CMD_KERNEL)
            return true;
    return false;
}

static mox__cuda_group *group_new(uint32_t nsubs)
{
    mox__cuda_group *g = zalloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->subs = nsubs <= 1 ? g->subs_inline : zalloc(nsubs, sizeof *g->subs);
    if (!g->subs) {
        mox__free(g);
        return NULL;
    }
    return g;
}

static void group_free(mox__cuda_group *g)
{
    if (g->subs != g->subs_inline)
        mox__free(g->subs);
    mox__free(g->succs);
    mox__free(g->read_insts);
    mox__free(g->live_gates);
    mox__free(g->copybacks);
    mox__free(g->stages);
    mox__free(g);
}

/* `later` completes only after `earlier` did (once per pair). */
static bool add_succ(mox__cuda_group *earlier, mox__cuda_group *later)
{
    for (uint32_t i = 0; i < earlier->nsucc; i++)
        if (earlier->succs[i] == later)
            return true;
    mox__cuda_group **n = mox__realloc(earlier->succs, (earlier->nsucc + 1) * sizeof *n);
    if (!n)
        return false;
    earlier->succs = n;
    earlier->succs[earlier->nsucc++] = later;
    later->npred++;
    return true;
}

/* Reader count on an earlier launch's instance (once per instance). */
static bool add_reader(mox__cuda_group *g, mox__cuda_inst *inst)
{
    for (uint32_t i = 0; i < g->read_count; i++)
        if (g->read_insts[i] == inst)
            return true;
    mox__cuda_inst **n = mox__realloc(g->read_insts, (g->read_count + 1) * sizeof *n);
    if (!n)
        return false;
    g->read_insts = n;
    g->read_insts[g->read_count++] = inst;
    inst->readers++;
    return true;
}

static void drop_readers(mox__cuda_dev *dev, mox__cuda_group *g)
{
    for (uint32_t i = 0; i < g->read_count; i++) {
        g->read_insts[i]->readers--;
        mox__cuda_inst_release(dev, g->read_insts[i]);
    }
    g->read_count = 0;
}

/* Slot that gate (sub, j) reads, for a dispatch of launch `g`. */
static bool gate_slot(mox__cuda_dev *dev, mox__cuda_group *g, const mox__gate *gate, bool *intra,
                      uint32_t *slot)
{
    mox__cuda_sub *x = mox__cuda_sub_of(gate->sub);
    *intra = false;
    if (x->group == g) {
        *intra = true;
        *slot = x->offset + gate->dispatch;
        return true;
    }
    if (x->done) {
        bool bad = gate->sub->dispatches[gate->dispatch]->state != MOX_DISPATCH_OK;
        *slot = bad ? MOX__CUDA_SENTINEL_SLOT : MOX__CUDA_OK_SLOT;
        g->check_status |= bad;
        return true;
    }
    if (!x->group || !x->group->launched) {
        /* Its launch failed: it will complete with an error, never OK. */
        *slot = MOX__CUDA_SENTINEL_SLOT;
        g->check_status = true;
        return true;
    }
    *slot = x->group->inst->slot_base + x->offset + gate->dispatch;
    /* A dispatch gated through it raises no flag; at completion (after the
     * earlier launch completed) its state tells whether to read the words. */
    mox__gate *n = mox__realloc(g->live_gates, (g->live_count + 1) * sizeof *n);
    if (!n)
        return false;
    g->live_gates = n;
    g->live_gates[g->live_count++] = *gate;
    atomic_fetch_add(&dev->stats.live_gates, 1);
    return add_reader(g, x->group->inst);
}

typedef struct build {
    mox__cuda_ldesc desc;
    u32vec edges, gdeps, ext;
    CUevent waits[32];
    uint32_t nwaits;
} build;

static mox_status build_desc(mox__cuda_dev *dev, mox__cuda_group *g, build *b, CUstream stream)
{
    b->desc.count = g->count;
    if (g->count > dev->scratch_nodes_cap) {
        uint32_t cap = g->count + dev->scratch_nodes_cap;
        mox__cuda_lnode *n = mox__realloc(dev->scratch_nodes, (size_t)cap * sizeof *n);
        if (!n)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a launch");
        dev->scratch_nodes = n;
        dev->scratch_nodes_cap = cap;
    }
    b->desc.nodes = dev->scratch_nodes;
    if (g->count)
        memset(b->desc.nodes, 0, (size_t)g->count * sizeof *b->desc.nodes);
    uint32_t at = 0;
    for (uint32_t s = 0; s < g->nsubs; s++) {
        mox__submission *pub = g->subs[s];
        mox__cuda_sub *me = mox__cuda_sub_of(pub);
        for (uint32_t i = 0; i < pub->count; i++, at++) {
            const mox__dispatch *d = pub->dispatches[i];
            mox__cuda_lnode *ln = &b->desc.nodes[at];
            ln->d = d;
            if (d->kind == MOX__CMD_KERNEL) {
                const mox__cuda_module *m = d->module;
                ln->k = &m->kernels[d->kernel];
            } else {
                b->desc.has_transfer = true;
            }
            ln->edge_off = b->edges.n;
            ln->gdep_off = b->gdeps.n;
            ln->ext_off = b->ext.n;
            bool may_fail = d->kind == MOX__CMD_KERNEL && (d->kernel_features & MOX_KFEAT_FAIL);
            for (uint32_t k = 0; k < d->pred_count; k++) {
                uint32_t from = me->offset + pub->preds[d->pred_first + k];
                if (!mox__cuda_u32_push(&b->edges, from))
                    goto oom;
                if (d->kind != MOX__CMD_KERNEL || !mox__cuda_may_fail(b->desc.nodes[from].d))
                    continue;
                if (!mox__cuda_u32_push(&b->gdeps, from))
                    goto oom;
                may_fail = true;
            }
            /* A queue is FIFO: a source of this execution starts after the
             * sinks of the one before it in this launch (same queue). */
            if (d->pred_count == 0 && s > 0) {
                const mox__submission *wp = g->subs[s - 1];
                const mox__cuda_sub *ws = mox__cuda_sub_of(wp);
                for (uint32_t j = 0; j < wp->count; j++)
                    if (wp->dispatches[j]->succ_count == 0 && !mox__cuda_u32_push(&b->edges, ws->offset + j))
                        goto oom;
            }
            for (uint32_t k = 0; d->kind == MOX__CMD_KERNEL && k < d->gate_count; k++) {
                const mox__gate *gate = &pub->gates[d->gate_first + k];
                const mox__cuda_sub *gs = mox__cuda_sub_of(gate->sub);
                /* A gate on a dispatch that cannot fail, still in flight or
                 * finished OK, can never close. */
                bool settled_ok = gs->done && gate->sub->dispatches[gate->dispatch]->state == MOX_DISPATCH_OK;
                bool live = !gs->done && gs->group && (gs->group->launched || gs->group == g);
                if (settled_ok || (live && !mox__cuda_may_fail(gate->sub->dispatches[gate->dispatch])))
                    continue;
                bool intra;
                uint32_t slot;
                if (!gate_slot(dev, g, gate, &intra, &slot))
                    goto oom;
                if (!mox__cuda_u32_push(intra ? &b->gdeps : &b->ext, slot))
                    goto oom;
                may_fail = true;
            }
            if (d->be)
                ((mox__cuda_dstate *)d->be)->may_fail = may_fail;
            ln->edge_cnt = b->edges.n - ln->edge_off;
            ln->gdep_cnt = b->gdeps.n - ln->gdep_off;
            ln->ext_cnt = b->ext.n - ln->ext_off;
        }
        /* Points of other queues: completion order, and the stream waits
         * for the event of the launch that signals the point. */
        for (uint32_t w = 0; w < pub->wait_count; w++) {
            mox__cuda_group *wg = mox__cuda_group_of_point(dev, &pub->waits[w]);
            if (!wg || wg == g)
                continue;
            if (!add_succ(wg, g))
                goto oom;
            if (!wg->launched || wg->stream == g->stream)
                continue;
            CUevent ev = wg->event;
            bool seen = false;
            for (uint32_t k = 0; k < b->nwaits; k++)
                seen |= b->waits[k] == ev;
            if (seen)
                continue;
            if (b->nwaits < 32)
                b->waits[b->nwaits++] = ev;
            CUresult r = dev->api->cuStreamWaitEvent(stream, ev, 0);
            if (r != CUDA_SUCCESS)
                return mox__cuda_fail(dev->api, r, "cuStreamWaitEvent", NULL);
        }
    }
    b->desc.edges = b->edges.v;
    b->desc.gdeps = b->gdeps.v;
    b->desc.ext = b->ext.v;
    return MOX_OK;
oom:
    return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a launch");
}

/* Launches subs[0..n) on `stream` as one group. Never fails: a group that
 * cannot launch goes to the completion thread with its error. */
static void launch_group(mox__cuda_dev *dev, mox__submission *const *subs, uint32_t n,
                         uint32_t stream)
{
    mox__cuda_group *g = group_new(n);
    if (!g) {
        /* Not even a group: complete each alone with the shared OOM path. */
        for (uint32_t i = 0; i < n; i++) {
            mox__cuda_group *one = group_new(1);
            if (!one)
                abort(); /* two allocations of a few bytes failed in a row */
            mox__cuda_sub *me = mox__cuda_sub_of(subs[i]);
            one->subs[0] = subs[i];
            one->nsubs = 1;
            one->count = subs[i]->count;
            one->stream = stream;
            one->status = MOX_ERR_OUT_OF_MEMORY;
            /* Made here: the completion thread has no message of this. */
            one->error = mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory launching a batch");
            me->group = one;
            me->pending = false;
            mox__cuda_completion_push(dev, one);
        }
        return;
    }
    g->stream = stream;
    g->nsubs = n;
    g->first_value = subs[0]->signal.value;
    g->last_value = subs[n - 1]->signal.value;
    for (uint32_t i = 0; i < n; i++) {
        mox__cuda_sub *me = mox__cuda_sub_of(subs[i]);
        g->subs[i] = subs[i];
        me->group = g;
        me->offset = g->count;
        me->pending = false;
        g->count += subs[i]->count;
    }
    if (n > 1)
        atomic_fetch_add(&dev->stats.coalesced, n);
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    if (ss->last && !add_succ(ss->last, g)) {
        g->status = mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory launching a batch");
        g->error = mox__cuda_last_error(g->status);
    }
    ss->last = g;
    if (g->status == MOX_OK && atomic_load(&dev->lost))
        g->status = MOX_ERR_DEVICE_LOST;
    if (g->status != MOX_OK) {
        mox__cuda_completion_push(dev, g);
        return;
    }
    CUstream cs = dev->streams[stream];
    build b;
    memset(&b, 0, sizeof b);
    /* The device's scratch arrays (dev->lock is held), given back below. */
    u32vec *vecs[3] = {&b.edges, &b.gdeps, &b.ext};
    for (uint32_t i = 0; i < 3; i++)
        *vecs[i] = (u32vec){dev->scratch_u32[i].v, 0, dev->scratch_u32[i].cap};
    mox_status st = mox__cuda_dev_enter(dev);
    if (st == MOX_OK)
        st = build_desc(dev, g, &b, cs);
    if (st == MOX_OK)
        st = mox__cuda_event_get(dev, &g->event);
    if (st == MOX_OK)
        st = mox__cuda_plan_acquire(dev, &b.desc, &g->inst);
    if (st == MOX_OK) {
        st = mox__cuda_inst_launch(dev, g->inst, &b.desc, g, cs);
        if (st == MOX_OK) {
            CUresult r = dev->api->cuEventRecord(g->event, cs);
            if (r != CUDA_SUCCESS)
                st = mox__cuda_fail(dev->api, r, "cuEventRecord", NULL);
        }
        if (st != MOX_OK) {
            /* Part of it may be queued: let it drain before the instance
             * and staging can be reused. Rare (driver errors only). */
            dev->api->cuStreamSynchronize(cs);
            g->inst->busy = false;
            g->inst->dirty = true;
            mox__cuda_inst_release(dev, g->inst);
            g->inst = NULL;
        }
    }
    for (uint32_t i = 0; i < 3; i++)
        dev->scratch_u32[i] = *vecs[i];
    atomic_fetch_add(&dev->stats.groups, 1);
    if (st == MOX_OK) {
        g->launched = true;
        ss->depth++;
    } else {
        g->status = st;
        g->error = mox__cuda_last_error(st);
        if (st == MOX_ERR_DEVICE_LOST)
            mox__cuda_dev_lost(dev, mox__cuda_last_message());
        if (g->event) {
            mox__cuda_event_put(dev, g->event);
            g->event = NULL;
        }
        drop_readers(dev, g);
    }
    mox__cuda_completion_push(dev, g);
}

void mox__cuda_flush_stream(mox__cuda_dev *dev, uint32_t stream)
{
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    mox__submission *chunk[MOX__CUDA_MERGE_SUBS];
    while (ss->pending_head) {
        uint32_t n = 0, nodes = 0;
        while (ss->pending_head && n < MOX__CUDA_MERGE_SUBS) {
            mox__cuda_sub *s = ss->pending_head;
            if (n > 0 && nodes + s->pub->count > MOX__CUDA_MERGE_NODES)
                break;
            ss->pending_head = s->next_pending;
            s->next_pending = NULL;
            ss->pending_count--;
            nodes += s->pub->count;
            chunk[n++] = s->pub;
        }
        if (!ss->pending_head)
            ss->pending_tail = NULL;
        launch_group(dev, chunk, n, stream);
    }
}

mox__cuda_group *mox__cuda_group_of_point(mox__cuda_dev *dev, const mox__sem_point *pt)
{
    if (mox__semaphore_reached(pt->sem, pt->value))
        return NULL;
    for (mox__cuda_group *g = dev->inflight_head; g; g = g->next)
        if (g->stream == pt->sem->queue && g->first_value <= pt->value &&
            pt->value <= g->last_value)
            return g;
    return NULL; /* finished on the device; the core has yet to signal it */
}

/* Whether stream q holds back (pending) an execution at or below `value`. */
static bool pending_covers(mox__cuda_dev *dev, uint32_t q, uint64_t value)
{
    const mox__cuda_sub *h = dev->stream_state[q].pending_head;
    return h && h->pub->signal.value <= value;
}

void mox__cuda_submit(mox__cuda_dev *dev, mox__submission *pub)
{
    mox__cuda_sub *me = mox__cuda_sub_of(pub);
    memset(me, 0, sizeof *me);
    me->pub = pub;
    pthread_mutex_lock(&dev->lock);
    uint32_t stream = pub->queue;
    me->stream = stream;
    /* A point held back on another stream must be launched to have an
     * event: that stream goes out now. */
    for (uint32_t i = 0; !dev->hold && i < pub->wait_count; i++) {
        uint32_t q = pub->waits[i].sem->queue;
        if (q != stream && pending_covers(dev, q, pub->waits[i].value))
            mox__cuda_flush_stream(dev, q);
    }
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    bool transfer = has_transfer(pub);
    bool defer = dev->hold || (dev->coalesce && !transfer &&
                               (ss->pending_count > 0 || ss->depth >= dev->defer_depth));
    if (defer) {
        me->pending = true;
        if (ss->pending_tail)
            ss->pending_tail->next_pending = me;
        else
            ss->pending_head = me;
        ss->pending_tail = me;
        ss->pending_count++;
        if (!dev->hold && ss->pending_count >= MOX__CUDA_MERGE_SUBS)
            mox__cuda_flush_stream(dev, stream);
    } else {
        if (ss->pending_head)
            mox__cuda_flush_stream(dev, stream); /* keep submission order */
        mox__submission *one = pub;
        launch_group(dev, &one, 1, stream);
    }
    pthread_mutex_unlock(&dev->lock);
}

/* Releasing a hold launches everything held in submission order: each
 * step takes, from the stream whose oldest pending submission is the
 * oldest overall, the run of submissions older than every other stream's
 * oldest, so whatever a launch waits for on another stream already has its
 * event. */
static void flush_all_ordered(mox__cuda_dev *dev)
{
    mox__submission *chunk[MOX__CUDA_MERGE_SUBS];
    for (;;) {
        uint32_t best = MOX__CUDA_STREAMS;
        uint64_t best_serial = UINT64_MAX, next_serial = UINT64_MAX;
        for (uint32_t s = 0; s < MOX__CUDA_STREAMS; s++) {
            mox__cuda_sub *h = dev->stream_state[s].pending_head;
            if (!h)
                continue;
            if (h->pub->serial < best_serial) {
                next_serial = best_serial;
                best_serial = h->pub->serial;
                best = s;
            } else if (h->pub->serial < next_serial) {
                next_serial = h->pub->serial;
            }
        }
        if (best == MOX__CUDA_STREAMS)
            return;
        mox__cuda_stream_state *ss = &dev->stream_state[best];
        uint32_t n = 0, nodes = 0;
        while (ss->pending_head && n < MOX__CUDA_MERGE_SUBS &&
               ss->pending_head->pub->serial < next_serial) {
            mox__cuda_sub *h = ss->pending_head;
            if (n > 0 && nodes + h->pub->count > MOX__CUDA_MERGE_NODES)
                break;
            ss->pending_head = h->next_pending;
            h->next_pending = NULL;
            ss->pending_count--;
            nodes += h->pub->count;
            chunk[n++] = h->pub;
        }
        if (!ss->pending_head)
            ss->pending_tail = NULL;
        launch_group(dev, chunk, n, best);
    }
}

void mox__cuda_flush(mox__cuda_dev *dev, mox__submission *pub)
{
    pthread_mutex_lock(&dev->lock);
    const mox__cuda_sub *me = mox__cuda_sub_of(pub);
    if (!dev->hold && me->pending)
        mox__cuda_flush_stream(dev, me->stream);
    pthread_mutex_unlock(&dev->lock);
}

void mox__cuda_set_hold(mox__cuda_dev *dev, bool hold)
{
    pthread_mutex_lock(&dev->lock);
    dev->hold = hold;
    if (!hold)
        flush_all_ordered(dev);
    pthread_mutex_unlock(&dev->lock);
}

/* ---- completion ---- */

void mox__cuda_group_finish(mox__cuda_dev *dev, mox__cuda_group *g, CUresult r)
{
    const mox__cuda_api *api = dev->api;
    mox_status status = g->status;
    mox_error *error = g->error;
    g->error = NULL;
    if (status == MOX_OK && r != CUDA_SUCCESS) {
        status = mox__cuda_fail(api, r, "cuEventQuery", "(waiting for a launch)");
        if (status == MOX_ERR_DEVICE_LOST) {
            pthread_mutex_lock(&dev->lock);
            mox__cuda_dev_lost(dev, mox__cuda_last_message());
            pthread_mutex_unlock(&dev->lock);
        }
    }
    if (status == MOX_ERR_DEVICE_LOST && !error)
        error = mox__error_new(MOX_ERR_DEVICE_LOST, "%s", dev->lost_message);
    else if (status != MOX_OK && !error)
        error = mox__cuda_last_error(status);

    bool failed_any = false;
    if (status == MOX_OK) {
        mox__cuda_inst *inst = g->inst;
        bool flagged = *(volatile uint32_t *)inst->host_flag != 0;
        bool read = flagged || g->check_status;
        /* Earlier launches completed before this one: their states are final. */
        for (uint32_t i = 0; !read && i < g->live_count; i++)
            read = g->live_gates[i].sub->dispatches[g->live_gates[i].dispatch]->state !=
                   MOX_DISPATCH_OK;
        uint32_t stack_words[64];
        uint32_t *words = NULL;
        if (read) {
            words = g->count <= 32 ? stack_words : mox__malloc(8u * g->count);
            CUresult rr = words ? api->cuMemcpyDtoH(words, dev->pool + 8ull * inst->slot_base,
                                                    8u * g->count)
                                : CUDA_ERROR_OUT_OF_MEMORY;
            atomic_fetch_add(&dev->stats.status_reads, 1);
            if (rr != CUDA_SUCCESS) {
                status = mox__cuda_fail(api, rr, "cuMemcpyDtoH", "(reading dispatch states)");
                if (status == MOX_ERR_DEVICE_LOST) {
                    pthread_mutex_lock(&dev->lock);
                    mox__cuda_dev_lost(dev, mox__cuda_last_message());
                    pthread_mutex_unlock(&dev->lock);
                    error = mox__error_new(MOX_ERR_DEVICE_LOST, "%s", dev->lost_message);
                } else {
                    error = mox__cuda_last_error(status);
                }
                if (words != stack_words)
                    mox__free(words);
                words = NULL;
            }
        }
        if (status == MOX_OK) {
            uint32_t at = 0;
            for (uint32_t s = 0; s < g->nsubs; s++) {
                mox__submission *pub = g->subs[s];
                for (uint32_t i = 0; i < pub->count; i++, at++) {
                    mox__dispatch *d = pub->dispatches[i];
                    d->state = words ? words[2u * at] : MOX_DISPATCH_OK;
                    d->fail_code = words ? words[2u * at + 1u] : 0;
                    failed_any |= d->state != MOX_DISPATCH_OK;
                }
            }
            for (uint32_t c = 0; c < g->copyback_count; c++)
                memcpy(g->copybacks[c].host, g->copybacks[c].stage, g->copybacks[c].bytes);
        }
        if (words && words != stack_words)
            mox__free(words);
        if (flagged)
            failed_any = true;
    }
    if (status != MOX_OK) {
        /* Nothing of it is known to have finished. */
        for (uint32_t s = 0; s < g->nsubs; s++)
            for (uint32_t i = 0; i < g->subs[s]->count; i++) {
                g->subs[s]->dispatches[i]->state = MOX_DISPATCH_GATED;
                g->subs[s]->dispatches[i]->fail_code = 0;
            }
    }

    pthread_mutex_lock(&dev->lock);
    for (uint32_t s = 0; s < g->nsubs; s++) {
        mox__cuda_sub *me = mox__cuda_sub_of(g->subs[s]);
        me->done = true;
        me->group = NULL; /* g is freed below; its address may be reused */
    }
    for (uint32_t i = 0; i < g->nsucc; i++)
        g->succs[i]->npred--;
    if (dev->stream_state[g->stream].last == g)
        dev->stream_state[g->stream].last = NULL;
    if (g->launched) {
        mox__cuda_stream_state *ss = &dev->stream_state[g->stream];
        ss->depth--;
        g->inst->busy = false;
        if (failed_any || status != MOX_OK)
            g->inst->dirty = true;
        mox__cuda_inst_release(dev, g->inst);
        mox__cuda_event_put(dev, g->event);
        bool lost = atomic_load(&dev->lost);
        if (ss->pending_head && (lost || (!dev->hold && ss->depth < dev->defer_depth)))
            mox__cuda_flush_stream(dev, g->stream); /* lost: they fail at once */
    }
    drop_readers(dev, g);
    for (uint32_t i = 0; i < g->stage_count; i++)
        mox__cuda_stage_put(dev, g->stages[i]);
    g->stage_count = 0;
    pthread_mutex_unlock(&dev->lock);

    if (status != MOX_OK && !error)
        error = mox__error_new(status, "the CUDA backend failed the launch");
    for (uint32_t s = 0; s < g->nsubs; s++)
        mox__execution_complete(g->subs[s], error ? mox_error_retain(error) : NULL);
    mox_error_release(error);
    group_free(g);
}
