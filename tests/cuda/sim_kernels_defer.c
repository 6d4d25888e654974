/* tests/cuda/sim_kernels_defer.c - the simulated driver's kernels with the
 * deferred gate check (mox/kernel_cuda_gate.h, moxc's MOXC_GATE_DEFER=1),
 * those of tests/cuda/kernels.cu and the conformance module "mdefer"
 * (mox_entry_defer_inc, run as bt_defer_finish): bt_finish (out[i] =
 * in[i] + 1 for i < n) with its store guarded, as moxc's deferred copy has
 * it, run by
 *   - mox_entry_bt_defer_finish: an entry of a kernel with
 *     MOX_KFEAT_GATE_DEFERRED, which asks nothing at its end: a launch
 *     whose threads reach no store (n = 0) leaves its status word OK even
 *     behind a failed dependency, so only the runtime can make it GATED;
 *   - mox_entry_bt_defer_asks: the same body with the end question of
 *     entries without the bit (thread 0 of each block that asked nothing
 *     asks, and marks the dispatch GATED when the answer is bad).
 * The simulated grid is one loop over its threads, each with its own view
 * of the gate (mox__gate_view): a thread reads the dependencies' words at
 * its first guard, and marks the dispatch GATED there when one is not OK. */
#include <stdbool.h>
#include <string.h>

#include <mox/kernel_abi.h>

#include "sim_cuda.h"

enum { UNASKED, GOOD, BAD };

typedef struct view {
    const mox_gate *gate;
    int answer;
} view;

/* mox__gate_read_bad */
static bool read_bad(const mox_gate *g)
{
    if (!g->status)
        return false;
    for (uint32_t i = 0; i < g->dep_count; i++)
        if (__atomic_load_n(&g->status[2u * mox_gate_dep(g, i)], __ATOMIC_SEQ_CST) != MOX_DISPATCH_OK)
            return true;
    return false;
}

/* mox__gate_bad: asked at a guard; a bad answer marks the dispatch GATED
 * (a dispatch that failed itself keeps FAILED). */
static bool gate_bad(view *v)
{
    if (v->answer == UNASKED) {
        v->answer = read_bad(v->gate) ? BAD : GOOD;
        if (v->answer == BAD)
            __atomic_compare_exchange_n(&v->gate->status[2u * v->gate->self], &(uint32_t){MOX_DISPATCH_OK},
                                        MOX_DISPATCH_GATED, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    return v->answer == BAD;
}

/* mox__gate_leave_deferred(v, kernel_features), for the linear thread
 * `linear` of its block. */
static void leave_deferred(view *v, uint32_t kernel_features, uint64_t linear)
{
    if (kernel_features & MOX_KFEAT_GATE_DEFERRED)
        return;
    if (v->answer == UNASKED && linear == 0)
        (void)gate_bad(v);
}

static void defer_finish(const sim_launch *l, uint32_t kernel_features)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    const float *in;
    float *out;
    uint32_t n;
    memcpy(&in, l->args[1], sizeof in);
    memcpy(&out, l->args[2], sizeof out);
    memcpy(&n, l->args[3], sizeof n);
    uint64_t block = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    uint64_t threads = block * l->grid[0] * l->grid[1] * l->grid[2];
    for (uint64_t i = 0; i < threads; i++) {
        view v = {g, UNASKED};
        if (i < n) {
            float value = in[i] + 1.0f; /* loaded before the gate is asked */
            if (!gate_bad(&v))
                out[i] = value;
        }
        leave_deferred(&v, kernel_features, i % block);
    }
}

void sim_defer_finish(const sim_launch *l)
{
    defer_finish(l, MOX_KFEAT_GATE_DEFERRED);
}

void sim_defer_asks(const sim_launch *l)
{
    defer_finish(l, 0);
}
