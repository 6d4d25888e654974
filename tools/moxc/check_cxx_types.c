/* check_cxx_types.c - expressions whose type C11 and C++ disagree on, where
 * the type itself becomes a value: a character literal is an int in C and a
 * char in C++, a comparison or logical operator gives int in C and bool in
 * C++. Their values agree, but sizeof, _Alignof and __typeof__ of them do
 * not, so the CPU (C) and the CUDA translation unit (C++) would compute
 * different results from the same text; moxc refuses them. _Generic, which
 * C++ lacks, is refused here too. Called by check_cxx.c for every cursor of
 * the kernel sources and their headers. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

/* The source text at the spelling location of `loc` (inside macro
 * arguments and bodies too), or NULL; `*avail` bytes are readable there. */
static const char *spelled_at(CXTranslationUnit tu, CXSourceLocation loc, size_t *avail) {
    CXFile file;
    unsigned offset;
    clang_getSpellingLocation(loc, &file, NULL, NULL, &offset);
    if (!file)
        return NULL;
    size_t size = 0;
    const char *text = clang_getFileContents(tu, file, &size);
    if (!text || offset >= size)
        return NULL;
    *avail = size - offset;
    return text + offset;
}

/* 'x' (not L'x', u'x', U'x', whose types have the same size in C and C++). */
static bool is_plain_char_literal(CXTranslationUnit tu, CXCursor c) {
    size_t avail = 0;
    const char *s = spelled_at(tu, clang_getCursorLocation(c), &avail);
    return s && avail > 0 && s[0] == '\'';
}

static bool is_bool_operator(CXTranslationUnit tu, CXCursor c, moxc__children *ch) {
    if (clang_getCursorKind(c) == CXCursor_UnaryOperator) {
        size_t avail = 0;
        const char *s = spelled_at(tu, clang_getCursorLocation(c), &avail);
        return s && avail > 0 && s[0] == '!';
    }
    char op[8];
    moxc__binary_op(tu, ch->items[0], ch->items[1], op, sizeof op);
    static const char *const ops[] = {"==", "!=", "<", ">", "<=", ">=", "&&", "||"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

static bool is_comma(CXTranslationUnit tu, moxc__children *ch) {
    char op[8];
    moxc__binary_op(tu, ch->items[0], ch->items[1], op, sizeof op);
    return strcmp(op, ",") == 0;
}

/* Reports the parts of operand `e` of `what` ("sizeof", "_Alignof",
 * "__typeof__") whose type is the operand's type: through parentheses,
 * both arms of ?: and the right side of a comma. */
static void check_operand(moxc__tu *t, CXCursor e, const char *what, int depth) {
    e = moxc__strip_parens(e);
    enum CXCursorKind k = clang_getCursorKind(e);
    if (depth > 32)
        return;
    if (k == CXCursor_CharacterLiteral) {
        if (is_plain_char_literal(t->tu, e))
            moxc__error_at(t->front, moxc__cursor_loc(e),
                           "%s of a character literal differs between the backends: it is an int in C (the "
                           "CPU) but a char in C++ (the CUDA translation unit); write the type you mean "
                           "(sizeof(int) or sizeof(char))",
                           what);
        return;
    }
    if (k != CXCursor_ConditionalOperator && k != CXCursor_BinaryOperator && k != CXCursor_UnaryOperator)
        return;
    moxc__children ch;
    moxc__children_of(e, &ch);
    if (k == CXCursor_ConditionalOperator && ch.count >= 2) {
        for (size_t i = ch.count == 3 ? 1 : ch.count - 1; i < ch.count; i++)
            check_operand(t, ch.items[i], what, depth + 1);
    } else if ((k == CXCursor_UnaryOperator && ch.count == 1) || (k == CXCursor_BinaryOperator && ch.count == 2)) {
        if (is_bool_operator(t->tu, e, &ch))
            moxc__error_at(t->front, moxc__cursor_loc(e),
                           "%s of a comparison or logical operator differs between the backends: its result "
                           "is an int in C (the CPU) but a bool in C++ (the CUDA translation unit); write the "
                           "type you mean (sizeof(int) or sizeof(bool))",
                           what);
        else if (k == CXCursor_BinaryOperator && is_comma(t->tu, &ch))
            check_operand(t, ch.items[1], what, depth + 1);
    }
    moxc__children_free(&ch);
}

/* "sizeof" or "_Alignof", from the operator's spelling. */
static const char *trait_name(CXTranslationUnit tu, CXCursor c) {
    size_t avail = 0;
    const char *s = spelled_at(tu, clang_getCursorLocation(c), &avail);
    if (s && avail >= 6 && strncmp(s, "sizeof", 6) == 0)
        return "sizeof";
    return s && avail >= 4 && (strncmp(s, "_Ali", 4) == 0 || strncmp(s, "__al", 4) == 0 ||
                               strncmp(s, "alig", 4) == 0)
               ? "_Alignof"
               : "sizeof";
}

/* The type a declaration or cast writes, when it can hold __typeof__. */
static bool writes_typeof(CXCursor c) {
    CXType type;
    switch (clang_getCursorKind(c)) {
    case CXCursor_VarDecl:
    case CXCursor_ParmDecl:
    case CXCursor_FieldDecl:
    case CXCursor_FunctionDecl:
    case CXCursor_CStyleCastExpr:
    case CXCursor_CompoundLiteralExpr:
        type = clang_getCursorType(c);
        break;
    case CXCursor_TypedefDecl:
        type = clang_getTypedefDeclUnderlyingType(c);
        break;
    default:
        return false;
    }
    char *s = moxc__cxstr(clang_getTypeSpelling(type));
    bool yes = s && strstr(s, "typeof") != NULL;
    free(s);
    return yes;
}

static enum CXChildVisitResult first_expression(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    if (!clang_isExpression(clang_getCursorKind(c)))
        return CXChildVisit_Continue;
    *(CXCursor *)data = c;
    return CXChildVisit_Break;
}

/* libclang visits the written type before an initialiser or a cast's
 * operand, so typeof's operand is the first expression - unless typeof
 * names a type (__typeof__(int)): then the first expression comes after
 * the declared name, or is the cast's own operand. */
static bool is_in_written_type(CXCursor c, CXCursor operand) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CStyleCastExpr || k == CXCursor_CompoundLiteralExpr) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool yes = ch.count >= 2 && !clang_equalCursors(ch.items[ch.count - 1], operand);
        moxc__children_free(&ch);
        return yes;
    }
    unsigned at = 0, name = 0;
    moxc__expansion(moxc__cursor_start(operand), NULL, NULL, NULL, &at);
    moxc__expansion(clang_getCursorLocation(c), NULL, NULL, NULL, &name);
    return at < name;
}

void moxc__check_cxx_types(moxc__tu *t, CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_GenericSelectionExpr) {
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "_Generic is not supported in kernel sources (the CUDA translation unit is C++, which "
                       "has none); write one function per type (a macro can stamp them out)");
        return;
    }
    if (k == CXCursor_UnaryExpr) {
        /* sizeof x and sizeof(type): the operand, or the expression inside
         * the type (sizeof(__typeof__('a'))), is the only child */
        CXCursor operand = clang_getNullCursor();
        clang_visitChildren(c, first_expression, &operand);
        if (!clang_Cursor_isNull(operand))
            check_operand(t, operand, trait_name(t->tu, c), 0);
        return;
    }
    if (writes_typeof(c)) {
        CXCursor operand = clang_getNullCursor();
        clang_visitChildren(c, first_expression, &operand);
        if (!clang_Cursor_isNull(operand) && is_in_written_type(c, operand))
            check_operand(t, operand, "__typeof__", 0);
    }
}
