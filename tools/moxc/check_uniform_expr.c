/* check_uniform_expr.c - expressions for the uniform-participation
 * analysis: the level (uniform, warp-uniform, varying) of each value, the
 * variables assignments make varying, and the check of each cooperative
 * call against the control flow around it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <stdlib.h>
#include <string.h>

#include "check_uniform.h"

static CXCursor strip_implicit(CXCursor c) { return moxc__strip_wrappers(c, true); }

/* The local variable an assignment target writes (part of), or a null cursor. */
static CXCursor root_var(CXCursor target) {
    CXCursor c = moxc__strip_parens(target);
    for (int guard = 0; guard < 256; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_DeclRefExpr) {
            CXCursor ref = clang_getCursorReferenced(c);
            return moxc__u_is_local(ref) ? ref : clang_getNullCursor();
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
            if (!moxc__u_is_array_type(clang_getCursorType(base)))
                break;
        }
        c = moxc__strip_parens(base);
    }
    return clang_getNullCursor();
}

static void assign(uwalk *w, CXCursor target, int level, CXCursor value) {
    CXCursor v = root_var(target);
    if (clang_Cursor_isNull(v))
        return;
    uwhy why = moxc__u_assigned_why(w, level, value, &level);
    moxc__u_raise_var(w, v, level, why);
}

int moxc__u_read_decl(uwalk *w, CXCursor ref) {
    enum CXCursorKind k = clang_getCursorKind(ref);
    ufn *f = ucur(w);
    if (k == CXCursor_EnumConstantDecl || k == CXCursor_FunctionDecl)
        return MOXC_UNIFORM;
    if (k == CXCursor_ParmDecl) {
        int level = MOXC_UNIFORM;
        for (size_t i = 0; i < f->param_count; i++)
            if (clang_equalCursors(f->params[i], ref))
                level = f->param_levels[i];
        uvar *v = moxc__u_find_var(f, ref);
        return max_level(level, v ? v->level : MOXC_UNIFORM);
    }
    if (k != CXCursor_VarDecl)
        return MOXC_VARYING;
    if (clang_Cursor_hasVarDeclGlobalStorage(ref))
        return moxc__is_const_object(clang_getCursorType(ref)) ? MOXC_UNIFORM : MOXC_VARYING;
    if (moxc__u_is_array_type(clang_getCursorType(ref)))
        return MOXC_VARYING;
    uvar *v = moxc__u_find_var(f, ref);
    return v ? v->level : MOXC_UNIFORM;
}

/* Level of an intrinsic's result, given the level of its arguments. */
int moxc__u_intrinsic_level(const char *name, int args) {
    static const char *const uniform[] = {"mox_block_idx", "mox_block_dim", "mox_grid_dim",
                                          "mox_warp_size", "mox_warps_per_block", "mox__dynamic_shared"};
    static const char *const warp_uniform[] = {"mox_warp_id", "mox_warp_sum_", "mox_warp_min_",
                                               "mox_warp_max_", "mox_warp_and_", "mox_warp_or_",
                                               "mox_warp_xor_", "mox_warp_any", "mox_warp_all",
                                               "mox_warp_ballot"};
    /* functions of their arguments alone */
    static const char *const pure[] = {"mox_f16_",   "mox_f32_",  "mox_make_", "mox_rsqrtf", "mox_fast_",
                                       "mox_popc_",  "mox_clz_",  "mox_ffs_",  "mox_brev_",  "mox_mul24_",
                                       "mox_mulhi_", "mox_min_",  "mox_max_"};
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

/* How moxc__u_explain names the thread index as a root (check_uniform_why.c). */
#define THREAD_INDEX_ROOT "the thread index (mox_thread_idx() at "

static void check_coop(uwalk *w, int need, CXCursor call, const char *what) {
    if (!w->report || need == MOXC_COOP_NONE)
        return;
    CXSourceLocation loc;
    int tolerance = need == MOXC_COOP_BLOCK ? MOXC_UNIFORM : MOXC_WARP_UNIFORM;
    uwhy why;
    int level = moxc__u_ctrl_exceeding(w, tolerance, &loc, &why);
    if (level == MOXC_UNIFORM)
        return;
    char *where = moxc__where(loc);
    char *reason = moxc__u_explain(w->a, &why, level);
    /* A warp operation under a test on the thread index is mostly CUDA's
     * `threadIdx.x / warpSize`: arithmetic moxc cannot prove the same on a
     * warp's lanes, where the dialect has an index it knows is. */
    bool warp_from_thread = need == MOXC_COOP_WARP && reason &&
                            strncmp(reason, THREAD_INDEX_ROOT, strlen(THREAD_INDEX_ROOT)) == 0;
    moxc__error_at(w->a->t->front, moxc__cursor_loc(call),
                   "%s requires uniform participation: control flow at %s depends on %s%s", what,
                   where ? where : "?", reason ? reason : "a value that differs between threads",
                   warp_from_thread ? "; to branch per warp use mox_warp_id(), which moxc knows is the "
                                      "same on every lane of a warp (not arithmetic on the thread index "
                                      "such as t / 32)"
                                    : "");
    free(reason);
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
        int l = moxc__u_eval(w, ch.items[i]);
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
            result = moxc__u_intrinsic_level(name, args);
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
                    cf->param_whys[i] = moxc__u_why_expr(w, ch.items[i + 1], UWHY_EXPR);
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
        moxc__u_eval(w, ch.items[0]);
    moxc__children_free(&ch);
    return result;
}

int moxc__u_eval_children(uwalk *w, CXCursor e) {
    moxc__children ch;
    moxc__children_of(e, &ch);
    int level = MOXC_UNIFORM;
    for (size_t i = 0; i < ch.count; i++) {
        enum CXCursorKind k = clang_getCursorKind(ch.items[i]);
        if (clang_isExpression(k))
            level = max_level(level, moxc__u_eval(w, ch.items[i]));
        else if (clang_isStatement(k) || clang_isDeclaration(k))
            moxc__u_stmt(w, ch.items[i]);
    }
    moxc__children_free(&ch);
    return level;
}

bool moxc__u_is_table(CXCursor decl) {
    if (clang_getCursorKind(decl) != CXCursor_ParmDecl)
        return false;
    char *table = moxc__annotation(decl, "mox_table:");
    free(table);
    return table != NULL;
}

static bool is_shared(CXCursor decl) {
    return moxc__is_shared_array(decl);
}

static bool shared_uniform(uwalk *w, CXCursor decl, CXCursor read) {
    uanalysis *a = w->a;
    for (size_t i = 0; i < a->memo_count; i++)
        if (clang_equalCursors(a->memo[i].read, read))
            return a->memo[i].uniform;
    bool uniform = moxc__u_shared_read_uniform(a->t, a->t->fns[w->fn].cursor, decl, read, NULL);
    if (moxc__grow(&a->memo, &a->memo_cap, a->memo_count + 1, sizeof *a->memo)) {
        a->memo[a->memo_count].read = read;
        a->memo[a->memo_count].uniform = uniform;
        a->memo_count++;
    }
    return uniform;
}

static int eval_unary(uwalk *w, CXCursor e, CXCursor op) {
    CXType result = clang_getCanonicalType(clang_getCursorType(e));
    CXType operand = clang_getCanonicalType(clang_getCursorType(op));
    if (moxc__is_lvalue_expr(op)) {
        if (result.kind == CXType_Pointer &&
            clang_equalTypes(clang_getCanonicalType(clang_getPointeeType(result)), operand)) {
            /* &x: x can now change behind the analysis' back */
            int level = moxc__u_eval(w, op);
            CXCursor v = root_var(op);
            if (!clang_Cursor_isNull(v))
                moxc__u_raise_var(w, v, MOXC_VARYING, moxc__u_why_expr(w, op, UWHY_ADDRESS));
            return level;
        }
        int level = moxc__u_eval(w, op); /* ++x, x-- */
        assign(w, op, level, op);
        return max_level(level, moxc__u_ctrl_level(w, NULL, NULL));
    }
    int level = moxc__u_eval(w, op);
    return operand.kind == CXType_Pointer ? MOXC_VARYING : level; /* *p reads memory */
}

static int eval_binary(uwalk *w, CXCursor lhs, CXCursor rhs) {
    char op[8];
    moxc__binary_op(w->a->t->tu, lhs, rhs, op, sizeof op);
    /* Inside macros the operator is unknown: an lvalue on the left (no
     * implicit read around it) means `=` or `,`, and treating both as an
     * assignment is safe. */
    bool assignment = op[0] ? strcmp(op, "=") == 0 : moxc__is_lvalue_expr(lhs);
    if (assignment) {
        int r = moxc__u_eval(w, rhs);
        moxc__u_eval(w, lhs);
        assign(w, lhs, r, rhs);
        return r;
    }
    int l = moxc__u_eval(w, lhs);
    if (op[0] == '\0' || strcmp(op, "&&") == 0 || strcmp(op, "||") == 0) {
        moxc__u_push_ctrl(w, l, moxc__cursor_loc(lhs), lhs);
        int r = moxc__u_eval(w, rhs);
        moxc__u_pop_ctrl(w);
        return max_level(l, r);
    }
    return max_level(l, moxc__u_eval(w, rhs));
}

int moxc__u_eval(uwalk *w, CXCursor e) {
    enum CXCursorKind k = clang_getCursorKind(e);
    switch (k) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_StringLiteral:
    case CXCursor_UnaryExpr: /* sizeof and _Alignof do not evaluate their operand */
        return MOXC_UNIFORM;
    case CXCursor_DeclRefExpr:
        return moxc__u_read_decl(w, clang_getCursorReferenced(e));
    case CXCursor_CallExpr:
        return eval_call(w, e);
    default:
        break;
    }
    moxc__children ch;
    moxc__children_of(e, &ch);
    int level;
    if (k == CXCursor_MemberRefExpr && ch.count >= 1) {
        level = moxc__u_eval(w, ch.items[0]);
        if (clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer)
            level = MOXC_VARYING;
    } else if (k == CXCursor_ArraySubscriptExpr) {
        int index = MOXC_UNIFORM, all = MOXC_UNIFORM;
        for (size_t i = 0; i < ch.count; i++) {
            int l = moxc__u_eval(w, ch.items[i]);
            all = max_level(all, l);
            if (i > 0)
                index = max_level(index, l);
        }
        /* memory is varying, except a const table every thread sees alike
         * and shared memory that barriers keep still while it is read */
        level = MOXC_VARYING;
        CXCursor base = ch.count ? strip_implicit(ch.items[0]) : clang_getNullCursor();
        if (clang_getCursorKind(base) == CXCursor_DeclRefExpr) {
            CXCursor ref = clang_getCursorReferenced(base);
            if (clang_getCursorKind(ref) == CXCursor_VarDecl &&
                clang_Cursor_hasVarDeclGlobalStorage(ref) &&
                moxc__u_is_array_type(clang_getCursorType(ref)) &&
                moxc__is_const_object(clang_getCursorType(ref)))
                level = all;
            else if (clang_getCursorKind(ref) == CXCursor_VarDecl && is_shared(ref) && shared_uniform(w, ref, e))
                level = index;
            else if (moxc__u_is_table(ref)) /* a MOX_TABLE parameter: read-only for the launch */
                level = all;
        }
    } else if (k == CXCursor_UnaryOperator && ch.count == 1) {
        level = eval_unary(w, e, ch.items[0]);
    } else if (k == CXCursor_BinaryOperator && ch.count == 2) {
        level = eval_binary(w, ch.items[0], ch.items[1]);
    } else if (k == CXCursor_CompoundAssignOperator && ch.count == 2) {
        int r = moxc__u_eval(w, ch.items[1]);
        level = max_level(moxc__u_eval(w, ch.items[0]), r);
        assign(w, ch.items[0], level, e);
    } else if (k == CXCursor_ConditionalOperator && ch.count >= 2) {
        int c = moxc__u_eval(w, ch.items[0]);
        moxc__u_push_ctrl(w, c, moxc__cursor_loc(ch.items[0]), ch.items[0]);
        level = c;
        for (size_t i = 1; i < ch.count; i++)
            level = max_level(level, moxc__u_eval(w, ch.items[i]));
        moxc__u_pop_ctrl(w);
    } else if (k == CXCursor_StmtExpr) {
        moxc__u_eval_children(w, e);
        level = MOXC_VARYING;
    } else {
        level = moxc__u_eval_children(w, e);
    }
    moxc__children_free(&ch);
    return level;
}
