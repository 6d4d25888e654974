/* gate_defer_expr.c - expressions for the deferred-gate-check analysis
 * (rules: gate_defer.c): the taint of each value, the places a value
 * becomes an address, assignments to locals, and the statements whose
 * effects the deferred copy guards. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

static CXType canonical_type(CXCursor c) { return clang_getCanonicalType(clang_getCursorType(c)); }

bool moxc__gd_is_pointer(CXCursor e) { return canonical_type(e).kind == CXType_Pointer; }

static bool is_array(CXCursor e) { return moxc__gd_is_array_type(clang_getCursorType(e)); }

static bool is_local_decl(CXCursor d) {
    enum CXCursorKind k = clang_getCursorKind(d);
    return k == CXCursor_ParmDecl || (k == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(d));
}

gd_unary moxc__gd_unary_kind(CXCursor e) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    gd_unary kind = GD_UNARY_VALUE;
    if (ch.count == 1) {
        CXCursor op = ch.items[0];
        CXType result = canonical_type(e), operand = canonical_type(op);
        if (moxc__is_lvalue_expr(op)) {
            /* an operand used as an object: &x, or ++/-- */
            bool address = result.kind == CXType_Pointer &&
                           clang_equalTypes(clang_getCanonicalType(clang_getPointeeType(result)), operand);
            kind = address ? GD_UNARY_ADDRESS : GD_UNARY_INCDEC;
        } else if (operand.kind == CXType_Pointer &&
                   clang_equalTypes(clang_getCanonicalType(clang_getPointeeType(operand)), result)) {
            kind = GD_UNARY_DEREF;
        }
    }
    moxc__children_free(&ch);
    return kind;
}

/* The subscript's pointer (or array) operand and its index: C allows i[p]. */
static void subscript_parts(CXCursor e, CXCursor *base, CXCursor *index) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    *base = *index = clang_getNullCursor();
    if (ch.count == 2) {
        bool swapped = !moxc__gd_is_pointer(ch.items[0]) && moxc__gd_is_pointer(ch.items[1]);
        *base = ch.items[swapped ? 1 : 0];
        *index = ch.items[swapped ? 0 : 1];
    }
    moxc__children_free(&ch);
}

static CXCursor first_child(CXCursor e) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    CXCursor c = ch.count ? ch.items[0] : clang_getNullCursor();
    moxc__children_free(&ch);
    return c;
}

bool moxc__gd_caller_scratch_param(gd *g, CXCursor ref) {
    if (!g->helper_depth || clang_getCursorKind(ref) != CXCursor_ParmDecl || !moxc__gd_is_pointer(ref) ||
        clang_equalCursors(clang_getCursorSemanticParent(ref), g->kernel))
        return false;
    CXType pointee = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(ref)));
    return !clang_isConstQualifiedType(pointee);
}

/* `base` names such a parameter (through casts: a cast cannot turn a
 * pointer to const into one). */
static bool is_helper_pointer_param(gd *g, CXCursor base) {
    base = moxc__strip_wrappers(base, true);
    return clang_getCursorKind(base) == CXCursor_DeclRefExpr &&
           moxc__gd_caller_scratch_param(g, clang_getCursorReferenced(base));
}

gd_store moxc__gd_store_kind(gd *g, CXCursor lvalue, CXCursor *root) {
    *root = clang_getNullCursor();
    CXCursor c = moxc__strip_parens(lvalue);
    for (int guard = 0; guard < 256 && !clang_Cursor_isNull(c); guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_DeclRefExpr) {
            CXCursor ref = clang_getCursorReferenced(c);
            if (is_local_decl(ref)) {
                *root = ref;
                return GD_STORE_LOCAL;
            }
            return moxc__is_shared_array(ref) ? GD_STORE_SHARED : GD_STORE_STATIC;
        }
        CXCursor next = clang_getNullCursor();
        if (k == CXCursor_MemberRefExpr) {
            next = first_child(c); /* s.x writes s; p->x writes memory */
            if (clang_Cursor_isNull(next) || moxc__gd_is_pointer(next))
                return is_helper_pointer_param(g, next) ? GD_STORE_CALLER : GD_STORE_MEMORY;
        } else if (k == CXCursor_ArraySubscriptExpr) {
            CXCursor index;
            subscript_parts(c, &next, &index);
            next = moxc__strip_wrappers(next, true); /* a[i] of a named array writes a */
            if (!is_array(next))
                return is_helper_pointer_param(g, next) ? GD_STORE_CALLER : GD_STORE_MEMORY;
        } else if (k == CXCursor_UnaryOperator && moxc__gd_unary_kind(c) == GD_UNARY_DEREF) {
            return is_helper_pointer_param(g, first_child(c)) ? GD_STORE_CALLER : GD_STORE_MEMORY;
        } else {
            return GD_STORE_MEMORY; /* what the analysis does not follow */
        }
        c = moxc__strip_parens(next);
    }
    return GD_STORE_MEMORY;
}

void moxc__gd_assign_local(gd *g, CXCursor decl, bool value, CXCursor where) {
    /* (what a helper writes through it must stay its caller's scratch) */
    if (moxc__gd_caller_scratch_param(g, decl))
        moxc__gd_problem(g, moxc__cursor_loc(where), "a helper assigning its pointer parameter");
    if (!value && g->tainted_ctrl <= moxc__gd_declared_depth(g, decl))
        return;
    if (clang_getCanonicalType(clang_getCursorType(decl)).kind == CXType_Pointer)
        moxc__gd_problem(g, moxc__cursor_loc(where),
                         "a pointer variable assigned a value that depends on memory");
    moxc__gd_taint(g, decl);
}

static bool read_decl(gd *g, CXCursor ref) {
    enum CXCursorKind k = clang_getCursorKind(ref);
    if (k == CXCursor_EnumConstantDecl || k == CXCursor_FunctionDecl)
        return false;
    if (k == CXCursor_ParmDecl)
        return moxc__gd_is_tainted(g, ref);
    if (k != CXCursor_VarDecl)
        return true;
    CXType type = clang_getCursorType(ref);
    /* an array's name is its address; its elements are read by subscripts */
    if (moxc__gd_is_array_type(type))
        return false;
    if (clang_Cursor_hasVarDeclGlobalStorage(ref))
        return !moxc__is_const_object(type);
    return moxc__gd_is_tainted(g, ref);
}

/* A value that becomes an address: tainted is refused. */
static void check_address(gd *g, bool tainted, CXCursor where, const char *what) {
    if (tainted)
        moxc__gd_problem(g, moxc__cursor_loc(where), what);
}

static bool eval_subscript(gd *g, CXCursor e) {
    CXCursor base, index;
    subscript_parts(e, &base, &index);
    if (clang_Cursor_isNull(base))
        return true;
    bool base_tainted = moxc__gd_eval(g, base);
    check_address(g, moxc__gd_eval(g, index), index, "a value read from memory is used as an index");
    /* a named array (or one inside a struct) is at a fixed address */
    if (!is_array(moxc__strip_wrappers(base, true)))
        check_address(g, base_tainted, base, "a pointer that depends on memory is dereferenced");
    return true;
}

static bool eval_member(gd *g, CXCursor e) {
    CXCursor base = first_child(e);
    if (clang_Cursor_isNull(base))
        return true;
    bool tainted = moxc__gd_eval(g, base);
    if (!moxc__gd_is_pointer(base))
        return tainted; /* s.x: as tainted as s */
    check_address(g, tainted, base, "a pointer that depends on memory is dereferenced");
    return true;
}

/* A store, ++/-- or atomic outside the statements moxc__gd_expr_stmt guards. */
static void store_in_expression(gd *g, CXCursor e) {
    moxc__gd_problem(g, moxc__cursor_loc(e),
                     "a store to memory inside a larger expression (only a statement `target = value;` can be "
                     "guarded)");
}

static bool eval_unary(gd *g, CXCursor e) {
    CXCursor op = first_child(e);
    if (clang_Cursor_isNull(op))
        return true;
    switch (moxc__gd_unary_kind(e)) {
    case GD_UNARY_ADDRESS: {
        moxc__gd_eval(g, op); /* checks the parts of the address */
        CXCursor root;
        if (moxc__gd_store_kind(g, op, &root) == GD_STORE_LOCAL)
            moxc__gd_taint(g, root); /* it may now change behind the analysis's back */
        return false;
    }
    case GD_UNARY_DEREF:
        check_address(g, moxc__gd_eval(g, op), op, "a pointer that depends on memory is dereferenced");
        return true;
    case GD_UNARY_INCDEC: {
        CXCursor root;
        gd_store kind = moxc__gd_store_kind(g, op, &root);
        bool v = moxc__gd_eval(g, op);
        if (kind == GD_STORE_LOCAL)
            moxc__gd_assign_local(g, root, v, e);
        else if (!moxc__gd_scratch_store(kind))
            store_in_expression(g, e);
        return v;
    }
    case GD_UNARY_VALUE:
        break;
    }
    return moxc__gd_eval(g, op);
}

/* An assignment inside a larger expression: only locals and shared arrays. */
bool moxc__gd_eval_assignment(gd *g, CXCursor e, CXCursor lhs, CXCursor rhs, bool compound) {
    CXCursor root;
    gd_store kind = moxc__gd_store_kind(g, lhs, &root);
    bool r = moxc__gd_eval(g, rhs);
    bool l = moxc__gd_eval(g, lhs);
    if (compound && moxc__gd_is_pointer(lhs))
        check_address(g, r, rhs, "a value read from memory offsets a pointer");
    bool v = compound ? l || r : r;
    if (kind == GD_STORE_LOCAL)
        moxc__gd_assign_local(g, root, v, e);
    else if (!moxc__gd_scratch_store(kind))
        store_in_expression(g, e);
    return v;
}

static bool eval_binary(gd *g, CXCursor e, CXCursor lhs, CXCursor rhs) {
    char op[8];
    moxc__binary_op(g->t->tu, lhs, rhs, op, sizeof op);
    /* inside a macro the operator is unknown: an object on the left means
     * `=` or `,`, and an assignment is the safe reading */
    if (op[0] ? strcmp(op, "=") == 0 : moxc__is_lvalue_expr(lhs))
        return moxc__gd_eval_assignment(g, e, lhs, rhs, false);
    bool l = moxc__gd_eval(g, lhs);
    if (op[0] == '\0' || strcmp(op, "&&") == 0 || strcmp(op, "||") == 0) {
        moxc__gd_push_ctrl(g, l, moxc__cursor_loc(lhs));
        bool r = moxc__gd_eval(g, rhs);
        moxc__gd_pop_ctrl(g, l);
        return l || r;
    }
    bool r = moxc__gd_eval(g, rhs);
    if (strcmp(op, ",") == 0)
        return r;
    if ((strcmp(op, "+") == 0 || strcmp(op, "-") == 0) && moxc__gd_is_pointer(lhs) != moxc__gd_is_pointer(rhs)) {
        check_address(g, l, lhs, "a value read from memory offsets a pointer");
        check_address(g, r, rhs, "a value read from memory offsets a pointer");
    }
    return l || r;
}

bool moxc__gd_scratch_array(gd *g, CXCursor e) {
    CXCursor c = moxc__strip_wrappers(e, true), root;
    if (!is_array(c))
        return false;
    gd_store kind = moxc__gd_store_kind(g, c, &root);
    return kind == GD_STORE_LOCAL || moxc__gd_scratch_store(kind);
}

bool moxc__gd_eval_arg(gd *g, CXCursor arg) {
    bool t = moxc__gd_eval(g, arg);
    if (moxc__gd_is_pointer(arg) && !moxc__gd_scratch_array(g, arg))
        check_address(g, t, arg, "a pointer that depends on memory is passed to a call");
    return t;
}

/* The arguments' taint; a tainted pointer argument is an address. */
bool moxc__gd_eval_args(gd *g, CXCursor call) {
    moxc__children ch;
    moxc__children_of(call, &ch);
    bool any = false;
    for (size_t i = 1; i < ch.count; i++)
        any |= moxc__gd_eval_arg(g, ch.items[i]);
    moxc__children_free(&ch);
    return any;
}

static bool eval_call(gd *g, CXCursor call) {
    char *why = NULL;
    gd_call kind = moxc__gd_classify_call(g, call, &why);
    /* a helper followed into evaluates its arguments as it binds them */
    bool args = kind != GD_CALL_HELPER && moxc__gd_eval_args(g, call);
    bool result = true;
    switch (kind) {
    case GD_CALL_PURE:
        result = args;
        break;
    case GD_CALL_GEOMETRY:
        result = false;
        break;
    case GD_CALL_COLLECTIVE:
        if (g->helper_depth)
            moxc__gd_problem(g, moxc__cursor_loc(call),
                             "a barrier or warp operation in a helper that is not pure (the analysis follows "
                             "them only in the kernel's own body)");
        if (g->report)
            g->collective_seen = true;
        if (g->tainted_ctrl) {
            char *name = moxc__cxstr(clang_getCursorSpelling(call));
            char *cond = moxc__where(g->ctrl_loc);
            char *msg = moxc__printf("%s under control flow that depends on memory (the condition at %s)",
                                     name ? name : "a barrier or warp operation", cond ? cond : "?");
            moxc__gd_problem(g, moxc__cursor_loc(call), msg ? msg : "a warp operation under tainted control");
            free(msg);
            free(cond);
            free(name);
        }
        result = args;
        break;
    case GD_CALL_LOAD:
        break;
    case GD_CALL_HELPER:
        result = moxc__gd_walk_helper(g, call);
        break;
    case GD_CALL_EFFECT:
        moxc__gd_problem(g, moxc__cursor_loc(call),
                         "an atomic or mox_fail inside a larger expression (only a statement, or the value of a "
                         "local variable, can be guarded)");
        break;
    case GD_CALL_REFUSED:
        moxc__gd_problem(g, moxc__cursor_loc(call), why ? why : "a call the analysis does not know");
        break;
    }
    free(why);
    return result;
}

bool moxc__gd_eval(gd *g, CXCursor e) {
    enum CXCursorKind k = clang_getCursorKind(e);
    switch (k) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_StringLiteral:
    case CXCursor_UnaryExpr: /* sizeof and _Alignof do not evaluate their operand */
        return false;
    case CXCursor_DeclRefExpr:
        return read_decl(g, clang_getCursorReferenced(e));
    case CXCursor_CallExpr:
        return eval_call(g, e);
    case CXCursor_ArraySubscriptExpr:
        return eval_subscript(g, e);
    case CXCursor_MemberRefExpr:
        return eval_member(g, e);
    case CXCursor_UnaryOperator:
        return eval_unary(g, e);
    case CXCursor_StmtExpr:
        moxc__gd_problem(g, moxc__cursor_loc(e), "a statement expression");
        return true;
    default:
        break;
    }
    moxc__children ch;
    moxc__children_of(e, &ch);
    bool tainted = false;
    if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) && ch.count == 2) {
        tainted = k == CXCursor_BinaryOperator ? eval_binary(g, e, ch.items[0], ch.items[1])
                                               : moxc__gd_eval_assignment(g, e, ch.items[0], ch.items[1], true);
    } else if (k == CXCursor_ConditionalOperator && ch.count == 3) {
        bool cond = moxc__gd_eval(g, ch.items[0]);
        moxc__gd_push_ctrl(g, cond, moxc__cursor_loc(ch.items[0]));
        bool a = moxc__gd_eval(g, ch.items[1]);
        bool b = moxc__gd_eval(g, ch.items[2]);
        tainted = cond || a || b;
        moxc__gd_pop_ctrl(g, cond);
    } else {
        for (size_t i = 0; i < ch.count; i++) {
            enum CXCursorKind ck = clang_getCursorKind(ch.items[i]);
            if (clang_isExpression(ck))
                tainted |= moxc__gd_eval(g, ch.items[i]);
            else if (clang_isStatement(ck) || clang_isDeclaration(ck))
                moxc__gd_stmt(g, ch.items[i]);
        }
    }
    moxc__children_free(&ch);
    return tainted;
}
