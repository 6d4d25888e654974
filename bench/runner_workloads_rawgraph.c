/* runner_workloads_rawgraph.c - the workloads suite's raw replayed graph:
 * one run's generated kernels (the raw-gen launches) as a CUDA graph in
 * which each launch follows the one before (the stream's order), built and
 * instantiated once per instance, then replayed. What any runtime that
 * turns a run into a graph could at best do with these kernels and this
 * order: the bound for mox's pipelined runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_workloads_raw.h"

static bool graph_build(raw_instance *ri)
{
    raw_ctx *rc = ri->rc;
    const mox__cuda_api *cu = rc->cu;
    if (!raw_check(rc, cu->cuGraphCreate(&ri->graph, 0), "cuGraphCreate"))
        return false;
    CUgraphNode prev = NULL;
    for (size_t i = 0; i < ri->count[RAW_GEN]; i++) {
        const raw_launch *l = &ri->launches[RAW_GEN][i];
        CUDA_KERNEL_NODE_PARAMS_v1 kp = {l->fn,           l->cfg.grid.x,  l->cfg.grid.y,
                                         l->cfg.grid.z,   l->cfg.block.x, l->cfg.block.y,
                                         l->cfg.block.z,  l->cfg.shared_bytes,
                                         (void **)l->params, NULL};
        CUgraphNode node;
        char what[96];
        snprintf(what, sizeof what, "cuGraphAddKernelNode (launch %zu)", i);
        if (!raw_check(rc, cu->cuGraphAddKernelNode(&node, ri->graph, prev ? &prev : NULL, prev ? 1 : 0, &kp),
                         what))
            return false;
        prev = node;
    }
    return raw_check(rc, cu->cuGraphInstantiateWithFlags(&ri->graph_exec, ri->graph, 0),
                       "cuGraphInstantiateWithFlags");
}

bool raw_graph_runs(raw_instance *ri, uint32_t runs)
{
    raw_ctx *rc = ri->rc;
    const mox__cuda_api *cu = rc->cu;
    bool ok = !rc->dead && raw_check(rc, cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent");
    if (ok && !ri->graph_exec)
        ok = graph_build(ri);
    for (uint32_t r = 0; ok && r < runs; r++)
        ok = raw_check(rc, cu->cuGraphLaunch(ri->graph_exec, rc->stream), "cuGraphLaunch");
    ok = ok && raw_check(rc, cu->cuEventRecord(rc->done, rc->stream), "cuEventRecord");
    CUresult q = CUDA_ERROR_NOT_READY;
    while (ok && q == CUDA_ERROR_NOT_READY)
        q = cu->cuEventQuery(rc->done);
    return ok && raw_check(rc, q, "cuEventQuery");
}

void raw_graph_close(raw_instance *ri)
{
    const mox__cuda_api *cu = ri->rc->cu;
    if (ri->graph_exec)
        cu->cuGraphExecDestroy(ri->graph_exec);
    if (ri->graph)
        cu->cuGraphDestroy(ri->graph);
    ri->graph_exec = NULL;
    ri->graph = NULL;
}
