/* src/cuda/cuda_plan_internal.h - the plan cache's shapes, shared by
 * cuda_plan.c (the cache, instances), cuda_graph.c (a plan's graph) and
 * cuda_plan_launch.c (launching an instance). */
#ifndef MOX_CUDA_PLAN_INTERNAL_H
#define MOX_CUDA_PLAN_INTERNAL_H

#include "cuda/cuda_internal.h"

#include <string.h>

typedef struct plan_node {
    CUfunction fn;                  /* NULL: a transfer, of `kind` */
    mox__cmd_kind kind;
    mox_launch_config config;       /* grid, block, dynamic shared bytes */
    uint32_t args_size;
    uint32_t edge_off, edge_cnt;    /* into plan->edges */
} plan_node;

/* A plan is found by its shape: a hash of it picks the bucket, then the
 * shape is compared exactly with the plan's own nodes and edges (what the
 * graph was built from), so no key is kept besides them. */
struct mox__cuda_plan {
    mox__cuda_plan *next;           /* bucket chain */
    uint64_t hash;
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

/* ---- a node's last arguments, kept by its instance ----
 * Packed in the kernel's parameter sizes; a kernel whose parameters are
 * all 4 or 8 bytes (word_params) keeps each in 8 bytes, zero-extended, so
 * that comparing one is a load of the argument and of the word kept,
 * whatever its size. */

/* Bytes kept for a node of kernel k. */
static inline uint32_t mox__cuda_args_bytes(const mox__cuda_kernel *k)
{
    if (k->word_params)
        return 8u * k->param_count;
    uint32_t bytes = 0;
    for (uint32_t a = 0; a < k->param_count; a++)
        bytes += k->param_size[a];
    return bytes;
}

/* Argument a of d as the word kept for it (word_params kernels). */
static inline uint64_t mox__cuda_arg_word(const mox__cuda_kernel *k, const mox__dispatch *d, uint32_t a)
{
    uint64_t v;
    if (k->wide_params >> a & 1u) {
        memcpy(&v, d->params[a], 8);
    } else {
        uint32_t w;
        memcpy(&w, d->params[a], 4);
        v = w;
    }
    return v;
}

/* Keeps d's arguments at `last`. */
static inline void mox__cuda_keep_args(unsigned char *last, const mox__cuda_kernel *k, const mox__dispatch *d)
{
    for (uint32_t a = 0; a < d->param_count; a++) {
        if (k->word_params) {
            uint64_t v = mox__cuda_arg_word(k, d, a);
            memcpy(last, &v, 8);
            last += 8;
        } else {
            memcpy(last, d->params[a], k->param_size[a]);
            last += k->param_size[a];
        }
    }
}

/* memcmp of one packed argument's bytes: mostly 4 or 8 (a kernel with one
 * parameter of another size keeps all packed), compared inline rather
 * than through a call per argument. */
static inline bool mox__cuda_same_bytes(const void *a, const void *b, uint32_t size)
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

/* Whether dispatch d's arguments are those node i of the instance was
 * last given. */
static inline bool mox__cuda_same_args(const mox__cuda_inst *inst, uint32_t i, const mox__cuda_kernel *k,
                                       const mox__dispatch *d)
{
    const unsigned char *last = inst->last_args + inst->node_state[i].args_offset;
    uint32_t n = d->param_count;
    if (k->word_params) {
        for (uint32_t a = 0; a < n; a++, last += 8) {
            uint64_t kept;
            memcpy(&kept, last, 8);
            if (mox__cuda_arg_word(k, d, a) != kept)
                return false;
        }
        return true;
    }
    for (uint32_t a = 0; a < n; a++) {
        if (!mox__cuda_same_bytes(last, d->params[a], k->param_size[a]))
            return false;
        last += k->param_size[a];
    }
    return true;
}

/* Builds p->graph (and p->graph_nodes) for the shape of `b`, its first
 * launch's arguments as the nodes' initial parameters. */
mox_status mox__cuda_plan_build_graph(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b);
/* cuGraphInstantiate of p->graph (built first if a failed rebuild left the
 * plan without one), rebuilding it without programmatic edges once if the
 * driver refuses them. */
mox_status mox__cuda_plan_instantiate(mox__cuda_dev *dev, mox__cuda_plan *p, const mox__cuda_ldesc *b,
                                      CUgraphExec *exec);

/* The gate dependency words `b` needs on `inst` (b->deps_total of them):
 * per node, its dependencies inside the launch as absolute slots, then
 * those on earlier launches. */
void mox__cuda_deps_fill(const mox__cuda_inst *inst, const mox__cuda_ldesc *b, uint32_t *want);

#endif
