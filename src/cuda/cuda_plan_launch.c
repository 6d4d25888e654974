/* src/cuda/cuda_plan_launch.c - launching an instance of a plan: its gate
 * dependency words (uploaded only when they change), each node's gate,
 * parameter updates only for nodes whose gate or arguments changed, then
 * one cuGraphLaunch; or, for stream plans, the nodes enqueued in index
 * order. */
#include "cuda/cuda_plan_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mox__cuda_deps_fill(const mox__cuda_inst *inst, const mox__cuda_ldesc *b, uint32_t *want)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        for (uint32_t e = 0; e < ln->gdep_cnt; e++)
            want[w++] = inst->slot_base + b->gdeps[ln->gdep_off + e];
        for (uint32_t e = 0; e < ln->ext_cnt; e++)
            want[w++] = b->ext[ln->ext_off + e];
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

/* The gate of node i: its status slot and its `count` dependencies, at
 * `off` in `want` and in the instance's deps array. */
static void make_gate(const mox__cuda_dev *dev, const mox__cuda_inst *inst, uint32_t i,
                      const uint32_t *want, uint32_t off, uint32_t count, mox_gate *gate)
{
    memset(gate, 0, sizeof *gate);
    gate->status = (uint32_t *)(uintptr_t)dev->pool;
    gate->host_flag = (uint32_t *)(uintptr_t)inst->host_flag_dev;
    gate->self = inst->slot_base + i;
    gate->dep_count = count;
    if (count <= MOX_GATE_INLINE_DEPS)
        memcpy(gate->inline_deps, want + off, 4u * count);
    else
        gate->deps = (const uint32_t *)(uintptr_t)(inst->deps_dev + 4ull * off);
}

/* Whether node i's gate on the instance is already the one make_gate would
 * give it: its status pool, flag and slot are the instance's and never
 * change, so only the dependencies are compared. */
static bool same_gate(const mox_gate *last, const mox__cuda_inst *inst, const uint32_t *want,
                      uint32_t off, uint32_t count)
{
    if (last->dep_count != count)
        return false;
    if (count > MOX_GATE_INLINE_DEPS)
        return last->deps == (const uint32_t *)(uintptr_t)(inst->deps_dev + 4ull * off);
    for (uint32_t e = 0; e < count; e++)
        if (last->inline_deps[e] != want[off + e])
            return false;
    return true;
}

/* A kernel's parameter list: its gate, then the dispatch's arguments. */
static void kernel_params(void **params, mox_gate *gate, const mox__dispatch *d)
{
    params[0] = gate;
    for (uint32_t a = 0; a < d->param_count; a++)
        params[a + 1] = d->params[a];
}

/* Gives kernel node i of a graph instance the gate and d's arguments. */
static mox_status update_node(mox__cuda_dev *dev, mox__cuda_inst *inst, uint32_t i,
                              const mox__cuda_lnode *ln, mox_gate *gate)
{
    const mox__cuda_api *api = dev->api;
    const plan_node *n = &inst->plan->nodes[i];
    const mox__dispatch *d = ln->d;
    void *params[MOX_MAX_PARAMS + 1];
    kernel_params(params, gate, d);
    const mox_launch_config *c = &n->config;
    CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,      c->grid.x,  c->grid.y,  c->grid.z, c->block.x,
                                     c->block.y, c->block.z, c->shared_bytes, params, NULL};
    CUresult r = api->cuGraphExecKernelNodeSetParams(inst->exec, inst->plan->graph_nodes[i], &kp);
    if (r != CUDA_SUCCESS) {
        inst->params_valid = false;
        char ctx[160];
        snprintf(ctx, sizeof ctx, "(kernel %s)", ln->k->name);
        return mox__cuda_fail(api, r, "cuGraphExecKernelNodeSetParams", ctx);
    }
    atomic_fetch_add(&dev->stats.node_updates, 1);
    inst->run_obs = 0; /* other arguments: its runs may take another time */
    inst->gated_nodes += (gate->dep_count != 0) - (inst->node_state[i].gate.dep_count != 0);
    inst->node_state[i].gate = *gate;
    mox__cuda_keep_args(inst->last_args + inst->node_state[i].args_offset, ln->k, d);
    return MOX_OK;
}

/* Enqueues node i of a stream plan: a transfer, or its kernel. */
static mox_status enqueue_node(mox__cuda_dev *dev, mox__cuda_inst *inst, uint32_t i,
                               const mox__cuda_lnode *ln, mox__cuda_group *group, CUstream stream,
                               mox_gate *gate)
{
    const mox__cuda_api *api = dev->api;
    const mox__dispatch *d = ln->d;
    if (d->kind != MOX__CMD_KERNEL) {
        if (d->kind == MOX__CMD_COPY)
            return mox__cuda_copy(dev, group, i, d, gate, stream);
        if (d->kind == MOX__CMD_FILL)
            return mox__cuda_fill(dev, group, i, d, gate, stream);
        return mox__cuda_transfer(dev, group, d, stream);
    }
    const plan_node *n = &inst->plan->nodes[i];
    const mox_launch_config *c = &n->config;
    void *params[MOX_MAX_PARAMS + 1];
    kernel_params(params, gate, d);
    CUresult r = api->cuLaunchKernel(n->fn, c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y,
                                     c->block.z, c->shared_bytes, stream, params, NULL);
    if (r != CUDA_SUCCESS) {
        char ctx[160];
        snprintf(ctx, sizeof ctx, "(kernel %s)", ln->k->name);
        return mox__cuda_fail(api, r, "cuLaunchKernel", ctx);
    }
    atomic_fetch_add(&dev->stats.stream_launches, 1);
    return MOX_OK;
}

/* Enqueues (stream plans) or updates and launches (graphs) the nodes of
 * `b` on `inst`; `want` holds every node's gate dependencies. A graph
 * node is updated only where its gate or arguments differ from what the
 * instance was last given. */
static mox_status launch_nodes(mox__cuda_dev *dev, mox__cuda_inst *inst, const mox__cuda_ldesc *b,
                               mox__cuda_group *group, CUstream stream, const uint32_t *want)
{
    mox__cuda_plan *p = inst->plan;
    uint32_t off = 0;
    /* A replayed launch lists only the nodes to update, in node order
     * (cuda_replay.c); none of its gates has a dependency. */
    for (uint32_t k = 0; b->replayed && k < b->stale; k++) {
        const mox__cuda_lnode *ln = &b->nodes[k];
        mox_gate gate;
        make_gate(dev, inst, ln->node, want, 0, 0, &gate);
        mox_status st = update_node(dev, inst, ln->node, ln, &gate);
        if (st != MOX_OK)
            return st;
    }
    for (uint32_t i = 0, n = b->replayed ? 0 : b->count; i < n; i++) {
        const mox__cuda_lnode *ln = &b->nodes[i];
        uint32_t count = ln->gdep_cnt + ln->ext_cnt;
        mox_gate gate;
        mox_status st = MOX_OK;
        if (!p->use_graph) {
            make_gate(dev, inst, i, want, off, count, &gate);
            st = enqueue_node(dev, inst, i, ln, group, stream, &gate);
        } else if (!inst->params_valid || !same_gate(&inst->node_state[i].gate, inst, want, off, count) ||
                   !mox__cuda_same_args(inst, i, ln->k, ln->d)) {
            make_gate(dev, inst, i, want, off, count, &gate);
            st = update_node(dev, inst, i, ln, &gate);
        }
        if (st != MOX_OK)
            return st;
        off += count;
    }
    if (p->use_graph) {
        /* Nodes skipped above already matched, so the exec now matches
         * node_state everywhere. */
        inst->params_valid = true;
        CUresult r = dev->api->cuGraphLaunch(inst->exec, stream);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(dev->api, r, "cuGraphLaunch", NULL);
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

    uint32_t total = b->deps_total;
    uint32_t stack_deps[512];
    uint32_t *want = stack_deps;
    if (total) {
        atomic_fetch_add(&dev->stats.gate_deps, total);
        if (total > 512 && !(want = mox__malloc(total * 4u)))
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for gate dependencies");
        mox__cuda_deps_fill(inst, b, want);
    }
    /* Gates of at most MOX_GATE_INLINE_DEPS dependencies carry them in the
     * kernel's parameters: no upload, and no dependent load on the device. */
    mox_status st = upload_deps(dev, inst, want, b->deps_array ? total : 0, stream);
    if (st == MOX_OK)
        st = launch_nodes(dev, inst, b, group, stream, want);
    if (want != stack_deps)
        mox__free(want);
    return st;
}
