/* tests/cuda/sim_graph.c - the simulated driver's CUDA graphs: building,
 * instantiating, updating a kernel node's params, launching on a stream and
 * destroying an exec that may still be in flight. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_driver.h"

/* ---- graphs: nodes are executed in creation order (the backend adds
 * them in a topological order) ---- */

struct CUgraphNode_st {
    CUgraph graph;
    size_t index;
};

struct CUgraph_st {
    sim_node *nodes;
    struct CUgraphNode_st **handles;
    size_t count;
    size_t programmatic; /* programmatic edges added (they run as ordinary ones) */
};

struct CUgraphExec_st {
    CUgraph from;
    sim_node *nodes;
    size_t count;
    int inflight;   /* launches queued or running (g_lock) */
    bool destroyed; /* freed by the last launch to finish, as CUDA defers it */
};

EXPORT CUresult cuGraphCreate(CUgraph *g, unsigned int flags);
CUresult cuGraphCreate(CUgraph *g, unsigned int flags)
{
    (void)flags;
    *g = calloc(1, sizeof **g);
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuGraphDestroy(CUgraph g);
CUresult cuGraphDestroy(CUgraph g)
{
    for (size_t i = 0; i < g->count; i++)
        free(g->handles[i]);
    free(g->handles);
    free(g->nodes);
    free(g);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                     size_t ndeps, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphAddKernelNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                              const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    for (size_t i = 0; i < ndeps; i++) {
        if (!deps[i] || deps[i]->graph != g) {
            fprintf(stderr, "simcuda: kernel node dependency %zu of %zu is not a node of its graph\n", i, ndeps);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    sim_node n;
    unsigned int grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned int block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    CUresult r = sim_make_launch(p->func, grid, block, p->kernelParams, &n.launch);
    if (r != CUDA_SUCCESS)
        return r;
    n.fn = p->func;
    sim_node *nn = realloc(g->nodes, (g->count + 1) * sizeof *nn);
    if (!nn)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->nodes = nn;
    struct CUgraphNode_st **nh = realloc(g->handles, (g->count + 1) * sizeof *nh);
    if (!nh)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->handles = nh;
    struct CUgraphNode_st *h = calloc(1, sizeof *h);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    h->graph = g;
    h->index = g->count;
    g->nodes[g->count] = n;
    g->handles[g->count] = h;
    g->count++;
    *node = h;
    return CUDA_SUCCESS;
}

/* MOX_SIM_REFUSE_PDL=edges: programmatic edges are refused as a driver
 * without them would; =instantiate: graphs holding them do not instantiate. */
static bool refuse_pdl(const char *what)
{
    const char *v = getenv("MOX_SIM_REFUSE_PDL");
    return v && strcmp(v, what) == 0;
}

/* Edges with their data (CUDA 12.3+). Nodes run in creation order, so an
 * edge must go from an earlier node to a later one; its data must be what
 * CUDA accepts: ordinary, or programmatic from a kernel's programmatic or
 * launch-order port, to port 0, reserved bytes zero. */
EXPORT CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                                          const CUgraphEdgeData *edges, size_t count);
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                                   const CUgraphEdgeData *edges, size_t count)
{
    size_t programmatic = 0;
    for (size_t i = 0; i < count; i++) {
        if (!from[i] || !to[i] || from[i]->graph != g || to[i]->graph != g || from[i]->index >= to[i]->index) {
            fprintf(stderr, "simcuda: edge %zu of %zu does not join an earlier node to a later one of its graph\n",
                    i, count);
            return CUDA_ERROR_INVALID_VALUE;
        }
        CUgraphEdgeData e = edges ? edges[i] : (CUgraphEdgeData){0, 0, 0, {0}};
        bool zero = true;
        for (int k = 0; k < 5; k++)
            zero = zero && e.reserved[k] == 0;
        bool ordinary = e.type == CU_GRAPH_DEPENDENCY_TYPE_DEFAULT && e.from_port == 0;
        bool prog = e.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC &&
                    (e.from_port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC ||
                     e.from_port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER);
        if (!zero || e.to_port != 0 || !(ordinary || prog)) {
            fprintf(stderr, "simcuda: edge %zu has invalid data (type %u, ports %u/%u)\n", i, e.type,
                    e.from_port, e.to_port);
            return CUDA_ERROR_INVALID_VALUE;
        }
        programmatic += prog;
    }
    if (programmatic && refuse_pdl("edges"))
        return CUDA_ERROR_NOT_SUPPORTED;
    g->programmatic += programmatic;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    (void)flags;
    STICKY();
    if (g->programmatic && refuse_pdl("instantiate"))
        return CUDA_ERROR_NOT_SUPPORTED;
    CUgraphExec x = calloc(1, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->from = g;
    x->count = g->count;
    x->nodes = malloc((g->count ? g->count : 1) * sizeof *x->nodes);
    if (!x->nodes) {
        free(x);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(x->nodes, g->nodes, g->count * sizeof *x->nodes);
    *e = x;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode node,
                                               const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode node,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    STICKY();
    if (node->graph != e->from || node->index >= e->count)
        return CUDA_ERROR_INVALID_VALUE;
    sim_node *n = &e->nodes[node->index];
    if (p->func != n->fn || p->gridDimX != n->launch.grid[0] || p->blockDimX != n->launch.block[0])
        return CUDA_ERROR_INVALID_VALUE; /* the backend never changes topology or geometry */
    unsigned int grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned int block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    return sim_make_launch(p->func, grid, block, p->kernelParams, &n->launch);
}

void sim_exec_done(struct CUgraphExec_st *e)
{
    if (--e->inflight == 0 && e->destroyed) {
        free(e->nodes);
        free(e);
    }
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s);
CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    /* Legal in CUDA (launches of one exec serialise), but the backend
     * promises never to do it: an instance's status words would be shared
     * by two runs. MOX_SIM_STRICT_EXEC=1 (the backend's tests) checks it;
     * the benchmark's raw side does it on purpose. */
    static _Atomic int strict = -1; /* first launches of several threads may race to set it */
    if (atomic_load_explicit(&strict, memory_order_relaxed) < 0) {
        const char *v = getenv("MOX_SIM_STRICT_EXEC");
        atomic_store_explicit(&strict, v && v[0] == '1', memory_order_relaxed);
    }
    pthread_mutex_lock(&g_lock);
    int busy = strict && e->inflight;
    if (!busy)
        e->inflight++;
    pthread_mutex_unlock(&g_lock);
    if (busy) {
        fprintf(stderr, "simcuda: cuGraphLaunch of an exec still in flight\n");
        return CUDA_ERROR_INVALID_VALUE;
    }
    op *o = sim_op_new(OP_GRAPH);
    o->exec = e;
    o->nodes = malloc((e->count ? e->count : 1) * sizeof *o->nodes);
    if (!o->nodes) {
        free(o);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(o->nodes, e->nodes, e->count * sizeof *o->nodes);
    o->node_count = e->count;
    CUresult r = sim_submit(s, o);
    if (r != CUDA_SUCCESS) {
        pthread_mutex_lock(&g_lock);
        e->inflight--;
        pthread_mutex_unlock(&g_lock);
    }
    return r;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e);
CUresult cuGraphExecDestroy(CUgraphExec e)
{
    pthread_mutex_lock(&g_lock);
    bool busy = e->inflight > 0;
    e->destroyed = true;
    pthread_mutex_unlock(&g_lock);
    if (!busy) {
        free(e->nodes);
        free(e);
    }
    return CUDA_SUCCESS;
}
