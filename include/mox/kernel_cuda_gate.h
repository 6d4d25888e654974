/* mox/kernel_cuda_gate.h - the CUDA side of the gate, mox_fail and
 * programmatic dependent launch: what every generated entry calls before
 * and after the kernel's body; included by mox/kernel_cuda.h. */
#ifndef MOX_KERNEL_CUDA_GATE_H
#define MOX_KERNEL_CUDA_GATE_H

#ifndef MOX_KERNEL_CUDA_H
#error "include <mox/kernel.h>, not <mox/kernel_cuda_gate.h>"
#endif

/* ---- gate and failure ----
 * Generated entry (kernels_cuda.cu):
 *     extern "C" __global__ void __launch_bounds__(N) mox_entry_K(mox_gate gate, ...) {
 *         if (mox__gate_enter(&gate)) return;
 *         MOX__GATE_PUBLISH(&gate);      // kernels with MOX_KFEAT_FAIL only
 *         K(...);
 *         mox__gate_leave(&gate);
 *     }
 * and for a kernel whose gate check moxc can defer past its loads:
 *         mox__grid_dependency_wait();
 *         MOX__GATE_PUBLISH(&gate);      // kernels with MOX_KFEAT_FAIL only
 *         mox__gate_view gv = mox__gate_view_of(&gate);
 *         K__mox_deferred(&gv, ...);     // no store, atomic or mox_fail when mox__gate_bad(&gv)
 *         mox__gate_leave_deferred(&gv, MOX_KFEAT_GATE_DEFERRED); // asks nothing: the runtime derives
 *         mox__gate_leave(&gate);
 * The gate is a kernel parameter; its address is per-thread local memory,
 * so mox_fail (possibly deep in a helper) finds the fields through a
 * block-shared slot instead. The slot is only valid in kernels that
 * published it: moxc sets MOX_KFEAT_FAIL for every kernel from which
 * mox_fail is reachable. */

/* ---- programmatic dependent launch ----
 * On sm_90 and later every generated entry, with the gate check or without
 * it, starts with griddepcontrol.wait: it returns once every grid this one
 * depends on programmatically has completed and its memory is visible (at
 * once when the launch has no such dependency). Nothing of the entry runs
 * before it, so the runtime may start a dependent grid before its
 * predecessors end (a CUDA graph edge of type
 * CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, docs/cuda-backend.md) without the
 * dependent seeing a predecessor's writes half done. The marker
 * mox__grid_wait_entries tells the runtime which entries of the code the
 * driver loaded for this GPU have the wait: 2 in sm_90+ code (all of them),
 * 0 in code for older GPUs (and in PTX for them that the driver would JIT);
 * 1 in sm_90+ modules built before the entries without the gate check had
 * it (only the gated entries wait); modules built before the wait existed
 * lack the marker. The runtime reads it at module load. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MOX__GRID_WAIT_ENTRIES MOX__GRID_WAIT_ALL
#else
#define MOX__GRID_WAIT_ENTRIES MOX__GRID_WAIT_NONE
#endif
extern "C" {
__device__ unsigned int mox__grid_wait_entries = MOX__GRID_WAIT_ENTRIES;
}

MOX__FN(void) mox__grid_dependency_wait(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

typedef struct mox__gate_slot {
    uint32_t *status;
    uint32_t *host_flag;
    uint32_t self;
} mox__gate_slot;

static __shared__ mox__gate_slot mox__gate_shared;

/* The OR of the status words of the gate's dependencies when they are
 * not the common single inline one: several dependencies, or a list in
 * device memory. A dependency's words are final (it finished before this
 * grid started), so the read-only path is safe; it serves the blocks of a
 * multiprocessor from one L2 read. A volatile load sends every warp of the
 * grid to the same L2 line (suspected cause of a 4.6x slower 2^28-element
 * pipeline on an H200, docs/cuda-backend.md). Out of line so that it puts
 * no instructions on the entry's path; the arguments come by value: the
 * call is on the not-taken side, so the entry reads them only there. */
static __device__ __noinline__ uint32_t mox__gate_deps_rare(const uint32_t *st, const uint32_t *deps, uint32_t n,
                                                            uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3) {
    uint32_t bad = MOX_DISPATCH_OK;
    if (deps == NULL) {
        /* Inline dependencies: independent loads, no load before them. */
        bad |= __ldg(&st[2u * d0]);
        if (n > 1u) bad |= __ldg(&st[2u * d1]);
        if (n > 2u) bad |= __ldg(&st[2u * d2]);
        if (n > 3u) bad |= __ldg(&st[2u * d3]);
    } else {
        for (uint32_t i = 0; i < n; i++) bad |= __ldg(&st[2u * deps[i]]);
    }
    return bad;
}

/* Marks this dispatch GATED (its dependency failed or was gated): linear
 * thread 0 of every block tries, the first one wins; a dispatch that
 * failed itself keeps FAILED. */
MOX__FN(void) mox__gate_mark_gated(const mox_gate *g) {
    if (mox__linear() == 0u) atomicCAS(&g->status[2u * g->self], MOX_DISPATCH_OK, MOX_DISPATCH_GATED);
}

/* mox__gate_enter's rare forms (see mox__gate_deps_rare). */
static __device__ __noinline__ int mox__gate_enter_rare(uint32_t *st, const uint32_t *deps, uint32_t self,
                                                        uint32_t n, uint32_t d0, uint32_t d1, uint32_t d2,
                                                        uint32_t d3) {
    if (mox__gate_deps_rare(st, deps, n, d0, d1, d2, d3) == MOX_DISPATCH_OK) return 0;
    if (mox__linear() == 0u) atomicCAS(&st[2u * self], MOX_DISPATCH_OK, MOX_DISPATCH_GATED);
    return 1;
}

/* Nonzero when the entry must not run: a dependency failed or was gated.
 * Every thread of every block reads the same settled words (dependencies
 * finished before this grid started, or before griddepcontrol.wait
 * returned), so the answer is uniform and the early return leaves no
 * barrier half-attended. States are 0, 1 or 2, so OR-ing them tells
 * whether any is not OK. On the entry's path: two tests of parameters
 * (no gate, no dependency) and, for the common gated case of one inline
 * dependency, its one load; everything else is mox__gate_enter_rare.
 * Inlined whole, the check cost an ungated vec-add 3 % and a gated one
 * 12 % on an H200 against the body alone (which needs 12 registers, the
 * entry 32); this split costs 1.7 % and 7 % (still 32 registers: the
 * call's convention), bench/experiments/entry_cost_probe.cu. */
MOX__FN(int) mox__gate_enter(const mox_gate *g) {
    mox__grid_dependency_wait(); /* first: see "programmatic dependent launch" */
    uint32_t *st = g->status;
    uint32_t n = g->dep_count;
    if (st == NULL || n == 0u) return 0;
    if (n == 1u && g->deps == NULL) {
        if (__ldg(&st[2u * g->inline_deps[0]]) == MOX_DISPATCH_OK) return 0;
        mox__gate_mark_gated(g);
        return 1;
    }
    return mox__gate_enter_rare(st, g->deps, g->self, n, g->inline_deps[0], g->inline_deps[1],
                                g->inline_deps[2], g->inline_deps[3]);
}

/* mox__gate_enter for a gate of exactly one inline dependency (the
 * runtime launches the __gate1 entries only with such gates): one load and
 * no code for the other forms, whose out-of-line call alone cost the
 * general entry about 5 % on bandwidth kernels (H200,
 * bench/experiments/gate_variants.sh). */
MOX__FN(int) mox__gate_enter_one(const mox_gate *g) {
    mox__grid_dependency_wait(); /* first: see "programmatic dependent launch" */
    if (__ldg(&g->status[2u * g->inline_deps[0]]) == MOX_DISPATCH_OK) return 0;
    mox__gate_mark_gated(g);
    return 1;
}

/* The deferred gate check (moxc's gate_defer.c): whether the dispatch must
 * have no effect (a dependency failed or was gated), asked at each guard of
 * the kernel's deferred copy, after the body's loads have issued (then it
 * marks the dispatch GATED), and in entries without MOX_KFEAT_GATE_DEFERRED
 * by thread 0 of each block at the entry's end. The words are settled
 * before the grid starts, so every thread gets the same answer, and each
 * thread reads them once: the view keeps the answer (a register once the
 * copy is inlined), so a guard in a loop and the end's question cost no
 * further load. Nothing of it may run at
 * entry: on an H200 a 2^26-element vec-add ran at 1.000 of the ungated
 * kernel with all of it at the guard, 0.977 with the one load at entry,
 * 0.956 with only the rare forms' code at entry (not taken), 0.954 with
 * the check at entry (bench/experiments/gate_defer_probe.cu). The
 * rare forms (several dependencies, a list) stay out of line: inline they
 * cost the common form 1.6 %. */
typedef struct mox__gate_view {
    const mox_gate *gate;
    uint32_t answer; /* MOX__GATE_UNASKED[_ONE], MOX__GATE_GOOD or MOX__GATE_BAD */
} mox__gate_view;
#define MOX__GATE_UNASKED 0u
#define MOX__GATE_GOOD 1u
#define MOX__GATE_BAD 2u
/* Not asked yet, and the gate has exactly one inline dependency (the view
 * of a deferred __gate1 entry): the question is one load, with no code for
 * the gate's other forms. */
#define MOX__GATE_UNASKED_ONE 3u

/* Whether a dependency of the gate failed or was gated: reads the words. */
MOX__FN(bool) mox__gate_read_bad(const mox_gate *g) {
    uint32_t *st = g->status;
    uint32_t n = g->dep_count;
    if (st == NULL || n == 0u) return false;
    if (n == 1u && g->deps == NULL) return __ldg(&st[2u * g->inline_deps[0]]) != MOX_DISPATCH_OK;
    return mox__gate_deps_rare(st, g->deps, n, g->inline_deps[0], g->inline_deps[1], g->inline_deps[2],
                               g->inline_deps[3]) != MOX_DISPATCH_OK;
}

MOX__FN(mox__gate_view) mox__gate_view_of(const mox_gate *g) {
    mox__gate_view v = {g, MOX__GATE_UNASKED};
    return v;
}

/* The view of a deferred __gate1 entry (the runtime launches those only
 * with gates of exactly one inline dependency). moxc gives them to
 * kernels whose guards after a barrier or warp operation are each reached
 * by one thread of the block (a reduction's `if (t == 0) out[b] = sum`):
 * on an H200 a 2^26-element reduction ran at 0.984 of ungated this way,
 * 0.969 through the general view (whose out-of-line code for the rare
 * forms takes the entry from 12 to 32 registers) and 0.949 with the check
 * at entry; vec-add, whose guards come before any collective, ran at
 * 0.984 this way against 0.991 through the general view, and the block
 * scan, whose guards after its barrier every thread reaches, at 0.915
 * against 0.940 with the check at entry (docs/kernel-language.md). */
MOX__FN(mox__gate_view) mox__gate_view_of_one(const mox_gate *g) {
    mox__gate_view v = {g, MOX__GATE_UNASKED_ONE};
    return v;
}

/* Marks the dispatch GATED from a thread that found the gate bad; the
 * plain read first lets all but the first few of those threads skip the
 * atomic (a failed dependency's path; a dispatch that failed itself
 * keeps FAILED). */
MOX__FN(void) mox__gate_mark_gated_once(const mox_gate *g) {
    uint32_t *word = &g->status[2u * g->self];
    if (*(volatile uint32_t *)word == MOX_DISPATCH_OK) atomicCAS(word, MOX_DISPATCH_OK, MOX_DISPATCH_GATED);
}

/* The guard's question: read at the first guard this thread reaches,
 * which also marks the dispatch GATED when the answer is bad, so that
 * nothing is left to do at the end for a thread that asked. */
MOX__FN(bool) mox__gate_bad(mox__gate_view *v) {
    if (v->answer == MOX__GATE_UNASKED || v->answer == MOX__GATE_UNASKED_ONE) {
        const mox_gate *g = v->gate;
        bool bad = v->answer == MOX__GATE_UNASKED_ONE
                       ? __ldg(&g->status[2u * g->inline_deps[0]]) != MOX_DISPATCH_OK
                       : mox__gate_read_bad(g);
        v->answer = bad ? MOX__GATE_BAD : MOX__GATE_GOOD;
        if (bad) mox__gate_mark_gated_once(g);
    }
    return v->answer == MOX__GATE_BAD;
}

/* The deferred entry's end. A dispatch whose threads reached no guard
 * (nothing to store for this launch) must still end GATED when its gate
 * is bad. `kernel_features` are the kernel's MOX_KFEAT_* bits as its
 * module's ABI lists them (a constant: the branch folds away):
 * - with MOX_KFEAT_GATE_DEFERRED (moxc's entries since the runtime carries
 *   a deferred dispatch's dependencies on to its readers and derives its
 *   state, docs/cuda-backend.md) nothing is asked: the question's code,
 *   though only threads past `n` run it, cost vec-add and add-offsets
 *   13 - 15 % on an H200 (docs/performance.md);
 * - without it (an entry written by hand, or for a runtime that does not
 *   derive) linear thread 0 of each block asks if it has not. A thread
 *   that asked leaves at once: code after the body that waits on the
 *   answer, or on the thread's index, cost a 2^26-element vec-add 15 % on
 *   an H200 (thread 0 asking again after its store). */
MOX__FN(void) mox__gate_leave_deferred(mox__gate_view *v, uint32_t kernel_features) {
    if (kernel_features & MOX_KFEAT_GATE_DEFERRED) return;
    if ((v->answer == MOX__GATE_UNASKED || v->answer == MOX__GATE_UNASKED_ONE) && mox__linear() == 0u)
        (void)mox__gate_bad(v);
}

MOX__FN(void) mox__gate_publish(const mox_gate *g) {
    if (mox__linear() == 0u) {
        mox__gate_shared.status = g->status;
        mox__gate_shared.host_flag = g->host_flag;
        mox__gate_shared.self = g->self;
    }
    __syncthreads(); /* uniform: every thread of the entry gets here */
}
#define MOX__GATE_PUBLISH(g) mox__gate_publish(g)

/* A successful dispatch leaves its state word at OK (the host zeroed it),
 * so leaving needs no store; the call marks the end of the body so a
 * generated entry reads as a bracket and has one place to grow. */
MOX__FN(void) mox__gate_leave(const mox_gate *g) { (void)g; }

/* status == NULL (no gating) makes mox_fail a no-op: nothing records it.
 * The runtime always passes a status array for launches it tracks. */
MOX__FN(void) mox_fail(uint32_t code) {
    uint32_t *st = mox__gate_shared.status;
    if (st == NULL) return;
    uint32_t self = mox__gate_shared.self;
    if (atomicCAS(&st[2u * self], MOX_DISPATCH_OK, MOX_DISPATCH_FAILED) == MOX_DISPATCH_OK) {
        *(volatile uint32_t *)&st[2u * self + 1u] = code;
        __threadfence_system(); /* the code is visible before the flag */
        uint32_t *flag = mox__gate_shared.host_flag;
        if (flag != NULL) *(volatile uint32_t *)flag = 1u;
    }
}

#endif
