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
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_BUCKETS 256u
#define PLAN_LIMIT 512u

typedef struct plan_node {
    CUfunction fn;                  /* NULL: a transfer */
    uint32_t grid[3], block[3];
    uint32_t shared_bytes;          /* dynamic shared memory per block (part of the key) */
    uint32_t args_size;
    uint32_t edge_off, edge_cnt;    /* into plan->edges */
} plan_node;

struct mox__cuda_plan {
    mox__cuda_plan *next;           /* bucket chain */
    uint64_t hash;
    uint64_t *key;
    uint32_t key_len;
    uint32_t count;
    plan_node *nodes;
    uint32_t *edges;                /* deps of each node, concatenated */
    uint32_t edge_count;
    uint32_t args_total;
    bool use_graph;
    uint32_t programmatic;          /* programmatic edges in the graph (MOX_CUDA_PDL) */
    CUgraph graph;
    CUgraphNode *graph_nodes;
    mox__cuda_inst *idle;
    mox__cuda_inst **insts;
    uint32_t inst_count, inst_cap;
    uint64_t last_used;
};

/* ---- keys ---- */

static uint32_t key_words(const mox__cuda_ldesc *b)
{
    uint32_t n = 1;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        n += 7 + ln->edge_cnt + (ln->k ? ln->k->param_count : 0);
    }
    return n;
}

static void key_fill(const mox__cuda_ldesc *b, uint64_t *k)
{
    uint32_t w = 0;
    k[w++] = b->count;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        const mox__dispatch *d = ln->d;
        k[w++] = ln->k ? (uint64_t)(uintptr_t)mox__cuda_entry_fn(ln->k, d) : (uint64_t)d->kind;
        k[w++] = ((uint64_t)d->config.grid.x << 32) | d->config.block.x;
        k[w++] = ((uint64_t)d->config.grid.y << 32) | d->config.block.y;
        k[w++] = ((uint64_t)d->config.grid.z << 32) | d->config.block.z;
        uint32_t pc = ln->k ? ln->k->param_count : 0;
        k[w++] = ((uint64_t)pc << 32) | ln->edge_cnt;
        k[w++] = d->config.shared_bytes;
        for (uint32_t a = 0; a < pc; a++)
            k[w++] = ln->k->param_size[a];
        for (uint32_t e = 0; e < ln->edge_cnt; e++)
            k[w++] = b->edges[ln->edge_off + e];
        k[w++] = 0x6d6f78u; /* node separator */
    }
}

static uint64_t key_hash(const uint64_t *k, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) {
        h ^= k[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

static bool use_graph_for(const mox__cuda_dev *dev, const mox__cuda_ldesc *b)
{
    if (b->has_transfer)
        return false; /* transfers go through staging, enqueued on the stream */
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
    mox__free(inst->dep_offset);
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
    mox__free(p->key);
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
    pthread_mutex_lock(&dev->lock);
    for (uint32_t b = 0; b < dev->plan_cap; b++)
        for (mox__cuda_plan **pp = &dev->plans[b]; *pp; pp = &(*pp)->next)
            if (plan_evictable(*pp) && (!victim || (*pp)->last_used < (*victim)->last_used))
                victim = pp;
    mox__cuda_plan *p = victim ? *victim : NULL;
    if (p)
        *victim = p->next;
    pthread_mutex_unlock(&dev->lock);
    if (!p)
        return;
    plan_destroy(dev, p);
    dev->plan_count--;
}

/* Whether node i's incoming edges are programmatic (MOX_CUDA_PDL): its
 * kernel's entries start with griddepcontrol.wait, so it may start before
 * its predecessors end. Graphs hold kernel nodes only (launches with
 * transfers take the stream path), so every upstream end is a kernel. */
static bool edges_programmatic(const mox__cuda_dev *dev, const plan_node *n, const mox__cuda_lnode *ln)
{
    return dev->pdl != MOX__CUDA_PDL_OFF && !atomic_load(&dev->pdl_refused) && n->edge_cnt > 0 &&
           ln->k && ln->k->grid_wait;
}

/* Node i's edges, added after the node with their edge data. A driver that
 * refuses programmatic edges gets ordinary ones, and MOX_CUDA_PDL is off for
 * the device from then on. */
static CUresult add_programmatic_edges(mox__cuda_dev *dev, mox__cuda_plan *p, uint32_t i,
                                       const CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed)
{
    const mox__cuda_api *api = dev->api;
    uint32_t cnt = p->nodes[i].edge_cnt;
    unsigned char port = dev->pdl == MOX__CUDA_PDL_START ? CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER
                                                         : CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
    for (uint32_t e = 0; e < cnt; e++) {
        to[e] = p->graph_nodes[i];
        ed[e] = (CUgraphEdgeData){port, 0, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, {0}};
    }
    CUresult r = api->cuGraphAddDependencies(p->graph, from, to, ed, cnt);
    if (r == CUDA_SUCCESS) {
        p->programmatic += cnt;
        atomic_fetch_add(&dev->stats.programmatic_edges, cnt);
        return r;
    }
    atomic_store(&dev->pdl_refused, true);
    memset(ed, 0, cnt * sizeof *ed);
    return api->cuGraphAddDependencies(p->graph, from, to, ed, cnt);
}

static mox_status plan_build_graph(mox__cuda_dev *dev, mox__cuda_plan *p,
                                   const mox__cuda_ldesc *b)
{
    const mox__cuda_api *api = dev->api;
    p->programmatic = 0;
    CUresult r = api->cuGraphCreate(&p->graph, 0);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuGraphCreate", NULL);
    p->graph_nodes = mox__calloc(p->count, sizeof *p->graph_nodes);
    uint32_t ne = p->edge_count ? p->edge_count : 1;
    CUgraphNode *deps = mox__calloc(2u * ne, sizeof *deps);
    CUgraphEdgeData *ed = mox__calloc(ne, sizeof *ed);
    if (!p->graph_nodes || !deps || !ed) {
        mox__free(deps);
        mox__free(ed);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a CUDA graph");
    }
    /* Initial parameters: the first launch's arguments and a disabled gate;
     * every instance sets its real gates before its first launch. */
    mox_gate gate;
    memset(&gate, 0, sizeof gate);
    for (uint32_t i = 0; i < p->count && r == CUDA_SUCCESS; i++) {
        const plan_node *n = &p->nodes[i];
        const mox__dispatch *d = b->nodes[i].d;
        bool prog = edges_programmatic(dev, n, &b->nodes[i]);
        for (uint32_t e = 0; e < n->edge_cnt; e++)
            deps[e] = p->graph_nodes[p->edges[n->edge_off + e]];
        void *params[MOX_MAX_PARAMS + 1];
        params[0] = &gate;
        for (uint32_t a = 0; a < d->param_count; a++)
            params[a + 1] = d->params[a];
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,         n->grid[0],  n->grid[1], n->grid[2],
                                         n->block[0],   n->block[1], n->block[2], n->shared_bytes,
                                         params,        NULL};
        r = api->cuGraphAddKernelNode(&p->graph_nodes[i], p->graph, prog ? NULL : deps,
                                      prog ? 0 : n->edge_cnt, &kp);
        if (r == CUDA_SUCCESS && prog)
            r = add_programmatic_edges(dev, p, i, deps, deps + ne, ed);
        if (r != CUDA_SUCCESS) {
            char ctx[160];
            snprintf(ctx, sizeof ctx, "(kernel %s)", b->nodes[i].k->name);
            mox__free(deps);
            mox__free(ed);
            return mox__cuda_fail(api, r, prog ? "cuGraphAddDependencies" : "cuGraphAddKernelNode", ctx);
        }
    }
    mox__free(deps);
    mox__free(ed);
    return MOX_OK;
}

static mox_status plan_create(mox__cuda_dev *dev, const mox__cuda_ldesc *b, uint64_t *key,
                              uint32_t key_len, uint64_t hash, mox__cuda_plan **out)
{
    mox__cuda_plan *p = mox__calloc(1, sizeof *p);
    if (!p)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    p->hash = hash;
    p->key_len = key_len;
    p->count = b->count;
    for (uint32_t i = 0; i < b->count; i++)
        p->edge_count += b->nodes[i].edge_cnt;
    p->nodes = mox__calloc(b->count ? b->count : 1, sizeof *p->nodes);
    p->edges = mox__calloc(p->edge_count ? p->edge_count : 1, sizeof *p->edges);
    if (!p->nodes || !p->edges) {
        plan_destroy(dev, p);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    }
    uint32_t e = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        const mox__dispatch *d = ln->d;
        plan_node *n = &p->nodes[i];
        n->fn = ln->k ? mox__cuda_entry_fn(ln->k, d) : NULL;
        n->grid[0] = d->config.grid.x;
        n->grid[1] = d->config.grid.y;
        n->grid[2] = d->config.grid.z;
        n->block[0] = d->config.block.x;
        n->block[1] = d->config.block.y;
        n->block[2] = d->config.block.z;
        n->shared_bytes = d->config.shared_bytes;
        for (uint32_t a = 0; ln->k && a < ln->k->param_count; a++)
            n->args_size += ln->k->param_size[a];
        n->edge_off = e;
        n->edge_cnt = ln->edge_cnt;
        for (uint32_t a = 0; a < ln->edge_cnt; a++)
            p->edges[e++] = b->edges[ln->edge_off + a];
        p->args_total += n->args_size;
    }
    p->use_graph = use_graph_for(dev, b);
    if (p->use_graph) {
        mox_status st = plan_build_graph(dev, p, b);
        if (st != MOX_OK) {
            plan_destroy(dev, p);
            return st;
        }
    }
    p->key = key; /* owned from here on */
    atomic_fetch_add(&dev->stats.plans, 1);
    *out = p;
    return MOX_OK;
}

/* A graph the driver would not instantiate with programmatic edges is
 * built again without them (MOX_CUDA_PDL off for the device from then on)
 * and instantiated once more; only before the plan has an instance. */
static CUresult instantiate(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                            CUgraphExec *exec)
{
    const mox__cuda_api *api = dev->api;
    CUresult r = api->cuGraphInstantiateWithFlags(exec, p->graph, 0);
    if (r == CUDA_SUCCESS || p->programmatic == 0 || p->inst_count > 0)
        return r;
    atomic_store(&dev->pdl_refused, true);
    api->cuGraphDestroy(p->graph);
    p->graph = NULL;
    mox__free(p->graph_nodes);
    p->graph_nodes = NULL;
    if (plan_build_graph(dev, p, b) != MOX_OK)
        return r;
    return api->cuGraphInstantiateWithFlags(exec, p->graph, 0);
}

static mox_status inst_create(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                              mox__cuda_inst **out)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_inst *inst = mox__calloc(1, sizeof *inst);
    if (!inst)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
    uint32_t n = p->count ? p->count : 1;
    inst->count = p->count;
    inst->dep_offset = mox__calloc(2u * n, sizeof *inst->dep_offset);
    inst->dep_count = inst->dep_offset + n;
    inst->node_state = mox__calloc(n, sizeof *inst->node_state);
    inst->last_args = mox__calloc(p->args_total ? p->args_total : 1, 1);
    mox_status st = MOX_OK;
    if (!inst->dep_offset || !inst->node_state || !inst->last_args) {
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
        CUresult r = instantiate(dev, p, b, &inst->exec);
        if (r != CUDA_SUCCESS) {
            st = mox__cuda_fail(api, r, "cuGraphInstantiateWithFlags", NULL);
            goto fail;
        }
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

static uint32_t deps_total(const mox__cuda_ldesc *b)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < b->count; i++)
        total += b->nodes[i].gdep_cnt + b->nodes[i].ext_cnt;
    return total;
}

/* The dependency words `b` needs on `inst`: gate dependencies inside the
 * launch as absolute slots, then those on earlier launches (their slots, or
 * a sentinel). Fills inst->dep_offset/dep_count when `layout`. */
static void deps_fill(mox__cuda_inst *inst, const mox__cuda_ldesc *b, uint32_t *want, bool layout)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        if (layout)
            inst->dep_offset[i] = w;
        for (uint32_t e = 0; e < ln->gdep_cnt; e++)
            want[w++] = inst->slot_base + b->gdeps[ln->gdep_off + e];
        for (uint32_t e = 0; e < ln->ext_cnt; e++)
            want[w++] = b->ext[ln->ext_off + e];
        if (layout)
            inst->dep_count[i] = w - inst->dep_offset[i];
    }
}

/* Among the idle instances, one whose device deps already hold what `b`
 * needs (no upload): in a steady pipeline the same instances keep gating
 * on the same predecessors. Else the most recently idle one. */
static mox__cuda_inst *pick_idle(mox__cuda_plan *p, const mox__cuda_ldesc *b)
{
    uint32_t total = deps_total(b);
    if (total == 0 || total > 256 || !p->idle->next_idle)
        return p->idle;
    uint32_t want[256];
    for (mox__cuda_inst *i = p->idle; i; i = i->next_idle) {
        if (i->deps_len != total)
            continue;
        deps_fill(i, b, want, false);
        if (memcmp(want, i->deps_host, total * 4u) == 0)
            return i;
    }
    return p->idle;
}

mox_status mox__cuda_plan_acquire(mox__cuda_dev *dev, const mox__cuda_ldesc *b,
                                  mox__cuda_inst **out)
{
    if (!dev->plans) {
        dev->plans = mox__calloc(PLAN_BUCKETS, sizeof *dev->plans);
        if (!dev->plans)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for the CUDA graph cache");
        dev->plan_cap = PLAN_BUCKETS;
    }
    uint32_t len = key_words(b);
    uint64_t stack_key[256];
    uint64_t *key = len <= 256 ? stack_key : mox__malloc(len * sizeof *key);
    if (!key)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA graph key");
    key_fill(b, key);
    uint64_t h = key_hash(key, len);
    mox__cuda_plan **bucket = &dev->plans[h % dev->plan_cap];
    mox__cuda_plan *p = *bucket;
    while (p && !(p->hash == h && p->key_len == len && memcmp(p->key, key, len * 8u) == 0))
        p = p->next;
    if (!p) {
        if (dev->plan_count >= PLAN_LIMIT)
            plan_evict_one(dev);
        uint64_t *owned = key == stack_key ? mox__malloc(len * sizeof *owned) : key;
        if (!owned)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA graph key");
        if (owned != key)
            memcpy(owned, key, len * sizeof *owned);
        mox_status st = plan_create(dev, b, owned, len, h, &p);
        if (st != MOX_OK) {
            mox__free(owned);
            return st;
        }
        bucket = &dev->plans[h % dev->plan_cap]; /* eviction may have changed chains */
        p->next = *bucket;
        *bucket = p;
        dev->plan_count++;
    } else if (key != stack_key) {
        mox__free(key);
    }
    p->last_used = ++dev->plan_clock;
    /* Idle lists grow on completions: under dev->lock. */
    pthread_mutex_lock(&dev->lock);
    mox__cuda_inst *inst = p->idle ? pick_idle(p, b) : NULL;
    if (inst) {
        mox__cuda_inst **pp = &p->idle;
        while (*pp != inst)
            pp = &(*pp)->next_idle;
        *pp = inst->next_idle;
        inst->next_idle = NULL;
        inst->busy = true;
    }
    pthread_mutex_unlock(&dev->lock);
    if (!inst) {
        mox_status st = inst_create(dev, p, b, &inst); /* the driver: no lock */
        if (st != MOX_OK)
            return st;
        inst->busy = true; /* nobody else sees it yet */
    }
    *out = inst;
    return MOX_OK;
}

void mox__cuda_inst_release(mox__cuda_dev *dev, mox__cuda_inst *inst)
{
    (void)dev;
    if (inst->busy || inst->readers || atomic_load(&inst->foreign_readers))
        return;
    inst->next_idle = inst->plan->idle;
    inst->plan->idle = inst;
}

/* ---- launching ---- */

static mox_status upload_deps(mox__cuda_dev *dev, mox__cuda_inst *inst, const uint32_t *want,
                              uint32_t len, CUstream stream)
{
    const mox__cuda_api *api = dev->api;
    if (len == 0) {
        inst->deps_len = 0; /* every gate has dep_count 0: contents unused */
        return MOX_OK;
    }
    if (len == inst->deps_len && memcmp(want, inst->deps_host, len * 4u) == 0)
        return MOX_OK;
    if (len > inst->deps_cap) {
        uint32_t cap = len < 64 ? 64 : len;
        if (inst->deps_dev)
            api->cuMemFree(inst->deps_dev);
        if (inst->deps_stage)
            api->cuMemFreeHost(inst->deps_stage);
        inst->deps_dev = 0;
        inst->deps_stage = NULL;
        mox__free(inst->deps_host);
        inst->deps_host = mox__malloc(cap * 4u);
        inst->deps_cap = 0;
        inst->deps_len = 0;
        inst->params_valid = false; /* the deps pointer in every gate moves */
        if (!inst->deps_host)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for gate dependencies");
        CUresult r = api->cuMemAlloc(&inst->deps_dev, cap * 4u);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(api, r, "cuMemAlloc", "(gate dependencies)");
        void *stage = NULL;
        r = api->cuMemHostAlloc(&stage, cap * 4u, CU_MEMHOSTALLOC_PORTABLE);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(api, r, "cuMemHostAlloc", "(gate dependencies)");
        inst->deps_stage = stage;
        inst->deps_cap = cap;
    }
    /* The stage is only rewritten while the instance is idle, i.e. after the
     * copy that read it last has run. */
    memcpy(inst->deps_stage, want, len * 4u);
    CUresult r = api->cuMemcpyHtoDAsync(inst->deps_dev, inst->deps_stage, len * 4u, stream);
    if (r != CUDA_SUCCESS) {
        inst->deps_len = 0;
        return mox__cuda_fail(api, r, "cuMemcpyHtoDAsync", "(gate dependencies)");
    }
    memcpy(inst->deps_host, want, len * 4u);
    inst->deps_len = len;
    atomic_fetch_add(&dev->stats.deps_uploads, 1);
    return MOX_OK;
}

/* The gate of node i: its status slot and dependencies. */
static void make_gate(const mox__cuda_dev *dev, const mox__cuda_inst *inst, uint32_t i,
                      const uint32_t *want, mox_gate *gate)
{
    memset(gate, 0, sizeof *gate);
    gate->status = (uint32_t *)(uintptr_t)dev->pool;
    gate->host_flag = (uint32_t *)(uintptr_t)inst->host_flag_dev;
    gate->self = inst->slot_base + i;
    gate->dep_count = inst->dep_count[i];
    if (gate->dep_count <= MOX_GATE_INLINE_DEPS)
        memcpy(gate->inline_deps, want + inst->dep_offset[i], 4u * gate->dep_count);
    else
        gate->deps = (const uint32_t *)(uintptr_t)(inst->deps_dev + 4ull * inst->dep_offset[i]);
}

/* memcmp of one kernel argument's bytes: arguments are mostly 4 or 8
 * bytes, compared inline rather than through a call per argument. */
static bool same_arg(const void *a, const void *b, uint32_t size)
{
    if (size == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    if (size == 4) {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x == y;
    }
    return memcmp(a, b, size) == 0;
}

/* Enqueues (stream plans) or updates and launches (graphs) the nodes of
 * `b` on `inst`; `want` holds every node's gate dependencies. */
static mox_status launch_nodes(mox__cuda_dev *dev, mox__cuda_inst *inst, const mox__cuda_ldesc *b,
                               mox__cuda_group *group, CUstream stream, const uint32_t *want)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_plan *p = inst->plan;
    mox_status st;
    CUresult r;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        const mox__dispatch *d = ln->d;
        const plan_node *n = &p->nodes[i];
        mox_gate gate;
        make_gate(dev, inst, i, want, &gate);
        if (!ln->k) {
            st = d->kind == MOX__CMD_COPY ? mox__cuda_copy(dev, group, i, d, &gate, stream)
                                          : mox__cuda_transfer(dev, group, d, stream);
            if (st != MOX_OK)
                return st;
            continue;
        }
        void *params[MOX_MAX_PARAMS + 1];
        params[0] = &gate;
        for (uint32_t a = 0; a < d->param_count; a++)
            params[a + 1] = d->params[a];
        if (!p->use_graph) {
            r = api->cuLaunchKernel(n->fn, n->grid[0], n->grid[1], n->grid[2], n->block[0],
                                    n->block[1], n->block[2], n->shared_bytes, stream, params, NULL);
            if (r != CUDA_SUCCESS) {
                char ctx[160];
                snprintf(ctx, sizeof ctx, "(kernel %s)", ln->k->name);
                return mox__cuda_fail(api, r, "cuLaunchKernel", ctx);
            }
            atomic_fetch_add(&dev->stats.stream_launches, 1);
            continue;
        }
        /* Graph: update the node only if its gate or arguments changed. */
        mox__cuda_node_state *ns = &inst->node_state[i];
        unsigned char *last = inst->last_args + ns->args_offset;
        bool same = inst->params_valid && memcmp(&ns->gate, &gate, sizeof gate) == 0;
        uint32_t off = 0;
        for (uint32_t a = 0; same && a < d->param_count; a++) {
            if (!same_arg(last + off, d->params[a], ln->k->param_size[a]))
                same = false;
            off += ln->k->param_size[a];
        }
        if (same)
            continue;
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,       n->grid[0],  n->grid[1], n->grid[2],
                                         n->block[0], n->block[1], n->block[2], n->shared_bytes,
                                         params,      NULL};
        r = api->cuGraphExecKernelNodeSetParams(inst->exec, p->graph_nodes[i], &kp);
        if (r != CUDA_SUCCESS) {
            inst->params_valid = false;
            char ctx[160];
            snprintf(ctx, sizeof ctx, "(kernel %s)", ln->k->name);
            return mox__cuda_fail(api, r, "cuGraphExecKernelNodeSetParams", ctx);
        }
        atomic_fetch_add(&dev->stats.node_updates, 1);
        ns->gate = gate;
        off = 0;
        for (uint32_t a = 0; a < d->param_count; a++) {
            memcpy(last + off, d->params[a], ln->k->param_size[a]);
            off += ln->k->param_size[a];
        }
    }
    if (p->use_graph) {
        /* Nodes skipped above already matched, so the exec now matches
         * node_state everywhere. */
        inst->params_valid = true;
        r = api->cuGraphLaunch(inst->exec, stream);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(api, r, "cuGraphLaunch", NULL);
        atomic_fetch_add(&dev->stats.graph_launches, 1);
    }
    return MOX_OK;
}

mox_status mox__cuda_inst_launch(mox__cuda_dev *dev, mox__cuda_inst *inst,
                                 const mox__cuda_ldesc *b, mox__cuda_group *group,
                                 CUstream stream)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_plan *p = inst->plan;
    CUresult r;
    if (inst->dirty) {
        r = api->cuMemsetD32Async(dev->pool + 8ull * inst->slot_base, 0, 2ull * p->count, stream);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(api, r, "cuMemsetD32Async", "(gate status reset)");
        inst->dirty = false;
        atomic_fetch_add(&dev->stats.resets, 1);
    }
    *inst->host_flag = 0;

    uint32_t total = deps_total(b);
    if (total)
        atomic_fetch_add(&dev->stats.gate_deps, total);
    uint32_t stack_deps[512];
    uint32_t *want = total <= 512 ? stack_deps : mox__malloc(total * 4u);
    if (!want)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for gate dependencies");
    deps_fill(inst, b, want, true);
    /* Gates of at most MOX_GATE_INLINE_DEPS dependencies carry them in the
     * kernel's parameters: no upload, and no dependent load on the device. */
    bool any_array = false;
    for (uint32_t i = 0; i < b->count; i++)
        any_array |= inst->dep_count[i] > MOX_GATE_INLINE_DEPS;
    mox_status st = upload_deps(dev, inst, want, any_array ? total : 0, stream);
    if (st == MOX_OK)
        st = launch_nodes(dev, inst, b, group, stream, want);
    if (want != stack_deps)
        mox__free(want);
    return st;
}

