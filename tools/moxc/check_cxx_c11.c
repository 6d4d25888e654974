/* check_cxx_c11.c - C11 that C++ (the CUDA translation unit) refuses and
 * that mox/kernel_cuda.h cannot map: implicit conversions to an enum type
 * and arithmetic on enum variables, const variables without an
 * initialiser, a char array initialised by a string with no room for its
 * NUL, a struct/union/enum tag declared inside a struct and used outside
 * it (C++ scopes it to the struct), and a goto that jumps past an
 * initialised declaration into its scope. Called by check_cxx.c for every
 * cursor of the kernel sources and their headers. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

#define CXX_TU "(the CUDA translation unit is C++"

static char *type_name(CXType t) {
    return moxc__cxstr(clang_getTypeSpelling(t));
}

static unsigned offset_of(CXSourceLocation loc) {
    unsigned o = 0;
    moxc__expansion(loc, NULL, NULL, NULL, &o);
    return o;
}

/* Whether a declaration's text holds '=' (an initialiser). A declaration
 * written by a macro (MOX_SHARED_DYNAMIC) counts as initialised: its text
 * is not the declaration's. */
static bool has_initializer(CXTranslationUnit tu, CXCursor decl) {
    unsigned spelled = 0;
    clang_getSpellingLocation(clang_getCursorLocation(decl), NULL, NULL, NULL, &spelled);
    if (spelled != offset_of(clang_getCursorLocation(decl)))
        return true;
    CXToken *tokens = NULL;
    unsigned count = 0;
    clang_tokenize(tu, clang_getCursorExtent(decl), &tokens, &count);
    bool yes = false;
    for (unsigned i = 0; i < count && !yes; i++) {
        char *s = moxc__cxstr(clang_getTokenSpelling(tu, tokens[i]));
        yes = s && strcmp(s, "=") == 0;
        free(s);
    }
    if (tokens)
        clang_disposeTokens(tu, tokens, count);
    return yes;
}

/* An enumerator of `enum_decl` (through parentheses and both arms of ?:):
 * C gives it type int, C++ the enum's, so no conversion there. */
static bool is_own_enumerator(CXCursor e, CXCursor enum_decl, int depth) {
    e = moxc__strip_parens(e);
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(e);
        return clang_getCursorKind(ref) == CXCursor_EnumConstantDecl &&
               clang_equalCursors(clang_getCursorSemanticParent(ref), enum_decl);
    }
    if (k != CXCursor_ConditionalOperator || depth > 16)
        return false;
    moxc__children ch;
    moxc__children_of(e, &ch);
    bool yes = ch.count == 3 && is_own_enumerator(ch.items[1], enum_decl, depth + 1) &&
               is_own_enumerator(ch.items[2], enum_decl, depth + 1);
    moxc__children_free(&ch);
    return yes;
}

/* An implicit conversion (libclang: an unexposed expression) from an
 * integer to an enum type. */
static void check_enum_conversion(moxc__tu *t, CXCursor c) {
    CXType to = clang_getCanonicalType(clang_getCursorType(c));
    if (clang_getCursorKind(c) != CXCursor_UnexposedExpr || to.kind != CXType_Enum)
        return;
    moxc__children ch;
    moxc__children_of(c, &ch);
    if (ch.count == 1) {
        CXType from = clang_getCanonicalType(clang_getCursorType(ch.items[0]));
        CXCursor decl = clang_getTypeDeclaration(to);
        if (!clang_equalTypes(from, to) && !is_own_enumerator(ch.items[0], decl, 0)) {
            char *fs = type_name(clang_getCursorType(ch.items[0])), *ts = type_name(clang_getCursorType(c));
            moxc__error_at(t->front, moxc__cursor_loc(ch.items[0]),
                           "implicit conversion from '%s' to enum type '%s' is not supported in kernel sources "
                           CXX_TU ", which needs a cast); write '(%s)', or use an integer type for the variable",
                           fs ? fs : "?", ts ? ts : "?", ts ? ts : "?");
            free(ts);
            free(fs);
        }
    }
    moxc__children_free(&ch);
}

/* ++, --, += ... on an enum variable: C does the arithmetic, C++ has no such
 * operators for enums. */
static void check_enum_arithmetic(moxc__tu *t, CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_UnaryOperator && k != CXCursor_CompoundAssignOperator)
        return;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool on_enum = ch.count >= 1 && clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Enum &&
                   moxc__is_lvalue_expr(ch.items[0]);
    bool changes = k == CXCursor_CompoundAssignOperator;
    if (on_enum && !changes) {
        CXToken *tokens = NULL;
        unsigned count = 0;
        clang_tokenize(t->tu, clang_getCursorExtent(c), &tokens, &count);
        for (unsigned i = 0; i < count && !changes; i++) {
            char *s = moxc__cxstr(clang_getTokenSpelling(t->tu, tokens[i]));
            changes = s && (strcmp(s, "++") == 0 || strcmp(s, "--") == 0);
            free(s);
        }
        if (tokens)
            clang_disposeTokens(t->tu, tokens, count);
    }
    if (on_enum && changes) {
        char *ts = type_name(clang_getCursorType(ch.items[0]));
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "arithmetic assignment to a variable of enum type '%s' is not supported in kernel sources "
                       CXX_TU ", which has no ++, -- or += on enums); use an integer type (uint32_t) for the "
                       "variable",
                       ts ? ts : "?");
        free(ts);
    }
    moxc__children_free(&ch);
}

static void check_const_uninit(moxc__tu *t, CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_VarDecl || clang_Cursor_getStorageClass(c) == CX_SC_Extern ||
        !moxc__is_const_object(clang_getCursorType(c)) || has_initializer(t->tu, c))
        return;
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    moxc__error_at(t->front, moxc__cursor_loc(c),
                   "const variable '%s' has no initializer, which is not supported in kernel sources " CXX_TU
                   ", which requires one); initialise it, or drop const",
                   name ? name : "?");
    free(name);
}

/* Characters of the string a literal's spelling ("a\\n" "b", u8"x")
 * stands for, without the NUL. */
static size_t literal_length(const char *s) {
    size_t n = 0;
    bool in = false;
    for (; *s; s++) {
        if (*s == '"') {
            in = !in;
        } else if (in && *s == '\\') {
            s++;
            if (*s == 'x')
                while (s[1] && strchr("0123456789abcdefABCDEF", s[1]))
                    s++;
            else if (*s >= '0' && *s <= '7')
                for (int i = 0; i < 2 && s[1] >= '0' && s[1] <= '7'; i++)
                    s++;
            n++;
        } else if (in) {
            n++;
        }
        if (!*s)
            break;
    }
    return n;
}

/* "abc" initialising char[3]: C drops the NUL, C++ refuses. clang gives
 * the literal the array's type. */
static void check_char_array(moxc__tu *t, CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_StringLiteral)
        return;
    CXType type = clang_getCursorType(c);
    if (type.kind != CXType_ConstantArray || clang_Type_getSizeOf(clang_getArrayElementType(type)) != 1)
        return;
    char *text = moxc__cxstr(clang_getCursorSpelling(c));
    size_t len = text ? literal_length(text) : 0;
    long long size = clang_getArraySize(type);
    if (text && size >= 0 && len >= (size_t)size)
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "string literal of %zu characters initialises an array of %lld, leaving no room for its "
                       "terminating NUL, which is not supported in kernel sources " CXX_TU
                       ", which refuses it); make the array one element longer, or write '[]'",
                       len, size);
    free(text);
}

/* A use of a tag (or of an enumerator of an enum) declared inside a struct
 * or union, outside that record: C puts the name in file scope, C++ in the
 * record's. */
static void check_nested_tag(moxc__tu *t, CXCursor c) {
    enum CXCursorKind ck = clang_getCursorKind(c);
    if (ck != CXCursor_TypeRef && ck != CXCursor_DeclRefExpr)
        return;
    CXCursor decl = clang_getCursorReferenced(c);
    if (clang_getCursorKind(decl) == CXCursor_EnumConstantDecl)
        decl = clang_getCursorSemanticParent(decl);
    else if (ck == CXCursor_DeclRefExpr)
        return;
    enum CXCursorKind dk = clang_getCursorKind(decl);
    if (dk != CXCursor_StructDecl && dk != CXCursor_UnionDecl && dk != CXCursor_EnumDecl)
        return;
    CXCursor outer = clang_getCursorLexicalParent(decl);
    enum CXCursorKind ok = clang_getCursorKind(outer);
    if (ok != CXCursor_StructDecl && ok != CXCursor_UnionDecl)
        return;
    unsigned at = 0, from = 0, to = 0;
    CXSourceRange r = clang_getCursorExtent(outer);
    moxc__expansion(moxc__cursor_loc(c), NULL, NULL, NULL, &at);
    moxc__expansion(clang_getRangeStart(r), NULL, NULL, NULL, &from);
    moxc__expansion(clang_getRangeEnd(r), NULL, NULL, NULL, &to);
    if (at >= from && at < to)
        return;
    char *name = moxc__cxstr(clang_getCursorSpelling(clang_getCursorReferenced(c)));
    char *outer_name = moxc__cxstr(clang_getCursorSpelling(outer));
    char *where = moxc__where(moxc__cursor_loc(decl));
    moxc__error_at(t->front, moxc__cursor_loc(c),
                   "'%s' is declared inside struct '%s' (at %s) and used outside it, which is not supported "
                   "in kernel sources " CXX_TU ", where the name belongs to '%s'); declare it before '%s'",
                   name ? name : "?", outer_name ? outer_name : "?", where ? where : "?",
                   outer_name ? outer_name : "?", outer_name ? outer_name : "?");
    free(where);
    free(outer_name);
    free(name);
}

/* ---- goto past an initialised declaration ---- */

typedef struct jump_scan {
    moxc__children vars, gotos; /* initialised locals, goto statements */
    unsigned *scope_end;        /* parallel to vars: end of the block holding it */
    size_t scope_cap;
    unsigned block_end;
    CXTranslationUnit tu;
} jump_scan;

static enum CXChildVisitResult scan_jumps(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    jump_scan *j = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CompoundStmt || k == CXCursor_ForStmt) {
        unsigned saved = j->block_end;
        j->block_end = offset_of(clang_getRangeEnd(clang_getCursorExtent(c)));
        clang_visitChildren(c, scan_jumps, j);
        j->block_end = saved;
        return CXChildVisit_Continue;
    }
    moxc__children *list = NULL;
    if (k == CXCursor_GotoStmt)
        list = &j->gotos;
    else if (k == CXCursor_VarDecl && clang_Cursor_getStorageClass(c) != CX_SC_Static &&
             clang_Cursor_getStorageClass(c) != CX_SC_Extern && has_initializer(j->tu, c))
        list = &j->vars;
    if (list && moxc__grow(&list->items, &list->cap, list->count + 1, sizeof(CXCursor)) &&
        (list == &j->gotos || moxc__grow(&j->scope_end, &j->scope_cap, list->count + 1, sizeof(unsigned)))) {
        if (list == &j->vars)
            j->scope_end[list->count] = j->block_end;
        list->items[list->count++] = c;
    }
    return CXChildVisit_Recurse;
}

/* C++ refuses a jump into the scope of a variable past its initialisation:
 * the label lies in the variable's scope after it, the goto does not. */
static void check_gotos(moxc__tu *t, CXCursor fn) {
    if (clang_getCursorKind(fn) != CXCursor_FunctionDecl || !clang_isCursorDefinition(fn))
        return;
    jump_scan j;
    memset(&j, 0, sizeof j);
    j.tu = t->tu;
    clang_visitChildren(fn, scan_jumps, &j);
    for (size_t g = 0; g < j.gotos.count; g++) {
        CXCursor label = clang_getCursorReferenced(j.gotos.items[g]);
        unsigned at = offset_of(clang_getCursorLocation(j.gotos.items[g]));
        unsigned to = offset_of(clang_getCursorLocation(label));
        for (size_t v = 0; v < j.vars.count; v++) {
            unsigned decl = offset_of(clang_getCursorLocation(j.vars.items[v])), end = j.scope_end[v];
            if (!(decl < to && to <= end) || (decl < at && at <= end))
                continue;
            char *var = moxc__cxstr(clang_getCursorSpelling(j.vars.items[v]));
            char *name = moxc__cxstr(clang_getCursorSpelling(label));
            char *where = moxc__where(clang_getCursorLocation(j.vars.items[v]));
            moxc__error_at(t->front, moxc__cursor_loc(j.gotos.items[g]),
                           "goto '%s' jumps past the initialisation of '%s' (at %s) into its scope, which is "
                           "not supported in kernel sources " CXX_TU ", which refuses it); declare '%s' before "
                           "the goto, or put it in braces { } that close before the label",
                           name ? name : "?", var ? var : "?", where ? where : "?", var ? var : "?");
            free(where);
            free(name);
            free(var);
            break;
        }
    }
    moxc__children_free(&j.vars);
    moxc__children_free(&j.gotos);
    free(j.scope_end);
}

void moxc__check_cxx_c11(moxc__tu *t, CXCursor c) {
    check_gotos(t, c);
    check_enum_conversion(t, c);
    check_enum_arithmetic(t, c);
    check_const_uninit(t, c);
    check_char_array(t, c);
    check_nested_tag(t, c);
}
