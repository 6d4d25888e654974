/* gate_defer_one.c - whether an `if` condition lets one thread of a block
 * through (gate_defer.h): `t == 0`, `mox_thread_idx().x == BLOCK - 1u`,
 * `t == 0 && i < n`. The deferred gate check asks the gate at each guard;
 * a guard that only one thread of a block reaches after the kernel's
 * barriers asks once per block, which measured cheaper than the check at
 * entry on an H200, while a guard every thread reaches after a barrier
 * measured dearer (docs/kernel-language.md, "The deferred gate check").
 * Only which entries moxc makes depends on the answer: both are correct. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

/* mox_thread_idx().x, .y or .z */
static bool is_thread_index_member(CXCursor c) {
    c = moxc__strip_wrappers(c, true);
    if (clang_getCursorKind(c) != CXCursor_MemberRefExpr)
        return false;
    moxc__children ch;
    moxc__children_of(c, &ch);
    CXCursor base = ch.count == 1 ? moxc__strip_wrappers(ch.items[0], true) : clang_getNullCursor();
    moxc__children_free(&ch);
    if (clang_getCursorKind(base) != CXCursor_CallExpr)
        return false;
    char *name = moxc__cxstr(clang_getCursorSpelling(base));
    bool yes = name && strcmp(name, "mox_thread_idx") == 0;
    free(name);
    return yes;
}

/* The thread index as written: mox_thread_idx().x (.y, .z), or a local
 * initialized with it (`uint32_t t = mox_thread_idx().x;`). */
static bool is_thread_index(CXCursor c) {
    c = moxc__strip_wrappers(c, true);
    if (is_thread_index_member(c))
        return true;
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr)
        return false;
    CXCursor var = clang_getCursorReferenced(c);
    if (clang_getCursorKind(var) != CXCursor_VarDecl || clang_Cursor_hasVarDeclGlobalStorage(var))
        return false;
    CXCursor init = moxc__last_expression_child(var);
    return !clang_Cursor_isNull(init) && is_thread_index_member(init);
}

static bool is_integer_constant(CXCursor c) {
    CXEvalResult r = clang_Cursor_Evaluate(c);
    if (!r)
        return false;
    bool yes = clang_EvalResult_getKind(r) == CXEval_Int;
    clang_EvalResult_dispose(r);
    return yes;
}

static bool one_thread_test(gd *g, CXCursor cond, int depth) {
    cond = moxc__strip_wrappers(cond, true);
    if (depth > 8 || clang_getCursorKind(cond) != CXCursor_BinaryOperator)
        return false;
    moxc__children ch;
    moxc__children_of(cond, &ch);
    bool yes = false;
    if (ch.count == 2) {
        char op[8];
        moxc__binary_op(g->t->tu, ch.items[0], ch.items[1], op, sizeof op);
        if (strcmp(op, "==") == 0)
            yes = (is_thread_index(ch.items[0]) && is_integer_constant(ch.items[1])) ||
                  (is_integer_constant(ch.items[0]) && is_thread_index(ch.items[1]));
        else if (strcmp(op, "&&") == 0)
            yes = one_thread_test(g, ch.items[0], depth + 1) || one_thread_test(g, ch.items[1], depth + 1);
    }
    moxc__children_free(&ch);
    return yes;
}

bool moxc__gd_one_thread_test(gd *g, CXCursor cond) { return one_thread_test(g, cond, 0); }
