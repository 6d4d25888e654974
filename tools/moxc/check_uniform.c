/* check_uniform.c - uniform participation. A barrier needs every thread of
 * the block, a warp operation every lane of the warp; a thread that skips
 * one deadlocks the CPU fibers and is undefined behaviour on CUDA. So each
 * cooperative call (or call of a helper that contains one) must only sit
 * under control flow whose conditions are the same for all participants.
 *
 * The analysis is conservative and flow-insensitive per variable: a local is
 * varying if any assignment to it is varying, or happens under varying
 * control; values read from memory, thread/lane indices, atomics and scans
 * are varying; kernel parameters, block/grid geometry and constants are
 * uniform; warp ids and warp reductions are uniform within a warp (enough
 * for warp operations, not for barriers). Helper parameters take the
 * least-uniform level of their call sites. Everything iterates to a fixpoint,
 * then one last pass reports. Early exits under varying control
 * (return/break/continue/goto) make the code they can skip divergent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

typedef struct uvar {
    CXCursor decl;
    int level;
} uvar;

/* A loop or switch that some threads leave early. */
typedef struct udiv {
    CXCursor stmt;
    int level;
    CXSourceLocation loc;
} udiv;

typedef struct ufn {
    uvar *vars;
    size_t var_count, var_cap;
    CXCursor *params;
    int *param_levels;
    size_t param_count;
    int ret;
    udiv *divs;
    size_t div_count, div_cap;
    int whole; /* a goto under varying control: the whole function diverges */
    CXSourceLocation whole_loc;
} ufn;

typedef struct uanalysis {
    moxc__tu *t;
    ufn *fns;
    bool changed;
    bool oom;
} uanalysis;

typedef struct uctrl {
    int level;
    CXSourceLocation loc;
} uctrl;

typedef struct uwalk {
    uanalysis *a;
    size_t fn;
    bool report;
    uctrl *ctrl;
    size_t ctrl_count, ctrl_cap;
    int after_return;
    CXSourceLocation after_loc;
    CXCursor *scopes; /* enclosing loops and switches, innermost last */
    bool *is_switch;
    size_t scope_count, scope_cap;
} uwalk;

static int max_level(int a, int b) {
    return a > b ? a : b;
}

static ufn *ucur(uwalk *w) {
    return &w->a->fns[w->fn];
}

/* ---------------- state ---------------- */

static uvar *find_var(ufn *f, CXCursor decl) {
    for (size_t i = 0; i < f->var_count; i++)
        if (clang_equalCursors(f->vars[i].decl, decl))
            return &f->vars[i];
    return NULL;
}

static void raise_var(uwalk *w, CXCursor decl, int level) {
    ufn *f = ucur(w);
    uvar *v = find_var(f, decl);
    if (!v) {
        if (!moxc__grow(&f->vars, &f->var_cap, f->var_count + 1, sizeof *f->vars))
            return;
        v = &f->vars[f->var_count++];
        v->decl = decl;
        v->level = MOXC_UNIFORM;
        w->a->changed = true;
    }
    if (level > v->level) {
        v->level = level;
        w->a->changed = true;
    }
}

static udiv *find_div(ufn *f, CXCursor stmt) {
    for (size_t i = 0; i < f->div_count; i++)
        if (clang_equalCursors(f->divs[i].stmt, stmt))
            return &f->divs[i];
    return NULL;
}

static void mark_div(uwalk *w, CXCursor stmt, int level, CXSourceLocation loc) {
    ufn *f = ucur(w);
    udiv *d = find_div(f, stmt);
    if (!d) {
        if (!moxc__grow(&f->divs, &f->div_cap, f->div_count + 1, sizeof *f->divs))
            return;
        d = &f->divs[f->div_count++];
        d->stmt = stmt;
        d->level = MOXC_UNIFORM;
        d->loc = loc;
    }
    if (level > d->level) {
        d->level = level;
        d->loc = loc;
        w->a->changed = true;
    }
}

/* The innermost reason the current point is not reached by every thread
 * with a level above `tolerance`; returns its level (0 when none). */
static int ctrl_exceeding(uwalk *w, int tolerance, CXSourceLocation *loc) {
    /* an early exit is the root cause of the loop conditions it makes vary */
    ufn *f = ucur(w);
    for (size_t i = w->scope_count; i-- > 0;) {
        udiv *d = find_div(f, w->scopes[i]);
        if (d && d->level > tolerance) {
            *loc = d->loc;
            return d->level;
        }
    }
    for (size_t i = w->ctrl_count; i-- > 0;) {
        if (w->ctrl[i].level > tolerance) {
            *loc = w->ctrl[i].loc;
            return w->ctrl[i].level;
        }
    }
    if (w->after_return > tolerance) {
        *loc = w->after_loc;
        return w->after_return;
    }
    if (f->whole > tolerance) {
        *loc = f->whole_loc;
        return f->whole;
    }
    return MOXC_UNIFORM;
}

static int ctrl_level(uwalk *w, CXSourceLocation *loc) {
    CXSourceLocation l = clang_getNullLocation();
    int level = ctrl_exceeding(w, MOXC_WARP_UNIFORM, &l);
    if (level == MOXC_UNIFORM)
        level = ctrl_exceeding(w, MOXC_UNIFORM, &l);
    if (loc)
        *loc = l;
    return level;
}

static void push_ctrl(uwalk *w, int level, CXSourceLocation loc) {
    if (!moxc__grow(&w->ctrl, &w->ctrl_cap, w->ctrl_count + 1, sizeof *w->ctrl)) {
        w->a->oom = true; /* the result is discarded: an error is reported */
        return;
    }
    w->ctrl[w->ctrl_count].level = level;
    w->ctrl[w->ctrl_count].loc = loc;
    w->ctrl_count++;
}

static void pop_ctrl(uwalk *w) {
    if (w->ctrl_count)
        w->ctrl_count--;
}

static bool push_scope(uwalk *w, CXCursor stmt, bool is_switch) {
    size_t cap = w->scope_cap;
    if (!moxc__grow(&w->scopes, &w->scope_cap, w->scope_count + 1, sizeof *w->scopes))
        return false;
    if (w->scope_cap != cap) {
        bool *p = realloc(w->is_switch, w->scope_cap * sizeof *p);
        if (!p) {
            w->scope_cap = cap;
            return false;
        }
        w->is_switch = p;
    }
    w->scopes[w->scope_count] = stmt;
    w->is_switch[w->scope_count] = is_switch;
    w->scope_count++;
    return true;
}

/* ---------------- expressions ---------------- */

static int eval(uwalk *w, CXCursor e);
static void stmt(uwalk *w, CXCursor s);

static bool is_local(CXCursor decl) {
    enum CXCursorKind k = clang_getCursorKind(decl);
    if (k == CXCursor_ParmDecl)
        return true;
    return k == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(decl);
}

static bool is_array_type(CXType t) {
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray;
}

static CXCursor strip_implicit(CXCursor c) {
    for (int guard = 0; guard < 256; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr)
            break;
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count != 1) {
            moxc__children_free(&ch);
            break;
        }
        c = ch.items[0];
        moxc__children_free(&ch);
    }
    return c;
}

/* The local variable an assignment target writes (part of), or a null cursor. */
static CXCursor root_var(CXCursor target) {
    CXCursor c = moxc__strip_parens(target);
    for (int guard = 0; guard < 256; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_DeclRefExpr) {
            CXCursor ref = clang_getCursorReferenced(c);
            return is_local(ref) ? ref : clang_getNullCursor();
        }
        if (k != CXCursor_MemberRefExpr && k != CXCursor_ArraySubscriptExpr)
            break;
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count == 0) {
            moxc__children_free(&ch);
            break;
        }
        CXCursor base = ch.items[0];
        moxc__children_free(&ch);
        /* p->x and p[i] write memory, not a variable */
        if (k == CXCursor_MemberRefExpr &&
            clang_getCanonicalType(clang_getCursorType(base)).kind == CXType_Pointer)
            break;
        if (k == CXCursor_ArraySubscriptExpr) {
            base = strip_implicit(base);
            if (!is_array_type(clang_getCursorType(base)))
                break;
        }
        c = moxc__strip_parens(base);
    }
    return clang_getNullCursor();
}

static void assign(uwalk *w, CXCursor target, int level) {
    CXCursor v = root_var(target);
    if (clang_Cursor_isNull(v))
        return;
    raise_var(w, v, max_level(level, ctrl_level(w, NULL)));
}

static int read_decl(uwalk *w, CXCursor ref) {
    enum CXCursorKind k = clang_getCursorKind(ref);
    ufn *f = ucur(w);
    if (k == CXCursor_EnumConstantDecl || k == CXCursor_FunctionDecl)
        return MOXC_UNIFORM;
    if (k == CXCursor_ParmDecl) {
        int level = MOXC_UNIFORM;
        for (size_t i = 0; i < f->param_count; i++)
            if (clang_equalCursors(f->params[i], ref))
                level = f->param_levels[i];
        uvar *v = find_var(f, ref);
        return max_level(level, v ? v->level : MOXC_UNIFORM);
    }
    if (k != CXCursor_VarDecl)
        return MOXC_VARYING;
    if (clang_Cursor_hasVarDeclGlobalStorage(ref))
        return moxc__is_const_object(clang_getCursorType(ref)) ? MOXC_UNIFORM : MOXC_VARYING;
    if (is_array_type(clang_getCursorType(ref)))
        return MOXC_VARYING;
    uvar *v = find_var(f, ref);
    return v ? v->level : MOXC_UNIFORM;
}

/* Level of an intrinsic's result, given the level of its arguments. */
static int intrinsic_level(const char *name, int args) {
    static const char *const uniform[] = {"mox_block_idx", "mox_block_dim", "mox_grid_dim",
                                          "mox_warp_size", "mox_warps_per_block"};
    static const char *const warp_uniform[] = {"mox_warp_id", "mox_warp_sum_", "mox_warp_min_",
                                               "mox_warp_max_", "mox_warp_and_", "mox_warp_or_",
                                               "mox_warp_xor_", "mox_warp_any", "mox_warp_all",
                                               "mox_warp_ballot"};
    static const char *const pure[] = {"mox_f16_", "mox_f32_"};
    for (size_t i = 0; i < sizeof uniform / sizeof uniform[0]; i++)
        if (strcmp(name, uniform[i]) == 0)
            return MOXC_UNIFORM;
    for (size_t i = 0; i < sizeof warp_uniform / sizeof warp_uniform[0]; i++)
        if (moxc__starts_with(name, warp_uniform[i]))
            return MOXC_WARP_UNIFORM;
    for (size_t i = 0; i < sizeof pure / sizeof pure[0]; i++)
        if (moxc__starts_with(name, pure[i]))
            return args;
    return MOXC_VARYING;
}

static void check_coop(uwalk *w, int need, CXCursor call, const char *what) {
    if (!w->report || need == MOXC_COOP_NONE)
        return;
    CXSourceLocation loc;
    int tolerance = need == MOXC_COOP_BLOCK ? MOXC_UNIFORM : MOXC_WARP_UNIFORM;
    if (ctrl_exceeding(w, tolerance, &loc) == MOXC_UNIFORM)
        return;
    char *where = moxc__where(loc);
    moxc__error_at(w->a->t->front, moxc__cursor_loc(call),
                   "%s requires uniform participation: control flow at %s depends on the thread index",
                   what, where ? where : "?");
    free(where);
}

static int eval_call(uwalk *w, CXCursor call) {
    moxc__tu *t = w->a->t;
    moxc__children ch;
    moxc__children_of(call, &ch);
    int args = MOXC_UNIFORM;
    size_t nargs = ch.count ? ch.count - 1 : 0;
    int *levels = nargs ? calloc(nargs, sizeof *levels) : NULL;
    for (size_t i = 1; i < ch.count; i++) {
        int l = eval(w, ch.items[i]);
        if (levels)
            levels[i - 1] = l;
        args = max_level(args, l);
    }
    CXCursor ref = clang_getCursorReferenced(call);
    int result = MOXC_VARYING;
    if (!clang_Cursor_isNull(ref) && clang_getCursorKind(ref) == CXCursor_FunctionDecl) {
        char *name = moxc__cxstr(clang_getCursorSpelling(ref));
        CXCursor def = clang_getCursorDefinition(ref);
        size_t j = clang_Cursor_isNull(def) ? MOXC_NO_FN : moxc__fn_index(t, def, false);
        if (!name) {
            result = MOXC_VARYING;
        } else if (moxc__is_intrinsic(t, ref)) {
            check_coop(w, moxc__intrinsic_coop(name), call, name);
            result = intrinsic_level(name, args);
        } else if (j != MOXC_NO_FN) {
            moxc__fn *callee = &t->fns[j];
            if (callee->coop != MOXC_COOP_NONE) {
                char *what = moxc__printf("call to '%s' (which uses %s)", callee->name,
                                          callee->coop == MOXC_COOP_BLOCK ? "mox_barrier"
                                                                          : "warp operations");
                check_coop(w, callee->coop, call, what ? what : callee->name);
                free(what);
            }
            ufn *cf = &w->a->fns[j];
            for (size_t i = 0; levels && i < nargs && i < cf->param_count; i++) {
                if (levels[i] > cf->param_levels[i]) {
                    cf->param_levels[i] = levels[i];
                    w->a->changed = true;
                }
            }
            result = cf->ret;
        } else if (moxc__is_math_function(name) || moxc__starts_with(name, "__builtin_")) {
            result = args;
        }
        free(name);
    }
    free(levels);
    if (ch.count)
        eval(w, ch.items[0]);
    moxc__children_free(&ch);
    return result;
}

static int eval_children(uwalk *w, CXCursor e) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    int level = MOXC_UNIFORM;
    for (size_t i = 0; i < ch.count; i++) {
        enum CXCursorKind k = clang_getCursorKind(ch.items[i]);
        if (clang_isExpression(k))
            level = max_level(level, eval(w, ch.items[i]));
        else if (clang_isStatement(k) || clang_isDeclaration(k))
            stmt(w, ch.items[i]);
    }
    moxc__children_free(&ch);
    return level;
}

static int eval_unary(uwalk *w, CXCursor e, CXCursor op) {
    CXType result = clang_getCanonicalType(clang_getCursorType(e));
    CXType operand = clang_getCanonicalType(clang_getCursorType(op));
    if (moxc__is_lvalue_expr(op)) {
        if (result.kind == CXType_Pointer &&
            clang_equalTypes(clang_getCanonicalType(clang_getPointeeType(result)), operand)) {
            /* &x: x can now change behind the analysis' back */
            int level = eval(w, op);
            assign(w, op, MOXC_VARYING);
            return level;
        }
        int level = eval(w, op); /* ++x, x-- */
        assign(w, op, level);
        return max_level(level, ctrl_level(w, NULL));
    }
    int level = eval(w, op);
    return operand.kind == CXType_Pointer ? MOXC_VARYING : level; /* *p reads memory */
}

static int eval_binary(uwalk *w, CXCursor e, CXCursor lhs, CXCursor rhs) {
    char op[8];
    moxc__binary_op(w->a->t->tu, e, lhs, op, sizeof op);
    /* Inside macros the operator is unknown: an lvalue on the left (no
     * implicit read around it) means `=` or `,`, and treating both as an
     * assignment is safe. */
    bool assignment = op[0] ? strcmp(op, "=") == 0 : moxc__is_lvalue_expr(lhs);
    if (assignment) {
        int r = eval(w, rhs);
        eval(w, lhs);
        assign(w, lhs, r);
        return r;
    }
    int l = eval(w, lhs);
    if (op[0] == '\0' || strcmp(op, "&&") == 0 || strcmp(op, "||") == 0) {
        push_ctrl(w, l, moxc__cursor_loc(lhs));
        int r = eval(w, rhs);
        pop_ctrl(w);
        return max_level(l, r);
    }
    return max_level(l, eval(w, rhs));
}

static int eval(uwalk *w, CXCursor e) {
    enum CXCursorKind k = clang_getCursorKind(e);
    switch (k) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_StringLiteral:
    case CXCursor_UnaryExpr: /* sizeof and _Alignof do not evaluate their operand */
        return MOXC_UNIFORM;
    case CXCursor_DeclRefExpr:
        return read_decl(w, clang_getCursorReferenced(e));
    case CXCursor_CallExpr:
        return eval_call(w, e);
    default:
        break;
    }
    moxc__children ch;
    moxc__children_of(e, &ch);
    int level;
    if (k == CXCursor_MemberRefExpr && ch.count >= 1) {
        level = eval(w, ch.items[0]);
        if (clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer)
            level = MOXC_VARYING;
    } else if (k == CXCursor_ArraySubscriptExpr) {
        for (size_t i = 0; i < ch.count; i++)
            eval(w, ch.items[i]);
        level = MOXC_VARYING;
    } else if (k == CXCursor_UnaryOperator && ch.count == 1) {
        level = eval_unary(w, e, ch.items[0]);
    } else if (k == CXCursor_BinaryOperator && ch.count == 2) {
        level = eval_binary(w, e, ch.items[0], ch.items[1]);
    } else if (k == CXCursor_CompoundAssignOperator && ch.count == 2) {
        int r = eval(w, ch.items[1]);
        level = max_level(eval(w, ch.items[0]), r);
        assign(w, ch.items[0], level);
    } else if (k == CXCursor_ConditionalOperator && ch.count >= 2) {
        int c = eval(w, ch.items[0]);
        push_ctrl(w, c, moxc__cursor_loc(ch.items[0]));
        level = c;
        for (size_t i = 1; i < ch.count; i++)
            level = max_level(level, eval(w, ch.items[i]));
        pop_ctrl(w);
    } else if (k == CXCursor_StmtExpr) {
        eval_children(w, e);
        level = MOXC_VARYING;
    } else {
        level = eval_children(w, e);
    }
    moxc__children_free(&ch);
    return level;
}

/* ---------------- statements ---------------- */

static void walk_decl(uwalk *w, CXCursor var) {
    int level = eval_children(w, var);
    if (!is_local(var))
        return;
    if (is_array_type(clang_getCursorType(var)))
        level = MOXC_VARYING;
    raise_var(w, var, max_level(level, ctrl_level(w, NULL)));
}

static void exit_under(uwalk *w, enum CXCursorKind k) {
    CXSourceLocation loc;
    int level = ctrl_level(w, &loc);
    if (level == MOXC_UNIFORM)
        return;
    if (k == CXCursor_ReturnStmt) {
        if (level > w->after_return) {
            w->after_return = level;
            w->after_loc = loc;
        }
        for (size_t i = 0; i < w->scope_count; i++)
            if (!w->is_switch[i])
                mark_div(w, w->scopes[i], level, loc);
    } else if (k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt) {
        for (size_t i = w->scope_count; i-- > 0;) {
            if (k == CXCursor_ContinueStmt && w->is_switch[i])
                continue;
            mark_div(w, w->scopes[i], level, loc);
            break;
        }
    } else {
        ufn *f = ucur(w);
        if (level > f->whole) {
            f->whole = level;
            f->whole_loc = loc;
            w->a->changed = true;
        }
    }
}

static void walk_loop(uwalk *w, CXCursor s, enum CXCursorKind k) {
    moxc__children ch;
    moxc__children_of(s, &ch);
    if (ch.count == 0) {
        moxc__children_free(&ch);
        return;
    }
    /* for: header parts then body; while: cond, body; do: body, cond */
    size_t body = k == CXCursor_DoStmt ? 0 : ch.count - 1;
    int cond = MOXC_UNIFORM;
    bool scoped = false;
    for (int pass = 0; pass < 2; pass++) {
        /* the second time, the header runs under the loop's own control */
        for (size_t i = 0; i < ch.count; i++) {
            if (i == body)
                continue;
            if (clang_isExpression(clang_getCursorKind(ch.items[i])))
                cond = max_level(cond, eval(w, ch.items[i]));
            else
                stmt(w, ch.items[i]);
        }
        if (pass == 0) {
            scoped = push_scope(w, s, false);
            CXSourceLocation loc = k == CXCursor_ForStmt || ch.count != 2
                                       ? moxc__cursor_loc(s)
                                       : moxc__cursor_loc(ch.items[body == 0 ? 1 : 0]);
            push_ctrl(w, cond, loc);
            stmt(w, ch.items[body]);
        }
    }
    pop_ctrl(w);
    if (scoped)
        w->scope_count--;
    moxc__children_free(&ch);
}

static void stmt(uwalk *w, CXCursor s) {
    enum CXCursorKind k = clang_getCursorKind(s);
    if (clang_isExpression(k)) {
        eval(w, s);
        return;
    }
    moxc__children ch;
    moxc__children_of(s, &ch);
    switch (k) {
    case CXCursor_VarDecl:
        walk_decl(w, s);
        break;
    case CXCursor_IfStmt:
    case CXCursor_SwitchStmt:
        if (ch.count >= 1) {
            int c = eval(w, ch.items[0]);
            bool scoped = k == CXCursor_SwitchStmt && push_scope(w, s, true);
            push_ctrl(w, c, moxc__cursor_loc(ch.items[0]));
            for (size_t i = 1; i < ch.count; i++)
                stmt(w, ch.items[i]);
            pop_ctrl(w);
            if (scoped)
                w->scope_count--;
        }
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        walk_loop(w, s, k);
        break;
    case CXCursor_ReturnStmt: {
        int v = ch.count ? eval(w, ch.items[0]) : MOXC_UNIFORM;
        ufn *f = ucur(w);
        int level = max_level(v, ctrl_level(w, NULL));
        if (level > f->ret) {
            f->ret = level;
            w->a->changed = true;
        }
        exit_under(w, k);
        break;
    }
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt:
        for (size_t i = 0; i < ch.count; i++)
            eval(w, ch.items[i]);
        exit_under(w, k);
        break;
    default:
        for (size_t i = 0; i < ch.count; i++)
            stmt(w, ch.items[i]);
        break;
    }
    moxc__children_free(&ch);
}

/* ---------------- driver ---------------- */

static void walk_function(uanalysis *a, size_t fn, bool report) {
    uwalk w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.fn = fn;
    w.report = report;
    moxc__children ch;
    moxc__children_of(a->t->fns[fn].cursor, &ch);
    for (size_t i = 0; i < ch.count; i++)
        if (clang_getCursorKind(ch.items[i]) == CXCursor_CompoundStmt)
            stmt(&w, ch.items[i]);
    moxc__children_free(&ch);
    free(w.ctrl);
    free(w.scopes);
    free(w.is_switch);
}

void moxc__check_uniform(moxc__tu *t) {
    if (t->fn_count == 0)
        return;
    uanalysis a = {t, calloc(t->fn_count, sizeof(ufn)), false, false};
    bool ok = a.fns != NULL;
    for (size_t i = 0; ok && i < t->fn_count; i++) {
        int n = clang_Cursor_getNumArguments(t->fns[i].cursor);
        if (n <= 0)
            continue;
        a.fns[i].params = calloc((size_t)n, sizeof(CXCursor));
        a.fns[i].param_levels = calloc((size_t)n, sizeof(int));
        ok = a.fns[i].params && a.fns[i].param_levels;
        for (int p = 0; ok && p < n; p++)
            a.fns[i].params[p] = clang_Cursor_getArgument(t->fns[i].cursor, (unsigned)p);
        a.fns[i].param_count = ok ? (size_t)n : 0;
    }
    if (ok) {
        /* levels only rise and are bounded, so this terminates; the cap is a guard */
        for (int pass = 0; pass < 10000; pass++) {
            a.changed = false;
            for (size_t i = 0; i < t->fn_count; i++)
                walk_function(&a, i, false);
            if (!a.changed)
                break;
        }
        for (size_t i = 0; i < t->fn_count; i++)
            if (t->fns[i].coop != MOXC_COOP_NONE)
                walk_function(&a, i, true);
    }
    if (!ok || a.oom)
        moxc__error_plain(t->front, t->source, "out of memory");
    for (size_t i = 0; a.fns && i < t->fn_count; i++) {
        free(a.fns[i].vars);
        free(a.fns[i].params);
        free(a.fns[i].param_levels);
        free(a.fns[i].divs);
    }
    free(a.fns);
}
