/* src/cuda/cuda_replay.c - a launch that repeats the shape of a plan its
 * stream found recently, described and checked against that plan in one
 * pass.
 *
 * A pipeline launches the same few shapes again and again (one execution,
 * or several merged), and most of its nodes have no gate that may close.
 * Described in full (cuda_launch.c), each node is written into the
 * launch's description with its edges, then compared with the cached
 * plan's node (cuda_plan.c), then its arguments with what the instance was
 * last given (cuda_plan_launch.c): three passes over the nodes, and arrays
 * built only to be compared. Here each node is compared with the plan's as
 * it is read (function, geometry, edges), its arguments with the idle
 * instance's, and what launching needs is written once: the dispatch, its
 * kernel and entry, and whether the instance needs its parameters set.
 *
 * It applies only where the full description would have given exactly
 * this: a graph plan among the stream's recent ones with as many nodes as
 * the launch and an idle instance; every node a kernel that cannot fail
 * (no MOX_KFEAT_FAIL) whose gates can never close (so its gate has no
 * dependency, and it carries none), whose dynamic shared memory fits;
 * no execution waiting on another queue or holding a transfer. The first
 * node that differs ends it; the launch is then described in full from its
 * first node, which writes again everything written here (each dispatch's
 * may_fail and carry range), so giving up changes nothing. The plan taken
 * is the one mox__cuda_plan_take would find (the first recent plan with
 * the launch's node count; when that one does not match, the full
 * description decides), and the instance the one it would take (the most
 * recently idle: no deps array). */
#include "cuda/cuda_plan_internal.h"

#include <string.h>

/* Node `at` of the launch, dispatch i of execution pub, whose first node
 * is `base` (`prev`: the execution before it in the launch, or NULL, whose
 * first node is prev_base), against node `at` of plan p and of instance
 * inst. False when it does not repeat the plan's node as the full
 * description would have given it. */
static bool replay_node(const mox__cuda_dev *dev, const mox__cuda_group *g, const mox__cuda_plan *p,
                        const mox__cuda_inst *inst, const mox__submission *pub, uint32_t base,
                        const mox__submission *prev, uint32_t prev_base, uint32_t i, uint32_t at,
                        mox__cuda_lnode *ln)
{
    const mox__dispatch *d = pub->dispatches[i];
    const plan_node *n = &p->nodes[at];
    if (d->kind != MOX__CMD_KERNEL || (d->kernel_features & MOX_KFEAT_FAIL))
        return false;
    const mox__cuda_kernel *k = &((const mox__cuda_module *)d->module)->kernels[d->kernel];
    if (d->config.shared_bytes > k->max_dynamic_shared ||
        memcmp(&n->config, &d->config, sizeof n->config) != 0)
        return false;
    /* Its edges: the core's (to nodes of its execution, replayed with
     * may_fail clear: no gate dependency), or a queue's FIFO order after
     * the sinks of the execution before it. */
    const uint32_t *pe = p->edges + n->edge_off;
    uint32_t ne = n->edge_cnt, npred = d->pred_count;
    if (npred) {
        if (npred != ne)
            return false;
        const uint32_t *preds = pub->preds + d->pred_first;
        for (uint32_t e = 0; e < npred; e++)
            if (pe[e] != base + preds[e])
                return false;
    } else if (prev) {
        uint32_t e = 0;
        mox__dispatch *const *wd = prev->dispatches;
        for (uint32_t j = 0, cnt = prev->count; j < cnt; j++) {
            if (wd[j]->succ_count != 0)
                continue;
            if (e == ne || pe[e] != prev_base + j)
                return false;
            e++;
        }
        if (e != ne)
            return false;
    } else if (ne) {
        return false;
    }
    const mox__gate *gates = &pub->gates[d->gate_first];
    for (uint32_t j = 0, cnt = d->gate_count; j < cnt; j++)
        if (!mox__cuda_gate_never_closes(dev, g, &gates[j]))
            return false;
    CUfunction fn = mox__cuda_entry_fn(k, d, 0);
    if (fn != n->fn)
        return false;
    mox__cuda_dstate *ds = d->be;
    if (ds) {
        ds->may_fail = 0;
        if (d->kernel_features & MOX_KFEAT_GATE_DEFERRED) {
            ds->carry_first = g->carried_count; /* it reads nothing: carries nothing */
            ds->carry_count = 0;
        }
    }
    ln->d = d;
    ln->k = k;
    ln->fn = fn;
    ln->edge_off = n->edge_off;
    ln->edge_cnt = ne;
    ln->gdep_off = ln->gdep_cnt = ln->ext_off = ln->ext_cnt = 0;
    /* What launch_nodes would decide (cuda_plan_launch.c): a gate of no
     * dependency matches one of dep_count 0. */
    ln->stale = !inst->params_valid || inst->node_state[at].gate.dep_count != 0 ||
                !mox__cuda_same_args(inst, at, k, d);
    return true;
}

/* The first of the stream's recent plans with `count` nodes, at *j. */
static mox__cuda_plan *recent_of_count(mox__cuda_plan *const *recent, uint32_t count, uint32_t *j)
{
    for (uint32_t r = 0; r < MOX__CUDA_STREAM_PLANS && recent[r]; r++) {
        if (recent[r]->count == count) {
            *j = r;
            return recent[r];
        }
    }
    return NULL;
}

bool mox__cuda_replay(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t stream, mox__cuda_ldesc *desc,
                      mox__cuda_plan **plan)
{
    mox__cuda_plan **recent = dev->stream_plan[stream];
    uint32_t j = 0;
    mox__cuda_plan *p = recent_of_count(recent, g->count, &j);
    if (!p || !p->use_graph || !p->idle || g->count > dev->scratch_nodes_cap)
        return false;
    const mox__cuda_inst *inst = p->idle;
    mox__cuda_lnode *nodes = dev->scratch_nodes;
    const mox__submission *prev = NULL;
    uint32_t prev_base = 0;
    for (uint32_t s = 0, at = 0, nsubs = g->nsubs; s < nsubs; s++) {
        const mox__submission *pub = g->subs[s];
        if (pub->wait_count || pub->transfer_count)
            return false;
        uint32_t base = at;
        for (uint32_t i = 0, count = pub->count; i < count; i++, at++)
            if (!replay_node(dev, g, p, inst, pub, base, prev, prev_base, i, at, &nodes[at]))
                return false;
        prev = pub;
        prev_base = base;
    }
    /* Taken as mox__cuda_plan_take takes them: the plan to the front of
     * the stream's recent ones, its most recently idle instance. */
    for (; j > 0; j--)
        recent[j] = recent[j - 1];
    recent[0] = p;
    p->last_used = ++dev->plan_clock;
    mox__cuda_inst *taken = p->idle;
    p->idle = taken->next_idle;
    taken->next_idle = NULL;
    taken->busy = true;
    g->inst = taken;
    *plan = p;
    desc->count = g->count;
    desc->nodes = nodes;
    desc->edges = p->edges;
    desc->gdeps = desc->ext = NULL;
    desc->edge_count = p->edge_count;
    desc->deps_total = 0;
    desc->deps_array = false;
    desc->has_transfer = false;
    desc->replayed = true;
    atomic_fetch_add_explicit(&dev->stats.replays, 1, memory_order_relaxed);
    return true;
}
