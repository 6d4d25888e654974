/* cpu_lower_operators.c - operators as the CPU lowering sees them: the
 * spelling of a unary or binary operator, read from the kernel source's
 * tokens (unknown inside a macro's body), and whether an operator writes
 * its operand (assignment, ++, --) or takes its address, with the variable
 * such a target belongs to. */
#include "cpu_lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first punctuation token in [from, to) of the main file. */
static void punct_between(lw *L, unsigned from, unsigned to, char *buf, size_t size) {
    if (from >= to || to > L->text_size)
        return;
    CXSourceRange r = clang_getRange(clang_getLocationForOffset(L->t->tu, L->t->main_file, from),
                                     clang_getLocationForOffset(L->t->tu, L->t->main_file, to));
    CXToken *toks = NULL;
    unsigned n = 0;
    clang_tokenize(L->t->tu, r, &toks, &n);
    for (unsigned i = 0; i < n; i++) {
        unsigned at = lw_offset(clang_getTokenLocation(L->t->tu, toks[i]));
        if (at < from || at >= to || clang_getTokenKind(toks[i]) == CXToken_Comment)
            continue;
        if (clang_getTokenKind(toks[i]) == CXToken_Punctuation) {
            char *s = moxc__cxstr(clang_getTokenSpelling(L->t->tu, toks[i]));
            snprintf(buf, size, "%s", s ? s : "");
            free(s);
        }
        break;
    }
    if (toks)
        clang_disposeTokens(L->t->tu, toks, n);
}

/* Operators spelled in the kernel source itself (in a macro's body the
 * spelling stays unknown: ""). */
void lw_operator(lw *L, CXCursor c, char *buf, size_t size) {
    buf[0] = '\0';
    enum CXCursorKind k = clang_getCursorKind(c);
    moxc__children ch;
    moxc__children_of(c, &ch);
    unsigned start = lw_offset(moxc__cursor_start(c)), end = lw_offset(clang_getRangeEnd(clang_getCursorExtent(c)));
    if ((k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) && ch.count == 2) {
        punct_between(L, lw_offset(clang_getRangeEnd(clang_getCursorExtent(ch.items[0]))),
                      lw_offset(moxc__cursor_start(ch.items[1])), buf, size);
    } else if (k == CXCursor_UnaryOperator && ch.count == 1) {
        unsigned op_start = lw_offset(moxc__cursor_start(ch.items[0]));
        unsigned op_end = lw_offset(clang_getRangeEnd(clang_getCursorExtent(ch.items[0])));
        if (start < op_start)
            punct_between(L, start, op_start, buf, size); /* prefix */
        else
            punct_between(L, op_end, end, buf, size);     /* postfix */
    }
    moxc__children_free(&ch);
}

bool lw_is_assignment_op(const char *op) {
    static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* An operand used as an object (no implicit conversion around it): the
 * operand of an assignment, ++, -- or &. Tells those operators apart
 * where their spelling is in a macro's body. */
static bool bare_lvalue(CXCursor c) {
    c = moxc__strip_parens(c);
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_MemberRefExpr) {
        /* s.x is an object when s is; f().x is a value */
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool yes = ch.count == 1 && (clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer ||
                                     bare_lvalue(ch.items[0]));
        moxc__children_free(&ch);
        return yes;
    }
    return k == CXCursor_DeclRefExpr || k == CXCursor_ArraySubscriptExpr || k == CXCursor_UnaryOperator;
}

CXCursor lw_target_root(CXCursor c) {
    for (int guard = 0; guard < 64; guard++) {
        c = lw_strip(c);
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_DeclRefExpr)
            return clang_getCursorReferenced(c);
        if (k != CXCursor_MemberRefExpr && k != CXCursor_ArraySubscriptExpr)
            break;
        moxc__children ch;
        moxc__children_of(c, &ch);
        CXCursor base = ch.count ? ch.items[0] : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(base) ||
            clang_getCanonicalType(clang_getCursorType(lw_strip(base))).kind == CXType_Pointer)
            break; /* p->x, p[i]: memory, not a variable */
        c = base;
    }
    return clang_getNullCursor();
}

bool lw_writes(lw *L, CXCursor c, CXCursor *target, bool *addr) {
    enum CXCursorKind k = clang_getCursorKind(c);
    *addr = false;
    if (k != CXCursor_BinaryOperator && k != CXCursor_CompoundAssignOperator && k != CXCursor_UnaryOperator)
        return false;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool yes = false;
    if (ch.count >= 1) {
        *target = ch.items[0];
        char op[8];
        lw_operator(L, c, op, sizeof op);
        if (k == CXCursor_CompoundAssignOperator)
            yes = true;
        else if (op[0] && k == CXCursor_UnaryOperator)
            yes = (*addr = strcmp(op, "&") == 0) || strcmp(op, "++") == 0 || strcmp(op, "--") == 0;
        else if (op[0])
            yes = strcmp(op, "=") == 0;
        else /* unknown spelling: assume the worst the shape allows */
            yes = bare_lvalue(ch.items[0]) && (k == CXCursor_UnaryOperator ? (*addr = true) : true);
    }
    moxc__children_free(&ch);
    return yes;
}
