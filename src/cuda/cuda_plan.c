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
 * Single dispatches (and, with MOX_CUDA_LAUNCH=stream, every batch) skip the
 * graph and go through cuLaunchKernel in dependency order on one stream.
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLAN_BUCKETS 256u
#define PLAN_LIMIT 512u

typedef struct plan_node {
    CUfunction fn;
    uint32_t grid[3], block[3];
    uint32_t args_size;
    uint32_t dep_offset, dep_count; /* into plan->edges */
    bool empty;                     /* an empty grid: runs nothing */
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
    CUgraph graph;
    CUgraphNode *graph_nodes;
    mox__cuda_inst *idle;
    mox__cuda_inst **insts;
    uint32_t inst_count, inst_cap;
    uint64_t last_used;
};

/* ---- keys ---- */

static uint32_t key_words(const mox__cuda_batch *b)
{
    uint32_t n = 1;
    for (uint32_t i = 0; i < b->count; i++)
        n += 9 + b->dispatches[i].arg_count + b->dispatches[i].dep_count;
    return n;
}

static void key_fill(const mox__cuda_batch *b, uint64_t *k)
{
    uint32_t w = 0;
    k[w++] = b->count;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_dispatch *d = &b->dispatches[i];
        k[w++] = (uint64_t)(uintptr_t)d->kernel->fn;
        for (int a = 0; a < 3; a++)
            k[w++] = ((uint64_t)d->grid[a] << 32) | d->block[a];
        k[w++] = d->arg_count;
        for (uint32_t a = 0; a < d->arg_count; a++)
            k[w++] = d->arg_sizes[a];
        k[w++] = d->dep_count;
        for (uint32_t a = 0; a < d->dep_count; a++)
            k[w++] = d->deps[a];
        k[w++] = 0x6d6f78u; /* separator: keeps variable-length fields unambiguous */
        k[w++] = i;
        k[w++] = 0;
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

static bool use_graph_for(const mox__cuda_dev *dev, uint32_t count)
{
    switch (dev->mode) {
    case MOX__CUDA_LAUNCH_GRAPH:
        return true;
    case MOX__CUDA_LAUNCH_STREAM:
        return false;
    default:
        return count > 1;
    }
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
        mox__cuda_slots_free(dev, inst->slot_base, inst->plan->count);
    free(inst->deps_host);
    free(inst->dep_offset);
    free(inst->node_state);
    free(inst->last_args);
    free(inst);
}

static void plan_destroy(mox__cuda_dev *dev, mox__cuda_plan *p)
{
    for (uint32_t i = 0; i < p->inst_count; i++)
        inst_destroy(dev, p->insts[i]);
    if (p->graph)
        dev->api->cuGraphDestroy(p->graph);
    free(p->insts);
    free(p->graph_nodes);
    free(p->nodes);
    free(p->edges);
    free(p->key);
    free(p);
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
    free(dev->plans);
    dev->plans = NULL;
    dev->plan_count = 0;
}

static bool plan_evictable(const mox__cuda_plan *p)
{
    for (uint32_t i = 0; i < p->inst_count; i++)
        if (p->insts[i]->busy || p->insts[i]->readers)
            return false;
    return true;
}

/* Drops the least recently used plan that nothing in flight uses. */
static void plan_evict_one(mox__cuda_dev *dev)
{
    mox__cuda_plan **victim = NULL;
    for (uint32_t b = 0; b < dev->plan_cap; b++)
        for (mox__cuda_plan **pp = &dev->plans[b]; *pp; pp = &(*pp)->next)
            if (plan_evictable(*pp) && (!victim || (*pp)->last_used < (*victim)->last_used))
                victim = pp;
    if (!victim)
        return;
    mox__cuda_plan *p = *victim;
    *victim = p->next;
    plan_destroy(dev, p);
    dev->plan_count--;
}

static mox_status plan_build_graph(mox__cuda_dev *dev, mox__cuda_plan *p,
                                   const mox__cuda_batch *b)
{
    const mox__cuda_api *api = dev->api;
    CUresult r = api->cuGraphCreate(&p->graph, 0);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuGraphCreate", NULL);
    p->graph_nodes = calloc(p->count, sizeof *p->graph_nodes);
    CUgraphNode *deps = calloc(p->edge_count ? p->edge_count : 1, sizeof *deps);
    if (!p->graph_nodes || !deps) {
        free(deps);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory building a CUDA graph");
    }
    /* Initial parameters: the first batch's, with a disabled gate. Every
     * instance sets its real parameters before its first launch. */
    mox_gate gate;
    memset(&gate, 0, sizeof gate);
    for (uint32_t i = 0; i < p->count; i++) {
        const plan_node *n = &p->nodes[i];
        for (uint32_t e = 0; e < n->dep_count; e++)
            deps[e] = p->graph_nodes[p->edges[n->dep_offset + e]];
        if (n->empty) {
            r = api->cuGraphAddEmptyNode(&p->graph_nodes[i], p->graph, deps, n->dep_count);
            if (r != CUDA_SUCCESS) {
                free(deps);
                return mox__cuda_fail(api, r, "cuGraphAddEmptyNode", NULL);
            }
            continue;
        }
        const mox__cuda_dispatch *d = &b->dispatches[i];
        void *params[MOX__CUDA_MAX_ARGS + 1];
        params[0] = &gate;
        for (uint32_t a = 0; a < d->arg_count; a++)
            params[a + 1] = (void *)d->args[a];
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,         n->grid[0],  n->grid[1], n->grid[2],
                                         n->block[0],   n->block[1], n->block[2], 0,
                                         params,        NULL};
        r = api->cuGraphAddKernelNode(&p->graph_nodes[i], p->graph, deps, n->dep_count, &kp);
        if (r != CUDA_SUCCESS) {
            free(deps);
            char ctx[160];
            snprintf(ctx, sizeof ctx, "(kernel %s)", d->kernel->name);
            return mox__cuda_fail(api, r, "cuGraphAddKernelNode", ctx);
        }
    }
    free(deps);
    return MOX_OK;
}

static mox_status plan_create(mox__cuda_dev *dev, const mox__cuda_batch *b, uint64_t *key,
                              uint32_t key_len, uint64_t hash, mox__cuda_plan **out)
{
    mox__cuda_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    p->key = key;
    p->key_len = key_len;
    p->hash = hash;
    p->count = b->count;
    for (uint32_t i = 0; i < b->count; i++)
        p->edge_count += b->dispatches[i].dep_count;
    p->nodes = calloc(b->count ? b->count : 1, sizeof *p->nodes);
    p->edges = calloc(p->edge_count ? p->edge_count : 1, sizeof *p->edges);
    if (!p->nodes || !p->edges) {
        p->key = NULL;
        plan_destroy(dev, p);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA plan");
    }
    uint32_t e = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_dispatch *d = &b->dispatches[i];
        plan_node *n = &p->nodes[i];
        n->fn = d->kernel->fn;
        memcpy(n->grid, d->grid, sizeof n->grid);
        memcpy(n->block, d->block, sizeof n->block);
        n->empty = d->grid[0] == 0 || d->grid[1] == 0 || d->grid[2] == 0;
        for (uint32_t a = 0; a < d->arg_count; a++)
            n->args_size += d->arg_sizes[a];
        n->dep_offset = e;
        n->dep_count = d->dep_count;
        for (uint32_t a = 0; a < d->dep_count; a++)
            p->edges[e++] = d->deps[a];
        p->args_total += n->args_size;
    }
    p->use_graph = use_graph_for(dev, b->count);
    if (p->use_graph) {
        mox_status st = plan_build_graph(dev, p, b);
        if (st != MOX_OK) {
            p->key = NULL;
            plan_destroy(dev, p);
            return st;
        }
    }
    atomic_fetch_add(&dev->stats.plans, 1);
    *out = p;
    return MOX_OK;
}

static mox_status inst_create(mox__cuda_dev *dev, mox__cuda_plan *p, mox__cuda_inst **out)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_inst *inst = calloc(1, sizeof *inst);
    if (!inst)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
    uint32_t n = p->count ? p->count : 1;
    inst->dep_offset = calloc(2u * n, sizeof *inst->dep_offset);
    inst->dep_count = inst->dep_offset + n;
    inst->node_state = calloc(n, sizeof *inst->node_state);
    inst->last_args_cap = p->args_total ? p->args_total : 1;
    inst->last_args = calloc(inst->last_args_cap, 1);
    mox_status st = MOX_OK;
    if (!inst->dep_offset || !inst->node_state || !inst->last_args) {
        st = mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a CUDA instance");
        goto fail;
    }
    st = mox__cuda_slots_alloc(dev, p->count, &inst->slot_base);
    if (st != MOX_OK)
        goto fail;
    inst->plan = p; /* from here on inst_destroy frees the slots */
    st = mox__cuda_flag_alloc(dev, &inst->host_flag, &inst->host_flag_dev);
    if (st != MOX_OK)
        goto fail;
    uint32_t off = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        inst->node_state[i].args_offset = off;
        inst->node_state[i].args_size = p->nodes[i].args_size;
        off += p->nodes[i].args_size;
    }
    if (p->use_graph) {
        CUresult r = api->cuGraphInstantiateWithFlags(&inst->exec, p->graph, 0);
        if (r != CUDA_SUCCESS) {
            st = mox__cuda_fail(api, r, "cuGraphInstantiateWithFlags", NULL);
            goto fail;
        }
        atomic_fetch_add(&dev->stats.instantiations, 1);
    }
    if (p->inst_count == p->inst_cap) {
        uint32_t cap = p->inst_cap ? 2u * p->inst_cap : 4u;
        mox__cuda_inst **ni = realloc(p->insts, cap * sizeof *ni);
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

mox_status mox__cuda_plan_acquire(mox__cuda_dev *dev, const mox__cuda_batch *b,
                                  mox__cuda_inst **out)
{
    if (!dev->plans) {
        dev->plans = calloc(PLAN_BUCKETS, sizeof *dev->plans);
        if (!dev->plans)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for the CUDA graph cache");
        dev->plan_cap = PLAN_BUCKETS;
    }
    for (uint32_t i = 0; i < b->count; i++)
        if (b->dispatches[i].arg_count > MOX__CUDA_MAX_ARGS)
            return mox__cuda_error(MOX_ERR_TOO_MANY_ARGUMENTS, "kernel %s has %u arguments",
                                   b->dispatches[i].kernel->name, b->dispatches[i].arg_count);
    uint32_t len = key_words(b);
    uint64_t stack_key[256];
    uint64_t *key = len <= 256 ? stack_key : malloc(len * sizeof *key);
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
        uint64_t *owned = key == stack_key ? malloc(len * sizeof *owned) : key;
        if (!owned)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA graph key");
        if (owned != key)
            memcpy(owned, key, len * sizeof *owned);
        mox_status st = plan_create(dev, b, owned, len, h, &p);
        if (st != MOX_OK) {
            free(owned);
            return st;
        }
        bucket = &dev->plans[h % dev->plan_cap]; /* eviction may have changed chains */
        p->next = *bucket;
        *bucket = p;
        dev->plan_count++;
    } else if (key != stack_key) {
        free(key);
    }
    p->last_used = ++dev->plan_clock;
    mox__cuda_inst *inst = p->idle;
    if (inst) {
        p->idle = inst->next_idle;
        inst->next_idle = NULL;
    } else {
        mox_status st = inst_create(dev, p, &inst);
        if (st != MOX_OK)
            return st;
    }
    inst->busy = true;
    *out = inst;
    return MOX_OK;
}

void mox__cuda_inst_release(mox__cuda_dev *dev, mox__cuda_inst *inst)
{
    (void)dev;
    if (inst->busy || inst->readers)
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
        free(inst->deps_host);
        inst->deps_host = malloc(cap * 4u);
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

mox_status mox__cuda_inst_launch(mox__cuda_dev *dev, mox__cuda_inst *inst,
                                 const mox__cuda_batch *b, const uint32_t *ext_slots,
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

    /* Dependency words: intra-batch edges as absolute slots, then external
     * gate dependencies (slots of earlier instances, or the sentinel). */
    uint32_t total = p->edge_count;
    for (uint32_t i = 0; i < b->count; i++)
        total += b->dispatches[i].ext_count + (b->dispatches[i].inherited_failure ? 1u : 0u);
    uint32_t stack_deps[512];
    uint32_t *want = total <= 512 ? stack_deps : malloc(total * 4u);
    if (!want)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for gate dependencies");
    uint32_t w = 0;
    const uint32_t *ext = ext_slots;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_dispatch *d = &b->dispatches[i];
        inst->dep_offset[i] = w;
        for (uint32_t e = 0; e < d->dep_count; e++)
            want[w++] = inst->slot_base + d->deps[e];
        for (uint32_t e = 0; e < d->ext_count; e++)
            want[w++] = *ext++;
        if (d->inherited_failure)
            want[w++] = MOX__CUDA_SENTINEL_SLOT;
        inst->dep_count[i] = w - inst->dep_offset[i];
    }
    mox_status st = upload_deps(dev, inst, want, w, stream);
    if (want != stack_deps)
        free(want);
    if (st != MOX_OK)
        return st;

    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_dispatch *d = &b->dispatches[i];
        const plan_node *n = &p->nodes[i];
        if (n->empty)
            continue;
        mox_gate gate;
        memset(&gate, 0, sizeof gate);
        gate.status = (uint32_t *)(uintptr_t)dev->pool;
        gate.deps = (const uint32_t *)(uintptr_t)(inst->deps_dev + 4ull * inst->dep_offset[i]);
        gate.host_flag = (uint32_t *)(uintptr_t)inst->host_flag_dev;
        gate.self = inst->slot_base + i;
        gate.dep_count = inst->dep_count[i];
        void *params[MOX__CUDA_MAX_ARGS + 1];
        params[0] = &gate;
        for (uint32_t a = 0; a < d->arg_count; a++)
            params[a + 1] = (void *)d->args[a];
        if (!p->use_graph) {
            r = api->cuLaunchKernel(n->fn, n->grid[0], n->grid[1], n->grid[2], n->block[0],
                                    n->block[1], n->block[2], 0, stream, params, NULL);
            if (r != CUDA_SUCCESS) {
                char ctx[160];
                snprintf(ctx, sizeof ctx, "(kernel %s)", d->kernel->name);
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
        for (uint32_t a = 0; a < d->arg_count; a++) {
            if (same && memcmp(last + off, d->args[a], d->arg_sizes[a]) != 0)
                same = false;
            off += d->arg_sizes[a];
        }
        if (same)
            continue;
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,       n->grid[0],  n->grid[1], n->grid[2],
                                         n->block[0], n->block[1], n->block[2], 0,
                                         params,      NULL};
        r = api->cuGraphExecKernelNodeSetParams(inst->exec, p->graph_nodes[i], &kp);
        if (r != CUDA_SUCCESS) {
            inst->params_valid = false;
            char ctx[160];
            snprintf(ctx, sizeof ctx, "(kernel %s)", d->kernel->name);
            return mox__cuda_fail(api, r, "cuGraphExecKernelNodeSetParams", ctx);
        }
        atomic_fetch_add(&dev->stats.node_updates, 1);
        ns->gate = gate;
        off = 0;
        for (uint32_t a = 0; a < d->arg_count; a++) {
            memcpy(last + off, d->args[a], d->arg_sizes[a]);
            off += d->arg_sizes[a];
        }
    }
    if (p->use_graph) {
        /* Nodes skipped above were already valid, so the exec now matches
         * node_state for all of them. */
        inst->params_valid = true;
        r = api->cuGraphLaunch(inst->exec, stream);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(api, r, "cuGraphLaunch", NULL);
        atomic_fetch_add(&dev->stats.graph_launches, 1);
    }
    return MOX_OK;
}
