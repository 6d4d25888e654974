/* src/cuda/cuda_plan_launch.c - launching an instance of a plan: its gate
 * dependency words (uploaded only when they change), each node's gate,
 * parameter updates only for nodes whose gate or arguments changed, then
 * one cuGraphLaunch; or, for stream plans, the nodes enqueued in index
 * order. */
#include "cuda/cuda_plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t mox__cuda_deps_total(const mox__cuda_ldesc *b)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < b->count; i++)
        total += b->nodes[i].gdep_cnt + b->nodes[i].ext_cnt;
    return total;
}

/* The dependency words `b` needs on `inst`: gate dependencies inside the
 * launch as absolute slots, then those on earlier launches (their slots, or
 * a sentinel). Fills inst->dep_offset/dep_count when `layout`. */
void mox__cuda_deps_fill(mox__cuda_inst *inst, const mox__cuda_ldesc *b, uint32_t *want, bool layout)
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

/* A kernel's parameter list: its gate, then the dispatch's arguments. */
static void kernel_params(void **params, mox_gate *gate, const mox__dispatch *d)
{
    params[0] = gate;
    for (uint32_t a = 0; a < d->param_count; a++)
        params[a + 1] = d->params[a];
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
        if (!p->use_graph) {
            kernel_params(params, &gate, d);
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
        kernel_params(params, &gate, d);
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
        inst->run_obs = 0; /* other arguments: its runs may take another time */
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

    uint32_t total = mox__cuda_deps_total(b);
    if (total)
        atomic_fetch_add(&dev->stats.gate_deps, total);
    uint32_t stack_deps[512];
    uint32_t *want = total <= 512 ? stack_deps : mox__malloc(total * 4u);
    if (!want)
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for gate dependencies");
    mox__cuda_deps_fill(inst, b, want, true);
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
