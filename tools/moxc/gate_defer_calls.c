/* gate_defer_calls.c - calls for the deferred-gate-check analysis (rules:
 * gate_defer.c): what each dialect intrinsic is (mox/kernel.h lists them),
 * which <math.h> functions and compiler builtins are pure, and which
 * helper functions are pure functions of their arguments. Anything not
 * listed here is refused. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

static bool in_list(const char *name, const char *const *list, size_t n, bool prefix) {
    for (size_t i = 0; i < n; i++)
        if (prefix ? moxc__starts_with(name, list[i]) : strcmp(name, list[i]) == 0)
            return true;
    return false;
}
#define IN_LIST(name, list, prefix) in_list(name, list, sizeof list / sizeof list[0], prefix)

bool moxc__gd_is_effect_name(const char *name) {
    return strcmp(name, "mox_fail") == 0 ||
           (moxc__starts_with(name, "mox_atomic_") && !moxc__starts_with(name, "mox_atomic_load_"));
}

static gd_call classify_intrinsic(const char *name) {
    /* indices and sizes (mox__dynamic_shared: the block's scratch) */
    static const char *const geometry[] = {"mox_thread_idx", "mox_block_idx", "mox_block_dim",
                                           "mox_grid_dim",   "mox_lane_id",   "mox_warp_size",
                                           "mox_warp_id",    "mox_warps_per_block", "mox__dynamic_shared"};
    /* functions of their arguments alone */
    static const char *const pure[] = {"mox_f16_",  "mox_f32_",  "mox_make_", "mox_rsqrtf", "mox_fast_",
                                       "mox_popc_", "mox_clz_",  "mox_ffs_",  "mox_brev_",  "mox_mul24_",
                                       "mox_mulhi_", "mox_min_", "mox_max_"};
    if (IN_LIST(name, geometry, false))
        return GD_CALL_GEOMETRY;
    if (moxc__intrinsic_coop(name) != MOXC_COOP_NONE)
        return GD_CALL_COLLECTIVE; /* mox_barrier, warp reductions, scans, shuffles, votes */
    if (moxc__starts_with(name, "mox_atomic_load_"))
        return GD_CALL_LOAD;
    if (moxc__gd_is_effect_name(name))
        return GD_CALL_EFFECT;
    if (IN_LIST(name, pure, true))
        return GD_CALL_PURE;
    return GD_CALL_REFUSED;
}

/* What <math.h>'s classification macros and constants become in C. */
static bool is_pure_builtin(const char *name) {
    static const char *const builtins[] = {"__builtin_is",       "__builtin_signbit", "__builtin_fpclassify",
                                           "__builtin_huge_val", "__builtin_inf",     "__builtin_nan",
                                           "__builtin_fabs",     "__builtin_copysign", "__builtin_expect"};
    return IN_LIST(name, builtins, true);
}

static bool has_pointer_param(CXCursor fn, char **which) {
    int n = clang_Cursor_getNumArguments(fn);
    for (int i = 0; i < n; i++) {
        CXCursor p = clang_Cursor_getArgument(fn, (unsigned)i);
        if (clang_getCanonicalType(clang_getCursorType(p)).kind == CXType_Pointer) {
            if (which)
                *which = moxc__cxstr(clang_getCursorSpelling(p));
            return true;
        }
    }
    return false;
}

typedef struct pure_walk {
    gd *g;
    char *why; /* the first reason the helper is not pure */
} pure_walk;

static void impure(pure_walk *w, CXCursor c, const char *what) {
    char *where = moxc__where(moxc__cursor_loc(c));
    w->why = moxc__printf("%s (%s)", what, where ? where : "?");
    free(where);
}

static enum CXChildVisitResult pure_visit(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    pure_walk *w = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_GotoStmt ||
        k == CXCursor_IndirectGotoStmt)
        impure(w, c, "has a loop or goto");
    else if (k == CXCursor_ArraySubscriptExpr || (k == CXCursor_UnaryOperator && moxc__gd_unary_kind(c) == GD_UNARY_DEREF))
        impure(w, c, "accesses memory");
    else if (k == CXCursor_MemberRefExpr) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count && moxc__gd_is_pointer(ch.items[0]))
            impure(w, c, "accesses memory");
        moxc__children_free(&ch);
    } else if (k == CXCursor_DeclRefExpr || k == CXCursor_VarDecl) {
        CXCursor v = k == CXCursor_VarDecl ? c : clang_getCursorReferenced(c);
        CXType type = clang_getCursorType(v);
        if (clang_getCursorKind(v) == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(v) &&
            (moxc__gd_is_array_type(type) || !moxc__is_const_object(type)))
            impure(w, c, "uses a file-scope or static array or variable");
    } else if (k == CXCursor_CallExpr) {
        char *why = NULL;
        gd_call call = moxc__gd_classify_call(w->g, c, &why);
        if (call != GD_CALL_PURE && call != GD_CALL_GEOMETRY) {
            char *name = moxc__cxstr(clang_getCursorSpelling(c));
            char *what = why ? moxc__printf("calls '%s' (%s)", name ? name : "?", why)
                             : moxc__printf("calls '%s'", name ? name : "?");
            impure(w, c, what ? what : "calls a function that is not pure");
            free(what);
            free(name);
        }
        free(why);
    } else if (k == CXCursor_StmtExpr || k == CXCursor_AsmStmt || k == CXCursor_GCCAsmStmt) {
        impure(w, c, "has a statement the analysis does not know");
    }
    return w->why ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether helper t->fns[j] is pure; otherwise *why (malloc'd) says why. */
static bool helper_pure(gd *g, size_t j, char **why) {
    gd_helper *h = &g->helpers[j];
    if (h->state == GD_HELPER_UNKNOWN) {
        h->state = GD_HELPER_VISITING;
        CXCursor fn = g->t->fns[j].cursor;
        pure_walk w = {g, NULL};
        char *param = NULL;
        if (has_pointer_param(fn, &param)) {
            char *what = moxc__printf("takes a pointer parameter '%s'", param ? param : "?");
            impure(&w, fn, what ? what : "takes a pointer parameter");
            free(what);
        } else {
            clang_visitChildren(fn, pure_visit, &w);
        }
        free(param);
        h->why_not = w.why;
        h->state = w.why ? GD_HELPER_IMPURE : GD_HELPER_PURE;
    }
    if (h->state != GD_HELPER_IMPURE) /* VISITING: recursion, which moxc refuses anyway */
        return true;
    *why = moxc__printf("call to '%s', which %s,", g->t->fns[j].name, h->why_not ? h->why_not : "is not pure");
    return false;
}

gd_call moxc__gd_classify_call(gd *g, CXCursor call, char **why) {
    *why = NULL;
    CXCursor ref = clang_getCursorReferenced(call);
    if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_FunctionDecl) {
        *why = moxc__strdup("a call through a function pointer");
        return GD_CALL_REFUSED;
    }
    char *name = moxc__cxstr(clang_getCursorSpelling(ref));
    if (!name) {
        g->oom = true;
        return GD_CALL_REFUSED;
    }
    gd_call kind = GD_CALL_REFUSED;
    CXCursor def = clang_getCursorDefinition(ref);
    size_t j = clang_Cursor_isNull(def) ? MOXC_NO_FN : moxc__fn_index(g->t, def, false);
    if (moxc__is_intrinsic(g->t, ref)) {
        kind = classify_intrinsic(name);
        if (kind == GD_CALL_REFUSED)
            *why = moxc__printf("call to '%s', which the analysis does not know to be free of side effects", name);
    } else if (j != MOXC_NO_FN) {
        /* one that is not pure is followed into, call by call */
        kind = helper_pure(g, j, why) ? GD_CALL_PURE : GD_CALL_HELPER;
        free(*why);
        *why = NULL;
    } else if (moxc__is_math_function(name) || is_pure_builtin(name)) {
        kind = has_pointer_param(ref, NULL) ? GD_CALL_REFUSED : GD_CALL_PURE;
        if (kind == GD_CALL_REFUSED)
            *why = moxc__printf("call to '%s', which writes through a pointer", name);
    } else {
        *why = moxc__printf("call to '%s', which the analysis does not know to be free of side effects", name);
    }
    free(name);
    return kind;
}
