/* src/cuda/cuda_launch.c - one launch: one or more executions of one
 * stream as a single graph (or stream) launch with one event.
 *
 * A launch is built in three phases. A, under dev->lock: the group, its
 * completion order (the previous launch of its stream, and the launches
 * whose points it waits on), its description (nodes, edges, gate
 * dependencies: gates on dispatches of earlier launches become their status
 * slots, with a reader count that keeps that launch's instance from being
 * reset until this one completes; cuda_gates.c). B, with no lock: every driver call
 * (event waits on other streams, plan and instance creation, parameter
 * updates, the launch, the event). C, under the lock again: the launch is
 * published to the completion thread. Only the launcher (cuda_submit.c)
 * launches, one at a time per device.
 */
#include "cuda/cuda_internal.h"

#include "core/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct build {
    mox__cuda_ldesc desc;
    u32vec *edges, *gdeps, *ext;  /* the device's scratch arrays (the launcher's alone) */
    CUevent *waits;          /* events of other streams' launches to wait for */
    uint32_t nwaits, cap_waits;
    mox__cuda_fevents foreign; /* events of other devices' launches, pinned */
} build;

static bool add_wait_event(build *b, CUevent ev)
{
    for (uint32_t k = 0; k < b->nwaits; k++)
        if (b->waits[k] == ev)
            return true;
    if (b->nwaits == b->cap_waits) {
        uint32_t cap = b->cap_waits ? 2u * b->cap_waits : 8u;
        CUevent *n = mox__realloc(b->waits, cap * sizeof *n);
        if (!n)
            return false;
        b->waits = n;
        b->cap_waits = cap;
    }
    b->waits[b->nwaits++] = ev;
    return true;
}

/* A launch whose dynamic shared memory does not fit next to the kernel's
 * static shared memory (the core checked only the device's limit). */
static mox_status shared_too_large(const mox__cuda_dev *dev, const mox__cuda_kernel *k, const mox__dispatch *d)
{
    uint32_t device_limit = (d->kernel_features & MOX_KFEAT_DYNAMIC_SHARED) ? dev->limits.shared_optin
                                                                            : dev->limits.shared_per_block;
    return mox__cuda_error(MOX_ERR_INVALID_LAUNCH,
                           "invalid launch of kernel '%s': %u bytes of dynamic shared memory exceed its limit of "
                           "%u on %s (the device's %u bytes per block less the kernel's %u bytes of static shared "
                           "memory)",
                           k->name, d->config.shared_bytes, k->max_dynamic_shared, dev->name, device_limit,
                           k->static_shared);
}

static bool mirrored(const mox__cuda_group *g, uint32_t at)
{
    for (uint32_t m = 0; m < g->mirror_count; m++)
        if (g->mirrors[m].node == at)
            return true;
    return false;
}

/* Node `at` of the launch: dispatch i of its s-th execution, its edges
 * (the core's, and a queue's FIFO order after the execution before it),
 * its gate dependencies and the entry it runs. The arrays' lengths are
 * read once into locals: stores into the node (uint32_t, like them) would
 * make the compiler load them again after each. */
static mox_status describe_node(mox__cuda_dev *dev, mox__cuda_group *g, build *b, uint32_t s,
                                uint32_t i, uint32_t at)
{
    const mox__submission *pub = g->subs[s];
    const mox__dispatch *d = pub->dispatches[i];
    mox__cuda_lnode *ln = &b->desc.nodes[at];
    u32vec *edges = b->edges, *gdeps = b->gdeps, *ext = b->ext;
    uint32_t edge_off = edges->n, gdep_off = gdeps->n, ext_off = ext->n;
    bool kernel = d->kind == MOX__CMD_KERNEL;
    /* Copies and fills among other nodes run as the backend's kernels in
     * graphs when they can (mox__cuda_builtin_kernel); transfers, those that
     * cannot, and a lone copy or fill (a memset or memcpy is best alone)
     * make the launch a stream launch. */
    const mox__cuda_kernel *k = kernel       ? &((const mox__cuda_module *)d->module)->kernels[d->kernel]
                                : g->count > 1 ? mox__cuda_builtin_kernel(dev, d)
                                               : NULL;
    if (kernel && d->config.shared_bytes > k->max_dynamic_shared)
        return shared_too_large(dev, k, d);
    ln->d = d;
    ln->k = k;
    ln->edge_off = edge_off;
    ln->gdep_off = gdep_off;
    ln->ext_off = ext_off;
    bool may_fail = kernel && (d->kernel_features & MOX_KFEAT_FAIL);
    /* Gated like a kernel (hal.h): kernels, copies and fills. */
    bool device_work = kernel || d->kind == MOX__CMD_COPY || d->kind == MOX__CMD_FILL;
    uint32_t npred = d->pred_count;
    if (npred) {
        const uint32_t *preds = pub->preds + d->pred_first;
        uint32_t offset = mox__cuda_sub_of(pub)->offset;
        for (uint32_t p = 0; p < npred; p++) {
            uint32_t from = offset + preds[p];
            if (!mox__cuda_u32_push(edges, from))
                goto oom;
            const mox__dispatch *pd = b->desc.nodes[from].d;
            if (!device_work || !mox__cuda_may_fail(pd))
                continue;
            if (!mox__cuda_u32_push(gdeps, from))
                goto oom;
            if ((pd->kernel_features & MOX_KFEAT_GATE_DEFERRED) && !mox__cuda_carry_in(g, ln, gdeps, ext, g, pd))
                goto oom;
            may_fail = true;
        }
    } else if (s > 0) {
        /* A queue is FIFO: a source of this execution starts after the
         * sinks of the one before it in this launch (same queue). */
        const mox__submission *wp = g->subs[s - 1];
        uint32_t wp_offset = mox__cuda_sub_of(wp)->offset;
        mox__dispatch *const *wd = wp->dispatches;
        for (uint32_t j = 0, n = wp->count; j < n; j++)
            if (wd[j]->succ_count == 0 && !mox__cuda_u32_push(edges, wp_offset + j))
                goto oom;
    }
    /* Most dispatches have no gate, or only gates that can never close (on
     * earlier dispatches that cannot fail): no call into cuda_gates.c. */
    uint32_t ngates = d->gate_count;
    if (ngates && device_work) {
        const mox__gate *gates = &pub->gates[d->gate_first];
        uint32_t j = 0;
        while (j < ngates && mox__cuda_gate_never_closes(dev, g, &gates[j]))
            j++;
        if (j < ngates) {
            mox_status st = mox__cuda_describe_gates(dev, g, ln, gdeps, ext, pub, d, at, &may_fail);
            if (st != MOX_OK)
                return st;
        }
    }
    mox__cuda_dstate *ds = d->be;
    if (ds)
        ds->may_fail = may_fail;
    uint32_t gdep_cnt = gdeps->n - gdep_off, ext_cnt = ext->n - ext_off;
    ln->edge_cnt = edges->n - edge_off;
    ln->gdep_cnt = gdep_cnt;
    ln->ext_cnt = ext_cnt;
    /* A deferred kernel may leave its word OK behind a failed dependency:
     * its readers read what its gate reads (cuda_gates.c). Mostly it reads
     * none, and carries nothing. */
    if (kernel && (d->kernel_features & MOX_KFEAT_GATE_DEFERRED) && ds) {
        if (gdep_cnt + ext_cnt == 0) {
            ds->carry_first = g->carried_count;
            ds->carry_count = 0;
        } else if (!mox__cuda_carry_keep(g, ln, gdeps, ext)) {
            goto oom;
        }
    }
    /* A copy or fill whose gate reads another device's word has it mirrored
     * into its own slot first, on the stream (cuda_copy.c); a large ungated
     * memset or memcpy is faster than the kernel. */
    if (!kernel && k &&
        (mirrored(g, at) || (gdep_cnt + ext_cnt == 0 && mox__cuda_command_prefers_stream(dev, d))))
        ln->k = k = NULL;
    b->desc.has_transfer |= !k;
    ln->fn = k ? mox__cuda_entry_fn(k, d, gdep_cnt + ext_cnt) : NULL;
    b->desc.deps_array |= gdep_cnt + ext_cnt > MOX_GATE_INLINE_DEPS;
    return MOX_OK;
oom:
    return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a launch");
}

/* The points of other queues `pub` waits for: completion order, and the
 * stream waits for the event of the launch that signals the point (another
 * device's: pinned in b->foreign). */
static mox_status describe_waits(mox__cuda_dev *dev, mox__cuda_group *g, build *b,
                                 const mox__submission *pub)
{
    for (uint32_t w = 0; w < pub->wait_count; w++) {
        if (pub->waits[w].sem->owner != &dev->base)
            continue; /* another device's: below */
        mox__cuda_group *wg = mox__cuda_group_of_point(dev, &pub->waits[w]);
        if (!wg || wg == g)
            continue;
        if (!mox__cuda_add_succ(wg, g))
            goto oom;
        if (!wg->launched || wg->stream == g->stream || wg->finishing)
            continue; /* its event may be given back already */
        if (!add_wait_event(b, wg->event))
            goto oom;
    }
    return mox__cuda_foreign_events(dev, pub, &b->foreign);
oom:
    return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a launch");
}

/* The launch's description, from its executions and what they wait for;
 * host work only (dev->lock held: it reads other launches' state). */
static mox_status build_desc(mox__cuda_dev *dev, mox__cuda_group *g, build *b)
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
    mox_status st = MOX_OK;
    for (uint32_t s = 0, at = 0, nsubs = g->nsubs; st == MOX_OK && s < nsubs; s++) {
        const mox__submission *pub = g->subs[s];
        for (uint32_t i = 0, count = pub->count; st == MOX_OK && i < count; i++, at++)
            st = describe_node(dev, g, b, s, i, at);
        if (st == MOX_OK && pub->wait_count)
            st = describe_waits(dev, g, b, pub);
    }
    b->desc.edges = b->edges->v;
    b->desc.gdeps = b->gdeps->v;
    b->desc.ext = b->ext->v;
    b->desc.edge_count = b->edges->n;
    b->desc.deps_total = b->gdeps->n + b->ext->n;
    return st;
}

/* Phase B of a launch, with no lock held: the driver calls. The instance
 * it launches is its own (busy) and nobody else launches (the launcher
 * token, cuda_submit.c); what phase A could not take from the plan cache
 * and the event pool is made here. */
static mox_status launch_unlocked(mox__cuda_dev *dev, mox__cuda_group *g, build *b,
                                  mox__cuda_plan *plan, CUstream cs)
{
    mox_status st = mox__cuda_dev_enter(dev);
    for (uint32_t i = 0; st == MOX_OK && i < b->nwaits; i++) {
        CUresult r = dev->api->cuStreamWaitEvent(cs, b->waits[i], 0);
        if (r != CUDA_SUCCESS)
            st = mox__cuda_fail(dev->api, r, "cuStreamWaitEvent", NULL);
    }
    if (st == MOX_OK && b->foreign.n)
        st = mox__cuda_foreign_wait_events(dev, cs, &b->foreign);
    if (st == MOX_OK && !g->inst)
        st = mox__cuda_plan_acquire(dev, &b->desc, plan, &g->inst);
    if (st == MOX_OK && !g->event)
        st = mox__cuda_event_get(dev, g->event_spin, &g->event);
    if (st != MOX_OK)
        return st;
    if (mox__trace_on())
        mox__cuda_trace_begin(dev, g, cs);
    st = mox__cuda_inst_launch(dev, g->inst, &b->desc, g, cs);
    if (st == MOX_OK)
        mox__cuda_trace_end(dev, g, cs);
    if (st == MOX_OK) {
        CUresult r = dev->api->cuEventRecord(g->event, cs);
        if (r != CUDA_SUCCESS)
            st = mox__cuda_fail(dev->api, r, "cuEventRecord", NULL);
    }
    if (st != MOX_OK)
        dev->api->cuStreamSynchronize(cs); /* part of it may be queued: let it drain */
    return st;
}

/* Not even a group for `n` executions: each completes alone with the
 * shared out-of-memory path. dev->lock held. */
static void fail_each(mox__cuda_dev *dev, mox__submission *const *subs, uint32_t n, uint32_t stream)
{
    for (uint32_t i = 0; i < n; i++) {
        mox__cuda_group *one = mox__cuda_group_new(1);
        if (!one)
            abort(); /* two allocations of a few bytes failed in a row */
        mox__cuda_sub *me = mox__cuda_sub_of(subs[i]);
        one->subs[0] = subs[i];
        one->nsubs = 1;
        one->count = subs[i]->count;
        one->stream = stream;
        one->first_value = one->last_value = subs[i]->signal.value;
        mox__cuda_foreign_collect(dev, one);
        one->status = MOX_ERR_OUT_OF_MEMORY;
        /* Made here: the completion thread has no message of this. */
        one->error = mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory launching a batch");
        me->group = one;
        atomic_store_explicit(&me->pending, false, memory_order_relaxed);
        mox__cuda_completion_push(dev, one);
    }
}

/* Phase A's order: the group's executions, after the previous launch of
 * its stream and the points of other devices they wait for. False when it
 * cannot launch (g->status says why). dev->lock held. */
static bool group_order(mox__cuda_dev *dev, mox__cuda_group *g, mox__submission *const *subs,
                        uint32_t n, uint32_t stream)
{
    g->stream = stream;
    g->nsubs = n;
    g->first_value = subs[0]->signal.value;
    g->last_value = subs[n - 1]->signal.value;
    uint32_t waits = 0; /* points of other devices are among them */
    for (uint32_t i = 0; i < n; i++) {
        mox__cuda_sub *me = mox__cuda_sub_of(subs[i]);
        waits += subs[i]->wait_count;
        g->subs[i] = subs[i];
        me->group = g;
        me->offset = g->count;
        atomic_store_explicit(&me->pending, false, memory_order_relaxed);
        g->count += subs[i]->count;
    }
    if (n > 1)
        atomic_fetch_add(&dev->stats.coalesced, n);
    if (waits)
        mox__cuda_foreign_collect(dev, g);
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    if (ss->last && !mox__cuda_add_succ(ss->last, g)) {
        g->status = mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory launching a batch");
        g->error = mox__cuda_last_error(g->status);
    }
    ss->last = g;
    if (g->status == MOX_OK && atomic_load(&dev->lost))
        g->status = MOX_ERR_DEVICE_LOST;
    return g->status == MOX_OK;
}

/* Phase C, dev->lock held: the launch goes to the completion thread,
 * launched or with the error `st` of phase B. */
static void group_publish(mox__cuda_dev *dev, mox__cuda_group *g, mox_status st)
{
    atomic_fetch_add(&dev->stats.groups, 1);
    if (st == MOX_OK) {
        g->launched = true;
        if (g->event_spin)
            atomic_fetch_add_explicit(&dev->stats.spin_events, 1, memory_order_relaxed);
        /* Onto an idle device its run time is its own (cuda_watch.c times
         * only such runs): a pipelined launch reads no clock. */
        g->idle_launch = dev->inflight_head == NULL;
        if (g->idle_launch)
            g->launch_ns = mox__cuda_now_ns();
        dev->stream_state[g->stream].depth++;
    } else {
        if (g->inst) {
            g->inst->busy = false;
            g->inst->dirty = true;
            mox__cuda_inst_release(dev, g->inst);
            g->inst = NULL;
        }
        if (g->event) {
            mox__cuda_event_keep(dev, g->event_spin, g->event);
            g->event = NULL;
        }
        g->status = st;
        g->error = mox__cuda_last_error(st);
        if (st == MOX_ERR_DEVICE_LOST)
            mox__cuda_dev_lost(dev, mox__cuda_last_message());
        mox__cuda_drop_readers(dev, g);
    }
    mox__cuda_completion_push(dev, g);
}

void mox__cuda_launch_group(mox__cuda_dev *dev, mox__submission *const *subs, uint32_t n,
                            uint32_t stream)
{
    mox__cuda_group *g = mox__cuda_group_new(n);
    if (!g) {
        fail_each(dev, subs, n, stream);
        return;
    }
    /* Phase A, dev->lock held: the group, its order, its description, and
     * what the plan cache and the event pool already hold for it. */
    if (!group_order(dev, g, subs, n, stream)) {
        mox__cuda_completion_push(dev, g);
        return;
    }
    build b = {.edges = &dev->scratch_u32[0], .gdeps = &dev->scratch_u32[1], .ext = &dev->scratch_u32[2]};
    mox__cuda_plan *plan = NULL;
    mox_status st = MOX_OK;
    /* A repeat of a recent plan is described against it (cuda_replay.c). */
    if (!mox__cuda_replay(dev, g, stream, &b.desc, &plan)) {
        b.edges->n = b.gdeps->n = b.ext->n = 0;
        st = build_desc(dev, g, &b);
        if (st == MOX_OK)
            g->inst = mox__cuda_plan_take(dev, &b.desc, stream, &plan);
    }
    if (st == MOX_OK) {
        g->event_spin = mox__cuda_event_spin(dev);
        mox__cuda_event_take(dev, g->event_spin, &g->event);
    }
    /* Phase B, no lock: the driver. */
    mox__unlock(&dev->lock);
    if (st == MOX_OK)
        st = launch_unlocked(dev, g, &b, plan, dev->streams[stream]);
    if (b.foreign.n)
        mox__cuda_foreign_unpin_events(&b.foreign); /* waited for (or not, on failure) */
    mox__free(b.waits);
    /* Phase C, dev->lock again: publish it to the completion thread. */
    mox__lock(&dev->lock);
    group_publish(dev, g, st);
}
