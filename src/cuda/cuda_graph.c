/* src/cuda/cuda_graph.c - a plan's CUDA graph: one kernel node per
 * dispatch with the core's edges, programmatic where MOX_CUDA_PDL allows
 * (docs/cuda-backend.md, "Programmatic dependent launch"), and its
 * instantiation, which falls back to ordinary edges when the driver
 * refuses programmatic ones. */
#include "cuda/cuda_plan_internal.h"

#include <stdio.h>
#include <string.h>

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

mox_status mox__cuda_plan_build_graph(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b)
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
    for (uint32_t i = 0; i < p->count; i++) {
        const plan_node *n = &p->nodes[i];
        const mox__dispatch *d = b->nodes[i].d;
        bool prog = edges_programmatic(dev, n, &b->nodes[i]);
        for (uint32_t e = 0; e < n->edge_cnt; e++)
            deps[e] = p->graph_nodes[p->edges[n->edge_off + e]];
        void *params[MOX_MAX_PARAMS + 1];
        params[0] = &gate;
        for (uint32_t a = 0; a < d->param_count; a++)
            params[a + 1] = d->params[a];
        const mox_launch_config *c = &n->config;
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {n->fn,      c->grid.x,  c->grid.y,  c->grid.z, c->block.x,
                                         c->block.y, c->block.z, c->shared_bytes, params, NULL};
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

/* Drops p->graph (a rebuild starts from nothing; a half-built graph is
 * never instantiated). */
static void drop_graph(mox__cuda_dev *dev, mox__cuda_plan *p)
{
    if (p->graph)
        dev->api->cuGraphDestroy(p->graph);
    p->graph = NULL;
    mox__free(p->graph_nodes);
    p->graph_nodes = NULL;
}

/* One instantiation of p->graph. A graph the driver would not instantiate
 * with programmatic edges is built again without them (MOX_CUDA_PDL off for
 * the device from then on) and instantiated once more; only before the plan
 * has an instance. A rebuild that fails leaves the plan without a graph,
 * and the next instantiation builds it first. */
mox_status mox__cuda_plan_instantiate(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                                      CUgraphExec *exec)
{
    const mox__cuda_api *api = dev->api;
    mox_status st;
    if (!p->graph && (st = mox__cuda_plan_build_graph(dev, p, b)) != MOX_OK) {
        drop_graph(dev, p);
        return st;
    }
    CUresult r = api->cuGraphInstantiateWithFlags(exec, p->graph, 0);
    if (r != CUDA_SUCCESS && p->programmatic > 0 && p->inst_count == 0) {
        atomic_store(&dev->pdl_refused, true);
        drop_graph(dev, p);
        if ((st = mox__cuda_plan_build_graph(dev, p, b)) != MOX_OK) {
            drop_graph(dev, p);
            return st;
        }
        r = api->cuGraphInstantiateWithFlags(exec, p->graph, 0);
    }
    return r == CUDA_SUCCESS ? MOX_OK : mox__cuda_fail(api, r, "cuGraphInstantiateWithFlags", NULL);
}
