/* check_uniform_stmt.c - statements for the uniform-participation analysis
 * (rules: check_uniform.c): declarations take their initializer's level,
 * branches and loops push their condition's level as control, and early
 * exits (return, break, continue, goto) under varying control make what
 * they can skip divergent. */
#include "check_uniform.h"

uwhy moxc__u_assigned_why(uwalk *w, int level, CXCursor value, int *out_level) {
    uwhy why;
    int ctrl = moxc__u_ctrl_level(w, NULL, &why);
    *out_level = max_level(level, ctrl);
    if (ctrl > level)
        return why;
    return moxc__u_why_expr(w, value, UWHY_EXPR);
}

static void walk_decl(uwalk *w, CXCursor var) {
    int level = moxc__u_eval_children(w, var);
    if (!moxc__u_is_local(var))
        return;
    uwhy why;
    if (moxc__u_is_array_type(clang_getCursorType(var))) {
        level = MOXC_VARYING;
        why = moxc__u_why_expr(w, var, UWHY_ARRAY);
    } else {
        moxc__children ch;
        moxc__children_of(var, &ch);
        CXCursor init = var;
        if (ch.count && clang_isExpression(clang_getCursorKind(ch.items[ch.count - 1])))
            init = ch.items[ch.count - 1];
        moxc__children_free(&ch);
        why = moxc__u_assigned_why(w, level, init, &level);
    }
    moxc__u_raise_var(w, var, level, why);
}

static void exit_under(uwalk *w, enum CXCursorKind k) {
    CXSourceLocation loc;
    uwhy why;
    int level = moxc__u_ctrl_level(w, &loc, &why);
    if (level == MOXC_UNIFORM)
        return;
    if (k == CXCursor_ReturnStmt) {
        if (level > w->after_return) {
            w->after_return = level;
            w->after_loc = loc;
            w->after_why = why;
        }
        for (size_t i = 0; i < w->scope_count; i++)
            if (!w->is_switch[i])
                moxc__u_mark_div(w, w->scopes[i], level, loc, why);
    } else if (k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt) {
        for (size_t i = w->scope_count; i-- > 0;) {
            if (k == CXCursor_ContinueStmt && w->is_switch[i])
                continue;
            moxc__u_mark_div(w, w->scopes[i], level, loc, why);
            break;
        }
    } else {
        ufn *f = ucur(w);
        if (level > f->whole) {
            f->whole = level;
            f->whole_loc = loc;
            f->whole_why = why;
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
    CXCursor cond_expr = clang_getNullCursor();
    bool scoped = false;
    for (int pass = 0; pass < 2; pass++) {
        /* the second time, the header runs under the loop's own control */
        for (size_t i = 0; i < ch.count; i++) {
            if (i == body)
                continue;
            if (clang_isExpression(clang_getCursorKind(ch.items[i]))) {
                int l = moxc__u_eval(w, ch.items[i]);
                if (l > cond || clang_Cursor_isNull(cond_expr))
                    cond_expr = ch.items[i];
                cond = max_level(cond, l);
            } else
                moxc__u_stmt(w, ch.items[i]);
        }
        if (pass == 0) {
            scoped = moxc__u_push_scope(w, s, false);
            CXSourceLocation loc = k == CXCursor_ForStmt || ch.count != 2
                                       ? moxc__cursor_loc(s)
                                       : moxc__cursor_loc(ch.items[body == 0 ? 1 : 0]);
            moxc__u_push_ctrl(w, cond, loc, cond_expr);
            moxc__u_stmt(w, ch.items[body]);
        }
    }
    moxc__u_pop_ctrl(w);
    if (scoped)
        w->scope_count--;
    moxc__children_free(&ch);
}

void moxc__u_stmt(uwalk *w, CXCursor s) {
    enum CXCursorKind k = clang_getCursorKind(s);
    if (clang_isExpression(k)) {
        moxc__u_eval(w, s);
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
            int c = moxc__u_eval(w, ch.items[0]);
            bool scoped = k == CXCursor_SwitchStmt && moxc__u_push_scope(w, s, true);
            moxc__u_push_ctrl(w, c, moxc__cursor_loc(ch.items[0]), ch.items[0]);
            for (size_t i = 1; i < ch.count; i++)
                moxc__u_stmt(w, ch.items[i]);
            moxc__u_pop_ctrl(w);
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
        int v = ch.count ? moxc__u_eval(w, ch.items[0]) : MOXC_UNIFORM;
        ufn *f = ucur(w);
        int level;
        uwhy why = moxc__u_assigned_why(w, v, ch.count ? ch.items[0] : s, &level);
        if (level > f->ret) {
            f->ret = level;
            f->ret_why = why;
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
            moxc__u_eval(w, ch.items[i]);
        exit_under(w, k);
        break;
    default:
        for (size_t i = 0; i < ch.count; i++)
            moxc__u_stmt(w, ch.items[i]);
        break;
    }
    moxc__children_free(&ch);
}
