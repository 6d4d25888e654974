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
 * may_fail and carry range, as they were before it was described), so
 * giving up changes nothing. A node that
 * differs only from this plan (its geometry, entry or edges) sends it to
 * the next recent plan of as many nodes; the plan taken is the first that
 * matches, the one mox__cuda_plan_take would find, and the instance the
 * one it would take (the most recently idle: no deps array). A matching
 * plan with no idle instance leaves the launch to the full description,
 * which makes one. */
#include "cuda/cuda_plan_internal.h"

#include <string.h>

/* What comparing a node with a plan's found. */
typedef enum replay_verdict {
    REPLAY_SAME,       /* described: the plan's node */
    REPLAY_OTHER_PLAN, /* not this plan's node: another recent plan may match */
    REPLAY_FULL        /* the full description is needed whatever the plan */
} replay_verdict;

/* Node `at` of the launch, dispatch i of execution pub, whose first node
 * is `base` (`prev`: the execution before it in the launch, or NULL, whose
 * first node is prev_base), against node `at` of plan p (n) and of instance
 * inst (NULL: the plan has no idle one; nothing of it is compared); a
 * node whose parameters inst must be given goes to nodes[(*stale)++]. */
static replay_verdict replay_node(const mox__cuda_dev *dev, const mox__cuda_group *g,
                                  const mox__cuda_plan *p, const plan_node *n, const mox__cuda_inst *inst,
                                  const mox__submission *pub, uint32_t base, const mox__submission *prev,
                                  uint32_t prev_base, uint32_t i, uint32_t at, bool plain,
                                  mox__cuda_lnode *nodes, uint32_t *stale)
{
    const mox__dispatch *d = pub->dispatches[i];
    if (d->kind != MOX__CMD_KERNEL || (d->kernel_features & MOX_KFEAT_FAIL))
        return REPLAY_FULL;
    const mox__cuda_kernel *k = &((const mox__cuda_module *)d->module)->kernels[d->kernel];
    if (d->config.shared_bytes > k->max_dynamic_shared)
        return REPLAY_FULL; /* the full description says why */
    if (memcmp(&n->config, &d->config, sizeof n->config) != 0)
        return REPLAY_OTHER_PLAN;
    /* Its edges: the core's (to nodes of its execution, replayed with
     * may_fail clear: no gate dependency), or a queue's FIFO order after
     * the sinks of the execution before it. */
    const uint32_t *pe = p->edges + n->edge_off;
    uint32_t ne = n->edge_cnt, npred = d->pred_count;
    if (npred) {
        if (npred != ne)
            return REPLAY_OTHER_PLAN;
        const uint32_t *preds = pub->preds + d->pred_first;
        for (uint32_t e = 0; e < npred; e++)
            if (pe[e] != base + preds[e])
                return REPLAY_OTHER_PLAN;
    } else if (prev) {
        uint32_t e = 0;
        mox__dispatch *const *wd = prev->dispatches;
        for (uint32_t j = 0, cnt = prev->count; j < cnt; j++) {
            if (wd[j]->succ_count != 0)
                continue;
            if (e == ne || pe[e] != prev_base + j)
                return REPLAY_OTHER_PLAN;
            e++;
        }
        if (e != ne)
            return REPLAY_OTHER_PLAN;
    } else if (ne) {
        return REPLAY_OTHER_PLAN;
    }
    /* A gate on the execution before it in this launch (a pipeline's
     * usual one) never closes: that execution's nodes were replayed, so
     * none of them can fail. */
    const mox__gate *gates = &pub->gates[d->gate_first];
    uint32_t ngates = d->gate_count;
    if (ngates != 1 || gates[0].sub != prev) {
        for (uint32_t j = 0; j < ngates; j++)
            if (gates[j].sub != prev && !mox__cuda_gate_never_closes(dev, g, &gates[j]))
                return REPLAY_FULL;
    }
    if (k->entry_plain[d->entry == MOX__ENTRY_NOALIAS] != n->fn)
        return REPLAY_OTHER_PLAN;
    mox__cuda_dstate *ds = d->be;
    if (ds) {
        ds->may_fail = 0;
        if (d->kernel_features & MOX_KFEAT_GATE_DEFERRED) {
            ds->carry_first = g->carried_count; /* it reads nothing: carries nothing */
            ds->carry_count = 0;
        }
    }
    if (!inst)
        return REPLAY_SAME;
    /* What launch_nodes would decide (cuda_plan_launch.c): a gate of no
     * dependency matches one of dep_count 0 (`plain`: the instance is
     * valid and no node's gate has one). A node to update is listed with
     * what launching reads of it (its entry and edges are the plan's). */
    if (plain ? mox__cuda_same_args(inst, at, k, d)
              : inst->params_valid && inst->node_state[at].gate.dep_count == 0 &&
                    mox__cuda_same_args(inst, at, k, d))
        return REPLAY_SAME;
    mox__cuda_lnode *ln = &nodes[(*stale)++];
    ln->d = d;
    ln->k = k;
    ln->node = at;
    return REPLAY_SAME;
}

/* Launch g against plan p, node by node; nodes[0, *stale) lists those
 * whose parameters p's idle instance must be given. */
static replay_verdict replay_against(const mox__cuda_dev *dev, const mox__cuda_group *g,
                                     const mox__cuda_plan *p, mox__cuda_lnode *nodes, uint32_t *stale)
{
    const mox__cuda_inst *inst = p->idle;
    bool plain = inst && inst->params_valid && inst->gated_nodes == 0;
    *stale = 0;
    const mox__submission *prev = NULL;
    const plan_node *n = p->nodes;
    uint32_t prev_base = 0;
    for (uint32_t s = 0, at = 0, nsubs = g->nsubs; s < nsubs; s++) {
        const mox__submission *pub = g->subs[s];
        if (pub->wait_count || pub->transfer_count)
            return REPLAY_FULL;
        uint32_t base = at;
        for (uint32_t i = 0, count = pub->count; i < count; i++, at++, n++) {
            replay_verdict v = replay_node(dev, g, p, n, inst, pub, base, prev, prev_base, i, at, plain,
                                           nodes, stale);
            if (v != REPLAY_SAME)
                return v;
        }
        prev = pub;
        prev_base = base;
    }
    return REPLAY_SAME;
}

bool mox__cuda_replay(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t stream, mox__cuda_ldesc *desc,
                      mox__cuda_plan **plan)
{
    if (dev->mode == MOX__CUDA_LAUNCH_STREAM || g->count > dev->scratch_nodes_cap)
        return false;
    /* The recent plans in order, as plan_find compares them: the first
     * that matches is the one it would find. */
    mox__cuda_plan **recent = dev->stream_plan[stream];
    mox__cuda_plan *p = NULL;
    uint32_t j = 0, stale = 0;
    for (; j < MOX__CUDA_STREAM_PLANS && recent[j]; j++) {
        if (recent[j]->count != g->count)
            continue;
        replay_verdict v = replay_against(dev, g, recent[j], dev->scratch_nodes, &stale);
        if (v == REPLAY_FULL)
            return false;
        if (v == REPLAY_SAME) {
            p = recent[j];
            break;
        }
    }
    /* None, or one without an idle instance (the full description makes
     * one; it needs the launch described). */
    if (!p || !p->idle || !p->use_graph)
        return false;
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
    desc->nodes = dev->scratch_nodes;
    desc->edges = p->edges;
    desc->gdeps = desc->ext = NULL;
    desc->edge_count = p->edge_count;
    desc->deps_total = 0;
    desc->deps_array = false;
    desc->has_transfer = false;
    desc->replayed = true;
    desc->stale = stale;
    atomic_fetch_add_explicit(&dev->stats.replays, 1, memory_order_relaxed);
    return true;
}
