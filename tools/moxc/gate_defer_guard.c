/* gate_defer_guard.c - the statements the deferred copy guards (rules:
 * gate_defer.c): a store through a pointer, ++ or -- of such a target, an
 * atomic or mox_fail, each as a whole expression statement, and an atomic
 * as the value of a local variable. Their targets and arguments must have
 * no side effects, because the guarded form evaluates the stored value
 * first and the target only when the gate is good. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

static bool is_assignment(gd *g, CXCursor e, CXCursor *lhs, CXCursor *rhs) {
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k != CXCursor_BinaryOperator && k != CXCursor_CompoundAssignOperator)
        return false;
    moxc__children ch;
    moxc__children_of(e, &ch);
    bool yes = ch.count == 2;
    if (yes) {
        *lhs = ch.items[0];
        *rhs = ch.items[1];
    }
    moxc__children_free(&ch);
    if (!yes || k == CXCursor_CompoundAssignOperator)
        return yes;
    char op[8];
    moxc__binary_op(g->t->tu, *lhs, *rhs, op, sizeof op);
    /* unknown inside a macro: an object on the left reads as `=` */
    return op[0] ? strcmp(op, "=") == 0 : moxc__is_lvalue_expr(*lhs);
}

static bool has_side_effects(gd *g, CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_UnaryExpr) /* sizeof: not evaluated */
        return false;
    if (k == CXCursor_CompoundAssignOperator || k == CXCursor_StmtExpr)
        return true;
    if (k == CXCursor_UnaryOperator && moxc__gd_unary_kind(c) == GD_UNARY_INCDEC)
        return true;
    CXCursor lhs, rhs;
    if (k == CXCursor_BinaryOperator && is_assignment(g, c, &lhs, &rhs))
        return true;
    if (k == CXCursor_CallExpr) {
        char *why = NULL;
        gd_call call = moxc__gd_classify_call(g, c, &why);
        free(why);
        if (call != GD_CALL_PURE && call != GD_CALL_GEOMETRY)
            return true;
    }
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool yes = false;
    for (size_t i = 0; !yes && i < ch.count; i++)
        yes = has_side_effects(g, ch.items[i]);
    moxc__children_free(&ch);
    return yes;
}

static void check_no_side_effects(gd *g, CXCursor part, CXCursor stmt) {
    if (has_side_effects(g, part))
        moxc__gd_problem(g, moxc__cursor_loc(stmt),
                         "a store, atomic or mox_fail whose target or arguments have side effects (++, --, an "
                         "assignment or a call)");
}

static bool is_effect_call(gd *g, CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return false;
    char *why = NULL;
    gd_call call = moxc__gd_classify_call(g, c, &why);
    free(why);
    return call == GD_CALL_EFFECT;
}

/* An atomic or mox_fail call that the copy guards (as a statement, or as
 * a value when `value`). */
static void guard_call(gd *g, CXCursor call, CXCursor stmt, bool value) {
    moxc__children ch;
    moxc__children_of(call, &ch);
    for (size_t i = 1; i < ch.count; i++)
        check_no_side_effects(g, ch.items[i], call);
    moxc__children_free(&ch);
    moxc__gd_eval_args(g, call);
    if (value)
        moxc__gd_guard_value(g, call);
    else
        moxc__gd_guard_stmt(g, stmt);
}

/* The expression statement without parentheses and a (void) cast. */
static CXCursor strip_void(CXCursor e) {
    CXCursor c = moxc__strip_parens(e);
    while (clang_getCursorKind(c) == CXCursor_CStyleCastExpr &&
           clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_Void) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        CXCursor inner = ch.count ? ch.items[ch.count - 1] : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(inner))
            break;
        c = moxc__strip_parens(inner);
    }
    return c;
}

/* `lhs = rhs;` or `lhs op= rhs;` as a statement; false when it is not
 * one the copy guards (the caller evaluates it as an expression). */
static bool assignment_stmt(gd *g, CXCursor e, CXCursor s) {
    CXCursor lhs, rhs, root;
    if (!is_assignment(g, s, &lhs, &rhs))
        return false;
    bool compound = clang_getCursorKind(s) == CXCursor_CompoundAssignOperator;
    gd_store kind = moxc__gd_store_kind(g, lhs, &root);
    CXCursor value = moxc__strip_wrappers(rhs, true);
    if (kind == GD_STORE_LOCAL && !compound &&
        clang_getCursorKind(moxc__strip_parens(lhs)) == CXCursor_DeclRefExpr && is_effect_call(g, value)) {
        guard_call(g, value, e, true); /* local = atomic(...) */
        moxc__gd_assign_local(g, root, true, e);
        return true;
    }
    if (kind != GD_STORE_MEMORY)
        return false;
    check_no_side_effects(g, lhs, e);
    bool r = moxc__gd_eval(g, rhs);
    moxc__gd_eval(g, lhs);
    if (compound && moxc__gd_is_pointer(lhs) && r)
        moxc__gd_problem(g, moxc__cursor_loc(rhs), "a value read from memory offsets a pointer");
    moxc__gd_guard_store(g, e, lhs, rhs);
    return true;
}

void moxc__gd_expr_stmt(gd *g, CXCursor e, CXCursor init_of) {
    if (!clang_Cursor_isNull(init_of)) {
        CXCursor value = moxc__strip_wrappers(e, true);
        if (is_effect_call(g, value)) {
            guard_call(g, value, e, true); /* T local = atomic(...) */
            moxc__gd_assign_local(g, init_of, true, e);
        } else {
            moxc__gd_assign_local(g, init_of, moxc__gd_eval(g, e), e);
        }
        return;
    }
    CXCursor s = strip_void(e);
    enum CXCursorKind k = clang_getCursorKind(s);
    if (assignment_stmt(g, e, s))
        return;
    if (k == CXCursor_UnaryOperator && moxc__gd_unary_kind(s) == GD_UNARY_INCDEC) {
        moxc__children ch;
        moxc__children_of(s, &ch);
        CXCursor root;
        bool memory = ch.count == 1 && moxc__gd_store_kind(g, ch.items[0], &root) == GD_STORE_MEMORY;
        if (memory) {
            check_no_side_effects(g, ch.items[0], e);
            moxc__gd_eval(g, ch.items[0]);
            moxc__gd_guard_stmt(g, e);
        }
        moxc__children_free(&ch);
        if (memory)
            return;
    }
    if (is_effect_call(g, s)) {
        guard_call(g, s, e, false);
        return;
    }
    moxc__gd_eval(g, e);
}
