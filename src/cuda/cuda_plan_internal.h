/* src/cuda/cuda_plan_internal.h - the plan cache's shapes, shared by
 * cuda_plan.c (the cache, instances), cuda_graph.c (a plan's graph) and
 * cuda_plan_launch.c (launching an instance). */
#ifndef MOX_CUDA_PLAN_INTERNAL_H
#define MOX_CUDA_PLAN_INTERNAL_H

#include "cuda/cuda_internal.h"

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

/* Builds p->graph (and p->graph_nodes) for the shape of `b`, its first
 * launch's arguments as the nodes' initial parameters. */
mox_status mox__cuda_plan_build_graph(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b);
/* cuGraphInstantiate of p->graph (built first if a failed rebuild left the
 * plan without one), rebuilding it without programmatic edges once if the
 * driver refuses them. */
mox_status mox__cuda_plan_instantiate(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                                      CUgraphExec *exec);

/* The gate dependency words of `b`, and their values on `inst`. */
uint32_t mox__cuda_deps_total(const mox__cuda_ldesc *b);
void mox__cuda_deps_fill(mox__cuda_inst *inst, const mox__cuda_ldesc *b, uint32_t *want, bool layout);

#endif
