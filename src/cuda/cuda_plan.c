/* src/cuda/cuda_plan.c - batches as CUDA graphs, cached by topology.
 *
 * A plan is a batch's shape: per dispatch the kernel function, grid, block
 * and argument sizes, plus the dependency edges. Its CUDA graph (kernel
 * nodes whose edges are the core's dependency edges, so independent
 * dispatches run concurrently) is built once. Each instance of the plan is
 * one instantiated executable graph with its own gate slots, deps array and
 * host flag. An instance is re-launched only when idle, after its previous
 * run completed, so a repeat of the same shape costs: the kernel-node
 * parameter updates for the nodes whose arguments changed, and one
 * cuGraphLaunch. Nothing is re-instantiated; a pipeline that keeps k
 * batches of one shape in flight ends up with k instances.
 *
 * Launches with transfers (and, with MOX_CUDA_LAUNCH=stream, every launch)
 * skip the graph: their nodes are enqueued in index order on one stream (a
 * topological order: predecessors have lower indices). A single dispatch
 * goes through a one-node graph too: on the H200 that round trip was faster
 * than cuLaunchKernel (22 vs 26 us).
 */
#include "cuda/cuda_plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_BUCKETS 256u
#define PLAN_LIMIT 512u


/* ---- shapes ----
 * A launch's shape: per node the function (a transfer: its kind), grid,
 * block and dynamic shared bytes, its edge count, then the edges. The
 * function fixes the kernel and so its parameter sizes. The hash only
 * picks a bucket (it leaves out what rarely tells shapes apart); the
 * plan's nodes and edges are the key, compared exactly. */

static inline uint64_t shape_mix(uint64_t h, uint64_t w)
{
    return (h ^ w) * 1099511628211ull;
}

static uint64_t shape_hash(const mox__cuda_ldesc *b)
{
    uint64_t h = shape_mix(1469598103934665603ull, b->count);
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        const mox_launch_config *c = &ln->d->config;
        h = shape_mix(h, ln->fn ? (uint64_t)(uintptr_t)ln->fn : (uint64_t)ln->d->kind);
        /* a stream node's command runs at its own size: not part of the shape */
        h = shape_mix(h, (ln->fn ? (uint64_t)c->grid.x << 32 | c->block.x : 0) + ln->edge_cnt);
    }
    for (uint32_t e = 0; e < b->edge_count; e++)
        h = shape_mix(h, b->edges[e]);
    return h ^ (h >> 29);
}

/* Whether plan `p` was made for the shape of `b`. */
static bool plan_matches(const mox__cuda_plan *p, const mox__cuda_ldesc *b)
{
    uint32_t count = b->count;
    if (p->count != count || p->edge_count != b->edge_count)
        return false;
    const plan_node *n = p->nodes;
    const mox__cuda_lnode *ln = b->nodes;
    for (uint32_t i = 0; i < count; i++, n++, ln++) {
        if (n->fn != ln->fn || n->edge_cnt != ln->edge_cnt || (!n->fn && n->kind != ln->d->kind) ||
            (n->fn && memcmp(&n->config, &ln->d->config, sizeof n->config) != 0))
            return false;
    }
    return b->edge_count == 0 || memcmp(p->edges, b->edges, (size_t)b->edge_count * sizeof *b->edges) == 0;
}

static bool use_graph_for(const mox__cuda_dev *dev, const mox__cuda_ldesc *b)
{
    if (b->has_transfer)
        return false; /* transfers (and what runs best alone) are enqueued on the stream */
    /* Measured on an H200 (bench/cuda_overhead, B): one launch + wait took
     * 22 us through a one-node graph and 26 us through cuLaunchKernel, so
     * graphs are the default for every launch without transfers. */
    return dev->mode != MOX__CUDA_LAUNCH_STREAM;
}

/* ---- plan lifetime ---- */

static void inst_destroy(mox__cuda_dev *dev, mox__cuda_inst *inst)
{
    const mox__cuda_api *api = dev->api;
    if (inst->exec)
        api->cuGraphExecDestroy(inst->exec);
    if (inst->deps_dev)
        api->cuMemFree(inst->deps_dev);
    if (inst->deps_stage)
        api->cuMemFreeHost(inst->deps_stage);
    if (inst->host_flag)
        mox__cuda_flag_free(dev, inst->host_flag, inst->host_flag_dev);
    if (inst->plan)
        mox__cuda_slots_free(dev, inst->slot_base, inst->count);
    mox__free(inst->deps_host);
    mox__free(inst->node_state);
    mox__free(inst->last_args);
    mox__free(inst);
}

static void plan_destroy(mox__cuda_dev *dev, mox__cuda_plan *p)
{
    for (uint32_t i = 0; i < p->inst_count; i++)
        inst_destroy(dev, p->insts[i]);
    if (p->graph)
        dev->api->cuGraphDestroy(p->graph);
    mox__free(p->insts);
    mox__free(p->graph_nodes);
    mox__free(p->nodes);
    mox__free(p->edges);
    mox__free(p);
}

void mox__cuda_plans_destroy(mox__cuda_dev *dev)
{
    if (!dev->plans)
        return;
    for (uint32_t b = 0; b < dev->plan_cap; b++) {
        for (mox__cuda_plan *p = dev->plans[b], *n; p; p = n) {
            n = p->next;
            plan_destroy(dev, p);
        }
    }
    mox__free(dev->plans);
    dev->plans = NULL;
    dev->plan_count = 0;
}

/* Drops p from a stream's recent plans, keeping the rest in order. */
static void recent_forget(mox__cuda_plan **recent, const mox__cuda_plan *p)
{
    uint32_t to = 0;
    for (uint32_t j = 0; j < MOX__CUDA_STREAM_PLANS; j++)
        if (recent[j] != p)
            recent[to++] = recent[j];
    while (to < MOX__CUDA_STREAM_PLANS)
        recent[to++] = NULL;
}

static bool plan_evictable(const mox__cuda_plan *p)
{
    for (uint32_t i = 0; i < p->inst_count; i++)
        if (p->insts[i]->busy || p->insts[i]->readers || atomic_load(&p->insts[i]->foreign_readers))
            return false;
    return true;
}

/* Drops the least recently used plan that nothing in flight uses. The
 * cache is the launcher's; whether an instance is busy or read is decided
 * under dev->lock (completions change it); an evicted plan's instances are
 * idle and unread, so nobody else can reach them while they are destroyed
 * with no lock held. */
static void plan_evict_one(mox__cuda_dev *dev)
{
    mox__cuda_plan **victim = NULL;
    mox__lock(&dev->lock);
    for (uint32_t b = 0; b < dev->plan_cap; b++)
        for (mox__cuda_plan **pp = &dev->plans[b]; *pp; pp = &(*pp)->next)
            if (plan_evictable(*pp) && (!victim || (*pp)->last_used < (*victim)->last_used))
                victim = pp;
    mox__cuda_plan *p = victim ? *victim : NULL;
    if (p)
        *victim = p->next;
    for (uint32_t q = 0; p && q < MOX__CUDA_STREAMS; q++)
        recent_forget(dev->stream_plan[q], p);
    mox__unlock(&dev->lock);
    if (!p)
        return;
    plan_destroy(dev, p);
    dev->plan_count--;
}

static mox_status plan_create(mox__cuda_dev *dev, const mox__cuda_ldesc *b, uint64_t hash,
                              mox__cuda_plan **out)
{
    mox__cuda_plan *p = mox__calloc(1, sizeof *p);
    if (!p)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    p->hash = hash;
    p->count = b->count;
    p->edge_count = b->edge_count;
    p->nodes = mox__calloc(b->count ? b->count : 1, sizeof *p->nodes);
    p->edges = mox__calloc(p->edge_count ? p->edge_count : 1, sizeof *p->edges);
    if (!p->nodes || !p->edges) {
        plan_destroy(dev, p);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    }
    if (b->edge_count) /* none: b->edges may be NULL */
        memcpy(p->edges, b->edges, (size_t)b->edge_count * sizeof *b->edges);
    uint32_t ungated = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        const mox__dispatch *d = ln->d;
        plan_node *n = &p->nodes[i];
        n->fn = ln->fn;
        n->kind = d->kind;
        ungated += ln->k && n->fn && (n->fn == ln->k->fn_ungated || n->fn == ln->k->fn_ungated_noalias);
        n->config = d->config;
        n->args_size = ln->k ? mox__cuda_args_bytes(ln->k) : 0;
        n->edge_off = ln->edge_off;
        n->edge_cnt = ln->edge_cnt;
        p->args_total += n->args_size;
    }
    p->use_graph = use_graph_for(dev, b);
    if (p->use_graph) {
        mox_status st = mox__cuda_plan_build_graph(dev, p, b);
        if (st != MOX_OK) {
            plan_destroy(dev, p);
            return st;
        }
    }
    atomic_fetch_add(&dev->stats.plans, 1);
    atomic_fetch_add(&dev->stats.ungated_nodes, ungated);
    *out = p;
    return MOX_OK;
}

static mox_status inst_create(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                              mox__cuda_inst **out)
{
    mox__cuda_inst *inst = mox__calloc(1, sizeof *inst);
    if (!inst)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
    uint32_t n = p->count ? p->count : 1;
    inst->count = p->count;
    inst->node_state = mox__calloc(n, sizeof *inst->node_state);
    inst->last_args = mox__calloc(p->args_total ? p->args_total : 1, 1);
    mox_status st = MOX_OK;
    if (!inst->node_state || !inst->last_args) {
        st = mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
        goto fail;
    }
    st = mox__cuda_slots_alloc(dev, p->count, &inst->slot_base);
    if (st != MOX_OK)
        goto fail;
    inst->plan = p; /* from here on inst_destroy frees the slots */
    /* Slots come back from destroyed instances as they were: one whose
     * dispatch failed still reads FAILED. Reset before the first launch,
     * or a new plan's dispatch inherits another's failure (seen on the
     * H200 under tests/stress: "kernel 'fill' failed: mox_fail(7)"). */
    inst->dirty = true;
    st = mox__cuda_flag_alloc(dev, &inst->host_flag, &inst->host_flag_dev);
    if (st != MOX_OK)
        goto fail;
    uint32_t off = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        inst->node_state[i].args_offset = off;
        off += p->nodes[i].args_size;
    }
    if (p->use_graph) {
        st = mox__cuda_plan_instantiate(dev, p, b, &inst->exec);
        if (st != MOX_OK)
            goto fail;
        atomic_fetch_add(&dev->stats.instantiations, 1);
    }
    if (p->inst_count == p->inst_cap) {
        uint32_t cap = p->inst_cap ? 2u * p->inst_cap : 4u;
        mox__cuda_inst **ni = mox__realloc(p->insts, cap * sizeof *ni);
        if (!ni) {
            st = mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
            goto fail;
        }
        p->insts = ni;
        p->inst_cap = cap;
    }
    p->insts[p->inst_count++] = inst;
    *out = inst;
    return MOX_OK;
fail:
    inst_destroy(dev, inst);
    return st;
}

/* Among the idle instances (two at least; `b` has a deps array), one
 * whose device deps already hold what `b` needs (no upload): in a steady
 * pipeline the same instances keep gating on the same predecessors. Else
 * the most recently idle one. */
static mox__cuda_inst *pick_idle(mox__cuda_plan *p, const mox__cuda_ldesc *b)
{
    uint32_t total = b->deps_total;
    if (total > 256)
        return p->idle;
    uint32_t want[256];
    for (mox__cuda_inst *i = p->idle; i; i = i->next_idle) {
        if (i->deps_len != total)
            continue;
        mox__cuda_deps_fill(i, b, want);
        if (memcmp(want, i->deps_host, total * 4u) == 0)
            return i;
    }
    return p->idle;
}

/* The cached plan of b's shape, or NULL. A stream's launch often has the
 * shape of one of its last few (a repeated batch; a pipeline, whose
 * launches carry one execution or several merged): those plans are
 * compared first (a different count of nodes or edges rejects at once),
 * and the shape hashed only when none matches. The plan found moves to
 * the front. */
static mox__cuda_plan *plan_find(mox__cuda_dev *dev, const mox__cuda_ldesc *b, uint32_t stream)
{
    mox__cuda_plan **recent = dev->stream_plan[stream];
    mox__cuda_plan *p = NULL;
    uint32_t j = 0;
    for (; j < MOX__CUDA_STREAM_PLANS && recent[j]; j++)
        if (plan_matches(recent[j], b))
            break;
    if (j < MOX__CUDA_STREAM_PLANS && recent[j]) {
        p = recent[j];
    } else {
        uint64_t h = shape_hash(b);
        for (p = dev->plans[h % dev->plan_cap]; p && !(p->hash == h && plan_matches(p, b)); p = p->next)
            ;
        if (!p)
            return NULL;
        j = MOX__CUDA_STREAM_PLANS - 1; /* the oldest makes room */
    }
    for (; j > 0; j--)
        recent[j] = recent[j - 1];
    recent[0] = p;
    return p;
}

mox__cuda_inst *mox__cuda_plan_take(mox__cuda_dev *dev, const mox__cuda_ldesc *b, uint32_t stream,
                                    mox__cuda_plan **plan)
{
    *plan = NULL;
    if (!dev->plans)
        return NULL; /* made by the first mox__cuda_plan_acquire */
    mox__cuda_plan *p = plan_find(dev, b, stream);
    if (!p)
        return NULL;
    *plan = p;
    p->last_used = ++dev->plan_clock;
    /* With one idle instance, or no deps array, the most recently idle. */
    mox__cuda_inst *inst = p->idle && p->idle->next_idle && b->deps_array ? pick_idle(p, b) : p->idle;
    if (inst) {
        mox__cuda_inst **pp = &p->idle;
        while (*pp != inst)
            pp = &(*pp)->next_idle;
        *pp = inst->next_idle;
        inst->next_idle = NULL;
        inst->busy = true;
    }
    return inst;
}

mox_status mox__cuda_plan_acquire(mox__cuda_dev *dev, const mox__cuda_ldesc *b, mox__cuda_plan *p,
                                  mox__cuda_inst **out)
{
    if (!dev->plans) {
        dev->plans = mox__calloc(PLAN_BUCKETS, sizeof *dev->plans);
        if (!dev->plans)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for the CUDA graph cache");
        dev->plan_cap = PLAN_BUCKETS;
    }
    if (!p) {
        if (dev->plan_count >= PLAN_LIMIT)
            plan_evict_one(dev);
        uint64_t h = shape_hash(b);
        mox_status st = plan_create(dev, b, h, &p);
        if (st != MOX_OK)
            return st;
        mox__cuda_plan **bucket = &dev->plans[h % dev->plan_cap];
        p->next = *bucket;
        *bucket = p;
        dev->plan_count++;
        p->last_used = ++dev->plan_clock;
    }
    mox_status st = inst_create(dev, p, b, out); /* the driver: no lock */
    if (st == MOX_OK)
        (*out)->busy = true; /* nobody else sees it yet */
    return st;
}

void mox__cuda_inst_release(mox__cuda_dev *dev, mox__cuda_inst *inst)
{
    (void)dev;
    if (inst->busy || inst->readers || atomic_load(&inst->foreign_readers))
        return;
    inst->next_idle = inst->plan->idle;
    inst->plan->idle = inst;
}
