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
bool lw_is_thread_x_value(lw *L, CXCursor c) {
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

size_t lw_region_code(lw *L, const size_t *at, size_t n, size_t *out, size_t cap, bool whole) {
    size_t count = 0;
    for (size_t k = 0; k < n; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind != LW_CODE || it->dead || it->region == LW_NONE)
            continue;
        if (count == cap || (whole && (it->wrap != LW_WRAP_STMT || it->phase != LW_WHOLE)))
            return cap + 1;
        out[count++] = at[k];
    }
    return count;
}

bool lw_region_guard(lw *L, const size_t *at, size_t n, lw_guard *g) {
    size_t code;
    if (lw_region_code(L, at, n, &code, 1, false) != 1)
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
    ok = ch.count == 2 && lw_is_thread_x_value(L, ch.items[0]) && lw_expr_class(L, ch.items[1], false) == LE_BLOCK;
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

/* ---------------- code that runs once per warp ---------------- */

typedef struct inv_walk {
    lw *L;
    size_t region;
    bool ok;
    int depth;          /* nesting under the item */
    bool under_subscript; /* the DeclRefExpr is the base of a subscript */
} inv_walk;

/* A MOX_SHARED array that region `region` only ever reads by subscript. */
typedef struct shared_use {
    lw *L;
    CXCursor array;
    bool clean;
} shared_use;

/* Not a MOX_SHARED_DYNAMIC pointer: two of them may alias. */
static bool is_shared_array(CXCursor decl) {
    char *shared = moxc__annotation(decl, "mox_shared");
    bool yes = shared != NULL && strcmp(shared, "mox_shared") == 0;
    free(shared);
    return yes;
}

/* Whether target (of an assignment, ++, -- or &) is (part of) `array`. */
static bool targets(CXCursor target, CXCursor array) {
    CXCursor root = lw_target_root(target);
    return !clang_Cursor_isNull(root) && clang_equalCursors(root, array);
}

static enum CXChildVisitResult find_shared_write(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    shared_use *u = data;
    CXCursor target;
    bool addr;
    if (lw_writes(u->L, c, &target, &addr) && targets(target, u->array))
        u->clean = false;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        const char *name = lw_intrinsic(u->L, c, NULL);
        /* a helper or an atomic may write it */
        if (!name || moxc__starts_with(name, "mox_atomic_"))
            u->clean = false;
    }
    return u->clean ? CXChildVisit_Recurse : CXChildVisit_Break;
}

static bool region_only_reads(lw *L, size_t region, CXCursor array) {
    shared_use u = {L, array, true};
    for (size_t i = 0; i < L->item_count && u.clean; i++)
        if (L->items[i].kind == LW_CODE && !L->items[i].dead && L->items[i].region == region)
            clang_visitChildren(L->items[i].cur, find_shared_write, &u);
    return u.clean;
}

/* What code may do to run once per warp for all its lanes: read block-
 * and warp-level values and shared memory the region does not write,
 * write nothing but the variables it declares, call only the geometry. */
static void inv_visit(inv_walk *w, CXCursor c) {
    lw *L = w->L;
    enum CXCursorKind k = clang_getCursorKind(c);
    bool base_of_subscript = false;
    switch (k) {
    case CXCursor_CallExpr: {
        const char *name = lw_intrinsic(L, c, NULL);
        static const char *const allowed[] = {"mox_block_idx", "mox_block_dim", "mox_grid_dim", "mox_warp_id",
                                              "mox_warps_per_block", "mox_warp_size", "mox_f32_to_bits",
                                              "mox_f32_from_bits"};
        bool ok = false;
        for (size_t i = 0; name && i < sizeof allowed / sizeof allowed[0]; i++)
            ok = ok || strcmp(name, allowed[i]) == 0;
        w->ok = w->ok && ok;
        break;
    }
    case CXCursor_ReturnStmt:
    case CXCursor_GotoStmt:
        w->ok = false;
        break;
    case CXCursor_MemberRefExpr: {
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count != 1 || clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer)
            w->ok = false; /* p->x reads memory */
        moxc__children_free(&ch);
        break;
    }
    case CXCursor_UnaryOperator: {
        char op[8];
        lw_operator(L, c, op, sizeof op);
        if (strcmp(op, "*") == 0 || strcmp(op, "&") == 0 || !op[0])
            w->ok = false;
        break;
    }
    case CXCursor_ArraySubscriptExpr: {
        moxc__children ch;
        moxc__children_of(c, &ch);
        CXCursor base = ch.count == 2 ? lw_strip(ch.items[0]) : clang_getNullCursor();
        bool shared = clang_getCursorKind(base) == CXCursor_DeclRefExpr &&
                      is_shared_array(clang_getCursorReferenced(base)) &&
                      region_only_reads(L, w->region, clang_getCursorReferenced(base));
        moxc__children_free(&ch);
        w->ok = w->ok && shared;
        base_of_subscript = true;
        break;
    }
    case CXCursor_DeclRefExpr: {
        CXCursor ref = clang_getCursorReferenced(c);
        if (clang_getCursorKind(ref) == CXCursor_VarDecl && is_shared_array(ref) && !w->under_subscript)
            w->ok = false; /* the array's address escapes */
        break;
    }
    default:
        break;
    }
    /* the base of a subscript, through parentheses and implicit conversions */
    bool transparent = k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr;
    bool saved = w->under_subscript;
    moxc__children ch;
    moxc__children_of(c, &ch);
    for (size_t i = 0; i < ch.count && w->ok; i++) {
        w->under_subscript = base_of_subscript ? i == 0 : transparent && saved;
        inv_visit(w, ch.items[i]);
    }
    moxc__children_free(&ch);
    w->under_subscript = saved;
}

/* Whether item i, after the prefix items before it, can run once per
 * warp: what it writes is declared by the prefix (or by itself), what it
 * reads is block-level, the same across the warp, or the prefix's. */
static bool once_per_warp(lw *L, size_t i, const size_t *prefix, size_t count) {
    const lw_item *it = &L->items[i];
    if (it->kind != LW_CODE || it->phase != LW_WHOLE || it->wrap == LW_WRAP_FLAG)
        return false;
    for (size_t r = 0; r < L->ref_count; r++) {
        if (L->refs[r].item != i)
            continue;
        const lw_var *v = &L->vars[L->refs[r].var];
        bool in_prefix = v->decl_item == i;
        for (size_t p = 0; p < count && !in_prefix; p++)
            in_prefix = v->decl_item == prefix[p];
        bool local = v->cls == LV_LOCAL && !v->multi && !v->addr_taken && !v->param && in_prefix;
        if ((L->refs[r].how & (LR_WRITE | LR_ADDR)) && !local)
            return false;
        bool readable = local || v->cls == LV_BLOCK || (v->param && !v->written && !v->addr_taken) ||
                        (v->cls == LV_REMAT && lw_expr_class(L, v->init, true) <= LE_WARP);
        if (!readable)
            return false;
    }
    inv_walk w = {L, it->region, true, 0, false};
    inv_visit(&w, it->cur);
    return w.ok;
}

/* The prefix's variables must be set by the prefix alone (a later
 * per-lane statement that sets one makes it per lane): the first item
 * declaring one that is not, ends the prefix. */
static size_t settled(lw *L, const size_t *prefix, size_t count) {
    for (size_t p = 0; p < count; p++)
        for (size_t r = 0; r < L->ref_count; r++) {
            const lw_var *v = &L->vars[L->refs[r].var];
            if (v->decl_item != prefix[p] || !(L->refs[r].how & (LR_WRITE | LR_ADDR)))
                continue;
            bool by_prefix = false;
            for (size_t q = 0; q < count; q++)
                by_prefix = by_prefix || L->refs[r].item == prefix[q];
            if (!by_prefix)
                return p;
        }
    return count;
}

size_t lw_warp_prefix(lw *L, const size_t *at, size_t n, size_t *prefix) {
    size_t count = 0;
    for (size_t k = 0; k < n; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind != LW_CODE || it->dead || it->region == LW_NONE)
            continue;
        if (!once_per_warp(L, at[k], prefix, count))
            break;
        prefix[count++] = at[k];
    }
    for (size_t again = settled(L, prefix, count); again < count; again = settled(L, prefix, count))
        count = again;
    return count;
}
