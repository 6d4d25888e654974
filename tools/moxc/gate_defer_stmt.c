/* gate_defer_stmt.c - statements for the deferred-gate-check analysis
 * (rules: gate_defer.c): declarations, branches (and which then-branches
 * are one thread's), loops whose headers must not depend on memory, and
 * exits under control that does. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

static void exit_under_ctrl(gd *g, CXCursor s, const char *what) {
    if (!g->tainted_ctrl)
        return;
    char *cond = moxc__where(g->ctrl_loc);
    char *msg = moxc__printf("%s under control flow that depends on memory (the condition at %s)", what,
                             cond ? cond : "?");
    moxc__gd_problem(g, moxc__cursor_loc(s), msg ? msg : what);
    free(msg);
    free(cond);
}

static void walk_decl(gd *g, CXCursor var) {
    CXCursor init = moxc__last_expression_child(var);
    bool is_local = clang_getCursorKind(var) == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(var);
    if (is_local)
        moxc__gd_declare(g, var);
    if (clang_Cursor_isNull(init))
        return;
    if (!is_local) { /* a static local: its initialiser is a constant */
        moxc__gd_eval(g, init);
        return;
    }
    moxc__gd_expr_stmt(g, init, var);
}

/* for: every header expression counts as the condition (libclang does not
 * say which one a lone header expression is); while: cond, body; do:
 * body, cond. */
static void walk_loop(gd *g, CXCursor s, enum CXCursorKind k) {
    moxc__children ch;
    moxc__children_of(s, &ch);
    if (ch.count == 0) {
        moxc__children_free(&ch);
        return;
    }
    size_t body = k == CXCursor_DoStmt ? 0 : ch.count - 1;
    bool header = false;
    for (size_t i = 0; i < ch.count; i++) {
        if (i == body)
            continue;
        if (clang_isExpression(clang_getCursorKind(ch.items[i])))
            header |= moxc__gd_eval(g, ch.items[i]);
        else
            moxc__gd_stmt(g, ch.items[i]);
    }
    if (header)
        moxc__gd_problem(g, moxc__cursor_loc(s),
                         "a loop whose condition depends on a value read from memory (it could run forever)");
    moxc__gd_push_ctrl(g, header, moxc__cursor_loc(s));
    moxc__gd_stmt(g, ch.items[body]);
    moxc__gd_pop_ctrl(g, header);
    moxc__children_free(&ch);
}

/* An if (`is_if`: its then-branch counts as one thread's when the
 * condition is a one-thread test) or a switch. */
static void walk_branch(gd *g, moxc__children *ch, bool is_if) {
    if (ch->count == 0)
        return;
    bool c = moxc__gd_eval(g, ch->items[0]);
    bool one = is_if && g->report && moxc__gd_one_thread_test(g, ch->items[0]);
    moxc__gd_push_ctrl(g, c, moxc__cursor_loc(ch->items[0]));
    for (size_t i = 1; i < ch->count; i++) {
        bool then_branch = one && i == 1;
        g->one_thread_ctrl += then_branch;
        moxc__gd_stmt(g, ch->items[i]);
        g->one_thread_ctrl -= then_branch;
    }
    moxc__gd_pop_ctrl(g, c);
}

void moxc__gd_stmt(gd *g, CXCursor s) {
    enum CXCursorKind k = clang_getCursorKind(s);
    if (clang_isExpression(k)) {
        moxc__gd_expr_stmt(g, s, clang_getNullCursor());
        return;
    }
    moxc__children ch;
    moxc__children_of(s, &ch);
    switch (k) {
    case CXCursor_VarDecl:
        walk_decl(g, s);
        break;
    case CXCursor_IfStmt:
    case CXCursor_SwitchStmt:
        walk_branch(g, &ch, k == CXCursor_IfStmt);
        break;
    case CXCursor_CaseStmt: /* the value(s), then the statement */
        if (ch.count)
            moxc__gd_stmt(g, ch.items[ch.count - 1]);
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        walk_loop(g, s, k);
        break;
    case CXCursor_ReturnStmt:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
    case CXCursor_GotoStmt:
    case CXCursor_IndirectGotoStmt: {
        static const char *const names[] = {"return", "break", "continue", "goto", "goto"};
        const char *what = names[k == CXCursor_ReturnStmt ? 0 : k == CXCursor_BreakStmt ? 1
                                 : k == CXCursor_ContinueStmt ? 2 : 3];
        /* A helper walked for a call may return anywhere: the rest of it
         * is skipped, not the kernel's (it has no barrier or warp
         * operation), and its value is then as tainted as the control. */
        bool helper_return = k == CXCursor_ReturnStmt && g->helper_depth;
        for (size_t i = 0; i < ch.count; i++)
            if (clang_isExpression(clang_getCursorKind(ch.items[i])))
                g->helper_result |= moxc__gd_eval(g, ch.items[i]) && helper_return;
        if (helper_return)
            g->helper_result |= g->tainted_ctrl > 0;
        else
            exit_under_ctrl(g, s, what);
        break;
    }
    case CXCursor_UnexposedStmt: {
        /* libclang 14 shows `#pragma unroll` before a loop (an attributed
         * statement) this way: a statement holding only the loop */
        bool statements = ch.count == 1 && clang_isStatement(clang_getCursorKind(ch.items[0])) &&
                          !clang_isExpression(clang_getCursorKind(ch.items[0]));
        if (statements)
            moxc__gd_stmt(g, ch.items[0]);
        else
            moxc__gd_problem(g, moxc__cursor_loc(s), "a statement the analysis does not know");
        break;
    }
    case CXCursor_CompoundStmt:
    case CXCursor_DeclStmt:
    case CXCursor_DefaultStmt:
    case CXCursor_LabelStmt:
    case CXCursor_NullStmt:
        for (size_t i = 0; i < ch.count; i++)
            moxc__gd_stmt(g, ch.items[i]);
        break;
    default:
        moxc__gd_problem(g, moxc__cursor_loc(s), "a statement the analysis does not know");
        break;
    }
    moxc__children_free(&ch);
}
