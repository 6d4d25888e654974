/* front_cursors.c - libclang cursor queries of moxc's front end that
 * libclang 14 lacks: a cursor's children as an array, annotation
 * attributes (the dialect's markers), an operator's spelling, and whether
 * an expression denotes an object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

static enum CXChildVisitResult collect_child(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    moxc__children *ch = data;
    if (!moxc__grow(&ch->items, &ch->cap, ch->count + 1, sizeof(CXCursor)))
        return CXChildVisit_Break;
    ch->items[ch->count++] = c;
    return CXChildVisit_Continue;
}

void moxc__children_of(CXCursor c, moxc__children *out) {
    out->items = NULL;
    out->count = out->cap = 0;
    clang_visitChildren(c, collect_child, out);
}

void moxc__children_free(moxc__children *ch) {
    free(ch->items);
    ch->items = NULL;
    ch->count = ch->cap = 0;
}

char *moxc__annotation(CXCursor c, const char *prefix) {
    moxc__children ch;
    moxc__children_of(c, &ch);
    char *found = NULL;
    for (size_t i = 0; i < ch.count && !found; i++) {
        if (clang_getCursorKind(ch.items[i]) != CXCursor_AnnotateAttr)
            continue;
        char *text = moxc__cxstr(clang_getCursorSpelling(ch.items[i]));
        if (text && moxc__starts_with(text, prefix))
            found = text;
        else
            free(text);
    }
    moxc__children_free(&ch);
    return found;
}

/* The last child of `c` that `want` accepts, or a null cursor. */
static CXCursor last_child(CXCursor c, bool (*want)(CXCursor)) {
    moxc__children ch;
    moxc__children_of(c, &ch);
    CXCursor last = clang_getNullCursor();
    for (size_t i = 0; i < ch.count; i++)
        if (want(ch.items[i]))
            last = ch.items[i];
    moxc__children_free(&ch);
    return last;
}

static bool is_expression(CXCursor c) { return clang_isExpression(clang_getCursorKind(c)); }

static bool is_compound(CXCursor c) { return clang_getCursorKind(c) == CXCursor_CompoundStmt; }

CXCursor moxc__last_expression_child(CXCursor c) { return last_child(c, is_expression); }

CXCursor moxc__function_body(CXCursor fn) { return last_child(fn, is_compound); }

bool moxc__is_shared_array(CXCursor c) {
    char *text = moxc__annotation(c, "mox_shared");
    bool yes = text && strcmp(text, "mox_shared") == 0;
    free(text);
    return yes;
}

void moxc__binary_op(CXTranslationUnit tu, CXCursor lhs, CXCursor rhs, char *buf, size_t size) {
    buf[0] = '\0';
    /* Outside macros the text between the operands is the operator. Inside
     * one, both operands' expansion locations collapse onto the macro use
     * and the operator stays unknown. */
    CXFile lf, rf;
    unsigned lhs_end, rhs_start;
    moxc__expansion(clang_getRangeEnd(clang_getCursorExtent(lhs)), &lf, NULL, NULL, &lhs_end);
    moxc__expansion(clang_getRangeStart(clang_getCursorExtent(rhs)), &rf, NULL, NULL, &rhs_start);
    if (!lf || !rf || !clang_File_isEqual(lf, rf) || lhs_end >= rhs_start)
        return;
    CXSourceRange between = clang_getRange(clang_getLocationForOffset(tu, lf, lhs_end),
                                           clang_getLocationForOffset(tu, lf, rhs_start));
    CXToken *tokens = NULL;
    unsigned count = 0;
    clang_tokenize(tu, between, &tokens, &count);
    unsigned punct = 0;
    for (unsigned i = 0; i < count; i++) {
        /* clang_tokenize also returns the token starting at the range's end:
         * the right operand's first token */
        unsigned at = 0;
        moxc__expansion(clang_getTokenLocation(tu, tokens[i]), NULL, NULL, NULL, &at);
        if (at >= rhs_start)
            break;
        if (clang_getTokenKind(tokens[i]) == CXToken_Comment)
            continue;
        if (clang_getTokenKind(tokens[i]) != CXToken_Punctuation || punct++ > 0) {
            buf[0] = '\0';
            break;
        }
        CXString sp = clang_getTokenSpelling(tu, tokens[i]);
        snprintf(buf, size, "%s", clang_getCString(sp));
        clang_disposeString(sp);
    }
    if (tokens)
        clang_disposeTokens(tu, tokens, count);
}

CXCursor moxc__strip_wrappers(CXCursor c, bool implicit) {
    for (int guard = 0; guard < 256; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k != CXCursor_ParenExpr && !(implicit && k == CXCursor_UnexposedExpr))
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

CXCursor moxc__strip_parens(CXCursor c) { return moxc__strip_wrappers(c, false); }

bool moxc__is_lvalue_expr(CXCursor c) {
    c = moxc__strip_parens(c);
    switch (clang_getCursorKind(c)) {
    case CXCursor_DeclRefExpr:
    case CXCursor_ArraySubscriptExpr:
    case CXCursor_CompoundLiteralExpr:
        return true;
    case CXCursor_MemberRefExpr: {
        /* p->m is an lvalue; s.m only when s is (f().m is not) */
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool lv = ch.count >= 1 &&
                  (clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer ||
                   moxc__is_lvalue_expr(ch.items[0]));
        moxc__children_free(&ch);
        return lv;
    }
    case CXCursor_UnaryOperator: {
        /* only a dereference yields an lvalue; its operand is an rvalue pointer */
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool deref = ch.count == 1 && !moxc__is_lvalue_expr(ch.items[0]) &&
                     clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer;
        moxc__children_free(&ch);
        return deref;
    }
    default:
        return false;
    }
}
