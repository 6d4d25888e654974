/* cpu_lower_expr.c - where an expression can be evaluated: once per block
 * (parameters, constants, block geometry, block-level variables), once
 * per warp (plus the warp index), or again in each region of a thread
 * (plus the thread index and other recomputed variables). Only
 * side-effect-free expressions that read no memory qualify; evaluating
 * one earlier or again gives what the kernel computed. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

lw_var *lw_var_of(lw *L, CXCursor decl) {
    for (size_t i = 0; i < L->var_count; i++)
        if (clang_equalCursors(L->vars[i].decl, decl))
            return &L->vars[i];
    return NULL;
}

static int max_class(int a, int b) {
    return a > b ? a : b;
}

typedef struct classify {
    lw *L;
    bool remat;
    int budget; /* nodes left: recomputed expressions stay cheap */
} classify;

static int class_of(classify *c, CXCursor e);

static int children_class(classify *c, CXCursor e, size_t skip) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    int cls = LE_BLOCK;
    for (size_t i = skip; i < ch.count && cls < LE_NO; i++)
        cls = max_class(cls, class_of(c, ch.items[i]));
    moxc__children_free(&ch);
    return cls;
}

static int ref_class(classify *c, CXCursor ref) {
    enum CXCursorKind k = clang_getCursorKind(ref);
    if (k == CXCursor_EnumConstantDecl)
        return LE_BLOCK;
    if (k == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(ref))
        return moxc__is_const_object(clang_getCursorType(ref)) ? LE_BLOCK : LE_NO; /* constants; not MOX_SHARED */
    lw_var *v = lw_var_of(c->L, ref);
    if (!v)
        return LE_NO;
    if (v->cls == LV_BLOCK) {
        /* recomputed later, a loop's variable must not have moved on:
         * only loops around the recomputed variable's declaration */
        if (c->remat && v->decl_loop != LW_NONE && !lw_encloses(c->L, v->decl_loop, c->L->remat_site))
            return LE_NO;
        return LE_BLOCK;
    }
    if (v->cls == LV_REMAT)
        return LE_THREAD;
    if (v->param && !v->written && !v->addr_taken)
        return LE_BLOCK;
    return LE_NO;
}

static int call_class(classify *c, CXCursor e) {
    const char *name = lw_intrinsic(c->L, e, NULL);
    if (!name)
        return LE_NO;
    static const char *const block[] = {"mox_block_idx", "mox_block_dim", "mox_grid_dim", "mox_warp_size",
                                        "mox_warps_per_block"};
    static const char *const pure[] = {"mox_f32_to_bits", "mox_f32_from_bits", "mox_f16_from_bits",
                                       "mox_f16_to_bits"};
    for (size_t i = 0; i < sizeof block / sizeof block[0]; i++)
        if (strcmp(name, block[i]) == 0)
            return LE_BLOCK;
    if (strcmp(name, "mox_warp_id") == 0)
        return LE_WARP;
    if (strcmp(name, "mox_thread_idx") == 0 || strcmp(name, "mox_lane_id") == 0)
        return LE_THREAD;
    for (size_t i = 0; i < sizeof pure / sizeof pure[0]; i++)
        if (strcmp(name, pure[i]) == 0)
            return children_class(c, e, 1);
    return LE_NO;
}

static bool is_pointer_operand(CXCursor e) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    bool yes = ch.count == 1 && clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer;
    moxc__children_free(&ch);
    return yes;
}

/* An integer or floating constant, however it is spelled (macros too). */
static bool is_constant(CXCursor e) {
    CXEvalResult r = clang_Cursor_Evaluate(e);
    if (!r)
        return false;
    CXEvalResultKind k = clang_EvalResult_getKind(r);
    clang_EvalResult_dispose(r);
    return k == CXEval_Int || k == CXEval_Float;
}

static int class_of(classify *c, CXCursor e) {
    if (--c->budget < 0)
        return LE_NO;
    if (clang_isExpression(clang_getCursorKind(e)) && is_constant(e))
        return LE_BLOCK;
    enum CXCursorKind k = clang_getCursorKind(e);
    char op[8];
    switch (k) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_UnaryExpr: /* sizeof, _Alignof: not evaluated */
        return LE_BLOCK;
    case CXCursor_ParenExpr:
    case CXCursor_UnexposedExpr:
    case CXCursor_CStyleCastExpr:
    case CXCursor_ConditionalOperator:
        return children_class(c, e, 0);
    case CXCursor_TypeRef:
        return LE_BLOCK;
    case CXCursor_UnaryOperator: {
        CXCursor target;
        bool addr;
        if (lw_writes(c->L, e, &target, &addr))
            return LE_NO;
        lw_operator(c->L, e, op, sizeof op);
        if (strcmp(op, "*") == 0 || (!op[0] && is_pointer_operand(e)))
            return LE_NO; /* reads memory */
        return children_class(c, e, 0);
    }
    case CXCursor_BinaryOperator: {
        CXCursor target;
        bool addr;
        if (lw_writes(c->L, e, &target, &addr))
            return LE_NO;
        return children_class(c, e, 0);
    }
    case CXCursor_CompoundAssignOperator:
        return LE_NO;
    case CXCursor_DeclRefExpr:
        return ref_class(c, clang_getCursorReferenced(e));
    case CXCursor_MemberRefExpr: {
        /* s.x of a value; p->x reads memory */
        moxc__children ch;
        moxc__children_of(e, &ch);
        int cls = LE_NO;
        if (ch.count == 1 && clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind != CXType_Pointer)
            cls = class_of(c, ch.items[0]);
        moxc__children_free(&ch);
        return cls;
    }
    case CXCursor_CallExpr:
        return call_class(c, e);
    case CXCursor_ArraySubscriptExpr: {
        /* a constant table: table[i] */
        moxc__children ch;
        moxc__children_of(e, &ch);
        int cls = LE_NO;
        CXCursor base = ch.count == 2 ? lw_strip(ch.items[0]) : clang_getNullCursor();
        if (clang_getCursorKind(base) == CXCursor_DeclRefExpr) {
            CXCursor ref = clang_getCursorReferenced(base);
            if (clang_getCursorKind(ref) == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(ref) &&
                moxc__is_const_object(clang_getCursorType(ref)))
                cls = class_of(c, ch.items[1]);
        }
        moxc__children_free(&ch);
        return cls;
    }
    default:
        return LE_NO;
    }
}

int lw_expr_class(lw *L, CXCursor e, bool remat) {
    classify c = {L, remat, remat ? 48 : 400};
    return class_of(&c, e);
}

/* An assignment (or ++/--) to one of `loop`'s own block variables whose
 * other operand is block-level: the increment of a block-level loop. */
static int assign_class(lw *L, CXCursor e, size_t loop) {
    CXCursor target;
    bool addr;
    if (!lw_writes(L, e, &target, &addr) || addr)
        return LE_NO;
    target = lw_strip(target);
    lw_var *v = clang_getCursorKind(target) == CXCursor_DeclRefExpr ? lw_var_of(L, clang_getCursorReferenced(target))
                                                                    : NULL;
    if (!v || v->cls != LV_BLOCK || v->decl_loop != loop)
        return LE_NO;
    moxc__children ch;
    moxc__children_of(e, &ch);
    int cls = ch.count == 2 ? lw_expr_class(L, ch.items[1], false) : LE_BLOCK;
    moxc__children_free(&ch);
    return cls;
}

int lw_header_class(lw *L, CXCursor e, size_t loop) {
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k == CXCursor_DeclStmt) {
        moxc__children ch;
        moxc__children_of(e, &ch);
        int cls = LE_BLOCK;
        for (size_t i = 0; i < ch.count; i++) {
            lw_var *v = lw_var_of(L, ch.items[i]);
            if (!v || v->cls != LV_BLOCK || v->decl_loop != loop || clang_Cursor_isNull(v->init))
                cls = LE_NO;
            else
                cls = max_class(cls, lw_expr_class(L, v->init, false));
        }
        moxc__children_free(&ch);
        return cls;
    }
    if (k == CXCursor_BinaryOperator) {
        char op[8];
        lw_operator(L, e, op, sizeof op);
        if (strcmp(op, ",") == 0) {
            moxc__children ch;
            moxc__children_of(e, &ch);
            int cls = ch.count == 2 ? max_class(lw_header_class(L, ch.items[0], loop),
                                                lw_header_class(L, ch.items[1], loop))
                                    : LE_NO;
            moxc__children_free(&ch);
            return cls;
        }
    }
    if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator || k == CXCursor_UnaryOperator) {
        int cls = assign_class(L, e, loop);
        if (cls != LE_NO)
            return cls;
    }
    return lw_expr_class(L, lw_strip(e), false);
}

/* ---------------- helpers that read the thread index ---------------- */

typedef struct geo_walk {
    lw *L;
    unsigned char *memo; /* per t->fns: 0 unknown, 1 no, 2 yes, 3 being walked */
    bool in_helper;      /* intrinsics written in a region read the loop variables */
    bool found;
} geo_walk;

static bool fn_reads_geometry(geo_walk *g, size_t fn);

static enum CXChildVisitResult find_geometry(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    geo_walk *g = data;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        CXCursor def;
        const char *name = lw_intrinsic(g->L, c, &def);
        if (name && g->in_helper &&
            (strcmp(name, "mox_thread_idx") == 0 || strcmp(name, "mox_lane_id") == 0 ||
             strcmp(name, "mox_warp_id") == 0))
            g->found = true;
        else if (!name && !clang_Cursor_isNull(def)) {
            size_t fn = moxc__fn_index(g->L->t, def, false);
            if (fn != MOXC_NO_FN && fn_reads_geometry(g, fn))
                g->found = true;
        }
    }
    return g->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

static bool fn_reads_geometry(geo_walk *g, size_t fn) {
    if (g->memo[fn])
        return g->memo[fn] == 2;
    g->memo[fn] = 3; /* kernels have no recursion; a cycle would just stop here */
    geo_walk inner = {g->L, g->memo, true, false};
    clang_visitChildren(g->L->t->fns[fn].cursor, find_geometry, &inner);
    g->memo[fn] = inner.found ? 2 : 1;
    return inner.found;
}

/* Whether statement or expression c calls a helper that reads the thread
 * index: its region must keep the lane's thread index current. */
bool lw_calls_thread_geometry(lw *L, CXCursor c) {
    if (L->t->fn_count == 0)
        return false;
    unsigned char *memo = calloc(L->t->fn_count, 1);
    if (!memo)
        return true; /* keeping the lane current is always correct */
    geo_walk g = {L, memo, false, false};
    find_geometry(c, c, &g);
    if (!g.found)
        clang_visitChildren(c, find_geometry, &g);
    free(memo);
    return g.found;
}
