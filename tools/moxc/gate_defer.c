/* gate_defer.c - which kernels may check the gate after their loads (the
 * "deferred gate check"; gen_cuda_gate.c generates it).
 *
 * A gated CUDA entry must not let a kernel whose dependency failed have
 * effects. Checking the dependency's status word before the body costs
 * every block that load's latency ahead of its data loads; checking it
 * after the loads, just before each store, costs nothing, but then the
 * body runs on whatever the failed upstream kernel left in memory. That is
 * safe only when no such value can make the kernel fault, hang or have an
 * effect, which this analysis proves or refuses:
 *
 * - Tainted are values read from memory (buffers, MOX_SHARED and local
 *   arrays, tables), atomics' results, warp operations on tainted values,
 *   anything computed from tainted values, and variables assigned under
 *   control flow whose condition is tainted (a fixpoint over the kernel) -
 *   beyond the conditions around the variable's own declaration, outside
 *   which it does not exist.
 * - No tainted value may become an address: an index, a pointer operand of
 *   *, -> or pointer arithmetic, or a pointer variable.
 * - No loop header may be tainted, and no break, continue, return or goto
 *   may be under tainted control: garbage could make a loop endless or
 *   skip the check that keeps an index in bounds.
 * - Barriers and warp operations may not be under tainted control.
 * - Calls are to pure math, side-effect-free intrinsics, atomics, mox_fail,
 *   barriers, warp operations, or helpers that are pure functions of their
 *   arguments (no pointer parameters, memory accesses, loops, atomics,
 *   barriers, warp operations or mox_fail: gate_defer_calls.c).
 * - Every store that can reach memory outside the block's scratch (through
 *   a pointer: not a local or MOX_SHARED array), every atomic and every
 *   mox_fail is a whole expression statement (an atomic may also be the
 *   value of a local), and its target and arguments have no side effects:
 *   the deferred copy can then wrap exactly that statement in
 *   `if (!mox__gate_bad(mox__g))` (gate_defer_text.c).
 * Stores to locals, local arrays and MOX_SHARED arrays stay unguarded:
 * they are the block's own scratch (their contents become tainted).
 * Anything the analysis does not know refuses: the kernel then keeps the
 * check at entry, which is always correct, only slower.
 *
 * Here: the state and the driver; statements are in gate_defer_stmt.c,
 * expressions in gate_defer_expr.c. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

/* ---------------- state ---------------- */

bool moxc__gd_is_tainted(gd *g, CXCursor decl) {
    for (size_t i = 0; i < g->tainted_count; i++)
        if (clang_equalCursors(g->tainted[i], decl))
            return true;
    return false;
}

void moxc__gd_taint(gd *g, CXCursor decl) {
    if (moxc__gd_is_tainted(g, decl))
        return;
    if (!moxc__grow(&g->tainted, &g->tainted_cap, g->tainted_count + 1, sizeof *g->tainted)) {
        g->oom = true;
        return;
    }
    g->tainted[g->tainted_count++] = decl;
    g->changed = true;
}

void moxc__gd_declare(gd *g, CXCursor decl) {
    for (size_t i = 0; i < g->local_count; i++) {
        if (clang_equalCursors(g->locals[i], decl)) {
            g->local_depths[i] = g->tainted_ctrl;
            return;
        }
    }
    size_t cap = g->local_cap;
    if (!moxc__grow(&g->locals, &g->local_cap, g->local_count + 1, sizeof *g->locals)) {
        g->oom = true;
        return;
    }
    if (g->local_cap != cap) {
        unsigned *depths = realloc(g->local_depths, g->local_cap * sizeof *depths);
        if (!depths) {
            g->local_cap = cap;
            g->oom = true;
            return;
        }
        g->local_depths = depths;
    }
    g->locals[g->local_count] = decl;
    g->local_depths[g->local_count++] = g->tainted_ctrl;
}

unsigned moxc__gd_declared_depth(gd *g, CXCursor decl) {
    for (size_t i = 0; i < g->local_count; i++)
        if (clang_equalCursors(g->locals[i], decl))
            return g->local_depths[i];
    return 0;
}

void moxc__gd_problem(gd *g, CXSourceLocation loc, const char *what) {
    if (!g->report || g->problem)
        return;
    char *where = moxc__where(loc);
    g->problem = moxc__printf("%s at %s", what, where ? where : "?");
    free(where);
    if (!g->problem)
        g->oom = true;
}

void moxc__gd_push_ctrl(gd *g, bool tainted, CXSourceLocation loc) {
    if (!tainted)
        return;
    if (g->tainted_ctrl++ == 0)
        g->ctrl_loc = loc;
}

void moxc__gd_pop_ctrl(gd *g, bool tainted) {
    if (tainted && g->tainted_ctrl)
        g->tainted_ctrl--;
}

/* ---------------- driver ---------------- */

static int compare_edits(const void *a, const void *b) {
    const moxc_text_edit *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void free_edits(moxc_text_edit *edits, size_t count) {
    for (size_t i = 0; i < count; i++)
        free(edits[i].text);
    free(edits);
}

void moxc__gate_defer_free(moxc_gate_defer *gate) {
    free(gate->why_not);
    free_edits(gate->edits, gate->edit_count);
    memset(gate, 0, sizeof *gate);
}

void moxc__gd_note_guard(gd *g) {
    if (!g->guard_seen)
        g->guard_after_collective = g->collective_seen;
    g->guard_seen = true;
    if (g->collective_seen && g->one_thread_ctrl == 0)
        g->wide_guard_after_collective = true;
}

static void walk_body(gd *g) {
    g->tainted_ctrl = 0;
    moxc__children ch;
    moxc__children_of(g->kernel, &ch);
    for (size_t i = 0; i < ch.count; i++)
        if (clang_getCursorKind(ch.items[i]) == CXCursor_CompoundStmt)
            moxc__gd_stmt(g, ch.items[i]);
    moxc__children_free(&ch);
}

static void analyse_kernel(moxc__tu *t, gd_helper *helpers, CXCursor kernel, moxc_gate_defer *out) {
    gd g;
    memset(&g, 0, sizeof g);
    g.t = t;
    g.kernel = kernel;
    g.helpers = helpers;
    g.text = t->main_file ? clang_getFileContents(t->tu, t->main_file, &g.text_size) : NULL;
    if (clang_Cursor_getNumArguments(kernel) <= 0) {
        g.report = true;
        moxc__gd_problem(&g, moxc__cursor_loc(kernel), "the kernel has no parameters (nothing to defer)");
    }
    /* taints only grow, so this terminates; the cap is a guard */
    for (int pass = 0; !g.problem && pass < 1000; pass++) {
        g.changed = false;
        walk_body(&g);
        if (!g.changed)
            break;
    }
    if (!g.problem) {
        g.report = true;
        walk_body(&g);
    }
    if (!g.problem && !g.oom && !g.text)
        moxc__gd_problem(&g, moxc__cursor_loc(kernel), "the kernel's source text is not available");
    if (!g.problem && !g.oom)
        moxc__gd_signature(&g, out);
    if (g.oom) {
        free(g.problem);
        g.problem = moxc__strdup("out of memory in the analysis");
    }
    out->eligible = g.problem == NULL;
    out->why_not = g.problem;
    out->guard_after_collective = out->eligible && g.guard_after_collective;
    out->wide_guard_after_collective = out->eligible && g.wide_guard_after_collective;
    if (out->eligible) {
        qsort(g.edits, g.edit_count, sizeof *g.edits, compare_edits);
        out->edits = g.edits;
        out->edit_count = g.edit_count;
    } else {
        free_edits(g.edits, g.edit_count);
    }
    free(g.tainted);
    free(g.locals);
    free(g.local_depths);
}

/* Which eligible kernels get the deferred entries, from MOXC_GATE_DEFER
 * (part of the build's fingerprint, build_plan.c): unset, empty or
 * "auto" those whose first guard comes before any barrier or warp
 * operation, and those whose guards after one are each reached by one
 * thread of the block (on an H200 the deferred copies of vec-add and
 * add-offsets ran within 1 - 2 % of ungated, the reduction's through its
 * deferred __gate1 entry at 0.984, the block scan's slower than the check
 * at entry of one dependency, docs/kernel-language.md); "1" every
 * eligible kernel; "0" none. */
typedef enum { GD_DEFER_NONE, GD_DEFER_AUTO, GD_DEFER_ALL } gd_defer_mode;

static bool defer_mode(moxc__tu *t, gd_defer_mode *mode) {
    const char *v = getenv("MOXC_GATE_DEFER");
    if (!v || !*v || strcmp(v, "auto") == 0)
        *mode = GD_DEFER_AUTO;
    else if (strcmp(v, "1") == 0)
        *mode = GD_DEFER_ALL;
    else if (strcmp(v, "0") == 0)
        *mode = GD_DEFER_NONE;
    else {
        moxc__error_plain(t->front, t->source, "MOXC_GATE_DEFER=%s: expected 0, 1 or auto (docs/moxc.md)", v);
        return false;
    }
    return true;
}

static bool deferred_by(gd_defer_mode mode, const moxc_gate_defer *gate) {
    bool rule = !gate->guard_after_collective || !gate->wide_guard_after_collective;
    return gate->eligible && (mode == GD_DEFER_ALL || (mode == GD_DEFER_AUTO && rule));
}

void moxc__gate_defer(moxc__tu *t) {
    gd_defer_mode mode;
    if (!defer_mode(t, &mode))
        return;
    gd_helper *helpers = t->fn_count ? calloc(t->fn_count, sizeof *helpers) : NULL;
    if (t->fn_count && !helpers) {
        moxc__error_plain(t->front, t->source, "out of memory");
        return;
    }
    for (size_t k = 0; k < t->kernel_cursor_count; k++) {
        moxc_gate_defer *out = &t->front->infos[t->first_kernel + k].gate;
        moxc__gate_defer_free(out);
        analyse_kernel(t, helpers, t->kernel_cursors[k], out);
        /* The ABI says which kernels' gated entries are deferred: the
         * runtime then carries their dependencies on to their readers, so
         * the entries need not ask the gate at their end (mox/kernel_abi.h);
         * every generator reads the bit (moxc_gate_defer_on). */
        if (deferred_by(mode, out))
            t->front->kernels[t->first_kernel + k].features |= MOX_KFEAT_GATE_DEFERRED;
    }
    for (size_t i = 0; i < t->fn_count; i++)
        free(helpers[i].why_not);
    free(helpers);
}
