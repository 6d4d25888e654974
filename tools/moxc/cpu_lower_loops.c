/* cpu_lower_loops.c - the shape of a 1-D block's thread loop, chosen from
 * what its region does (for the host compiler's sake; every shape runs
 * each thread's code once, in thread order):
 * - a region that is one `if (t < E) S` with t the thread's x index and E
 *   block-level runs S for x below E only: the guard becomes the loop's
 *   condition (a reduction tree's loops shrink with it);
 * - a region that reads the warp or lane index loops over warps, then
 *   their 32 lanes, so the warp index is constant in the inner loop. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

/* mox_thread_idx().x */
static bool is_thread_x(lw *L, CXCursor c) {
    c = lw_strip(c);
    if (clang_getCursorKind(c) != CXCursor_MemberRefExpr)
        return false;
    char *member = moxc__cxstr(clang_getCursorSpelling(c));
    bool x = member && strcmp(member, "x") == 0;
    free(member);
    moxc__children ch;
    moxc__children_of(c, &ch);
    CXCursor base = ch.count == 1 ? lw_strip(ch.items[0]) : clang_getNullCursor();
    moxc__children_free(&ch);
    if (!x || clang_getCursorKind(base) != CXCursor_CallExpr)
        return false;
    const char *name = lw_intrinsic(L, base, NULL);
    return name && strcmp(name, "mox_thread_idx") == 0;
}

/* The thread's x index as written: mox_thread_idx().x, or a recomputed
 * uint32_t variable that is just that. */
static bool is_thread_x_value(lw *L, CXCursor c) {
    c = lw_strip(c);
    if (clang_getCanonicalType(clang_getCursorType(c)).kind != CXType_UInt)
        return false;
    if (is_thread_x(L, c))
        return true;
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr)
        return false;
    const lw_var *v = lw_var_of(L, clang_getCursorReferenced(c));
    return v && v->cls == LV_REMAT && !v->written && !v->addr_taken && is_thread_x(L, v->init);
}

static bool is_zero(CXCursor c) {
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (!r)
        return false;
    bool zero = clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
    clang_EvalResult_dispose(r);
    return zero;
}

bool lw_region_guard(lw *L, const size_t *at, size_t n, lw_guard *g) {
    size_t code = LW_NONE;
    for (size_t k = 0; k < n; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind != LW_CODE || it->dead || it->region == LW_NONE)
            continue;
        if (code != LW_NONE)
            return false;
        code = at[k];
    }
    if (code == LW_NONE)
        return false;
    const lw_item *it = &L->items[code];
    if (it->wrap != LW_WRAP_STMT || it->phase != LW_WHOLE || clang_getCursorKind(it->cur) != CXCursor_IfStmt)
        return false;
    moxc__children ch;
    moxc__children_of(it->cur, &ch);
    bool ok = ch.count == 2;
    CXCursor cond = ok ? lw_strip(ch.items[0]) : clang_getNullCursor();
    if (ok)
        g->body = ch.items[1];
    moxc__children_free(&ch);
    if (!ok || clang_getCursorKind(cond) != CXCursor_BinaryOperator)
        return false;
    char op[8];
    lw_operator(L, cond, op, sizeof op);
    moxc__children_of(cond, &ch);
    ok = ch.count == 2 && is_thread_x_value(L, ch.items[0]) && lw_expr_class(L, ch.items[1], false) == LE_BLOCK;
    if (ok) {
        g->bound = ch.items[1];
        g->op = strcmp(op, "<") == 0 ? "<" : strcmp(op, "<=") == 0 ? "<=" : NULL;
        if (strcmp(op, "==") == 0 && is_zero(ch.items[1]))
            g->op = "==";
        ok = g->op != NULL;
    }
    moxc__children_free(&ch);
    g->item = code;
    return ok;
}

typedef struct warp_use {
    lw *L;
    bool found;
} warp_use;

static enum CXChildVisitResult find_warp_use(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    warp_use *w = data;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        const char *name = lw_intrinsic(w->L, c, NULL);
        if (name && (strcmp(name, "mox_warp_id") == 0 || strcmp(name, "mox_lane_id") == 0))
            w->found = true;
    }
    return w->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

bool lw_region_reads_warp(lw *L, const size_t *at, size_t n) {
    warp_use w = {L, false};
    for (size_t k = 0; k < n && !w.found; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind == LW_CODE && !it->dead && it->region != LW_NONE &&
            find_warp_use(it->cur, it->cur, &w) == CXChildVisit_Recurse)
            clang_visitChildren(it->cur, find_warp_use, &w);
    }
    /* and the recomputed variables the region declares again */
    for (size_t r = 0; r < L->ref_count && !w.found; r++) {
        const lw_var *v = &L->vars[L->refs[r].var];
        const lw_item *it = &L->items[L->refs[r].item];
        bool here = false;
        for (size_t k = 0; k < n && !here; k++)
            here = at[k] == L->refs[r].item;
        if (here && !it->dead && v->cls == LV_REMAT && find_warp_use(v->init, v->init, &w) == CXChildVisit_Recurse)
            clang_visitChildren(v->init, find_warp_use, &w);
    }
    return w.found;
}
