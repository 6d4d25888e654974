/* check_cxx.c - the part of C11 that the CUDA translation unit cannot
 * compile: nvcc reads kernel sources (and the headers they include) as C++,
 * so a source that builds for the CPU would break on the first CUDA machine.
 * Rejected here, in every declaration and function outside system headers
 * and mox's own headers (nvcc compiles them whether a kernel reaches them
 * or not): names that are C++ keywords, variable-length arrays, and
 * implicit conversions from void * to another object pointer type; types
 * that differ between C and C++ in check_cxx_types.c, the rest of C11 that
 * C++ refuses in check_cxx_c11.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

/* What a declaration is, in the words of the message; NULL for cursors
 * that declare no name. */
static const char *declaration_kind(enum CXCursorKind k) {
    switch (k) {
    case CXCursor_VarDecl:
        return "variable";
    case CXCursor_ParmDecl:
        return "parameter";
    case CXCursor_FunctionDecl:
        return "function";
    case CXCursor_FieldDecl:
        return "member";
    case CXCursor_StructDecl:
        return "struct tag";
    case CXCursor_UnionDecl:
        return "union tag";
    case CXCursor_EnumDecl:
        return "enum tag";
    case CXCursor_TypedefDecl:
        return "typedef";
    case CXCursor_EnumConstantDecl:
        return "enum constant";
    case CXCursor_LabelStmt:
        return "label";
    default:
        return NULL;
    }
}

static void check_name(moxc__tu *t, CXCursor c) {
    const char *kind = declaration_kind(clang_getCursorKind(c));
    if (!kind)
        return;
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    if (name && moxc__is_reserved_name(name))
        moxc__keyword_error_at(t->front, moxc__cursor_loc(c),
                               "%s '%s' is a C++ keyword; the CUDA translation unit is C++, rename it",
                               kind, name);
    free(name);
}

/* Whether a type is, or points to or holds, a variable-length array. */
static bool is_variably_modified(CXType t) {
    for (int guard = 0; guard < 64; guard++) {
        CXType c = clang_getCanonicalType(t);
        switch (c.kind) {
        case CXType_VariableArray:
            return true;
        case CXType_Pointer:
            t = clang_getPointeeType(c);
            break;
        case CXType_ConstantArray:
        case CXType_IncompleteArray:
            t = clang_getArrayElementType(c);
            break;
        default:
            return false;
        }
    }
    return false;
}

/* What to write instead: a parameter is a pointer, so its first dimension
 * may stay empty ('float a[]', 'float a[][4]'); the others need a constant. */
static char *vla_hint(CXCursor c, CXType type) {
    CXType elem = clang_getArrayElementType(type);
    enum CXTypeKind ek = clang_getCanonicalType(elem).kind;
    if (clang_getCursorKind(c) != CXCursor_ParmDecl || elem.kind == CXType_Invalid || is_variably_modified(elem) ||
        ek == CXType_IncompleteArray)
        return moxc__strdup("use a constant size (a macro or an enum constant)");
    char *es = moxc__cxstr(clang_getTypeSpelling(elem));
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    const char *n = name ? name : "p";
    char *hint;
    if (es && ek == CXType_ConstantArray && strchr(es, '[')) {
        int base = (int)(strchr(es, '[') - es);
        hint = moxc__printf("write '%.*s %s[]%s' (a parameter is a pointer; the inner sizes stay constant)", base,
                            es, n, es + base);
    } else {
        hint = moxc__printf("write '%s %s[]' or '%s *%s' (a parameter is a pointer)", es ? es : "?", n,
                            es ? es : "?", n);
    }
    free(name);
    free(es);
    return hint;
}

static void report_vla(moxc__tu *t, CXCursor c, CXType type, const char *what) {
    char *ts = moxc__cxstr(clang_getTypeSpelling(type));
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    char *hint = vla_hint(c, type);
    moxc__error_at(t->front, moxc__cursor_loc(c),
                   "variable-length array type '%s'%s%s%s is not supported in kernel sources (the CUDA "
                   "translation unit is C++, which has none); %s",
                   ts ? ts : "?", what, what[0] && name ? name : "", what[0] ? "'" : "", hint ? hint : "?");
    free(hint);
    free(name);
    free(ts);
}

/* Variable-length arrays: declared (variables, parameters, members,
 * typedefs), cast to, or measured with sizeof. libclang gives a parameter
 * its type as written (float[n]), not the pointer C adjusts it to, so array
 * parameters of variable size are caught here too. Uses of a declared one
 * are not repeated. */
static void check_vla(moxc__tu *t, CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_VarDecl || k == CXCursor_ParmDecl || k == CXCursor_FieldDecl) {
        CXType type = clang_getCursorType(c);
        if (is_variably_modified(type))
            report_vla(t, c, type, k == CXCursor_ParmDecl ? " of parameter '" : " of '");
    } else if (k == CXCursor_TypedefDecl) {
        CXType type = clang_getTypedefDeclUnderlyingType(c);
        if (is_variably_modified(type))
            report_vla(t, c, type, " of typedef '");
    } else if (k == CXCursor_CStyleCastExpr) {
        CXType type = clang_getCursorType(c);
        if (is_variably_modified(type))
            report_vla(t, c, type, "");
    } else if (k == CXCursor_UnaryExpr) {
        /* sizeof is a constant unless it measures a variable-length array */
        CXEvalResult r = clang_Cursor_Evaluate(c);
        if (!r)
            moxc__error_at(t->front, moxc__cursor_loc(c),
                           "sizeof of a variable-length array is not supported in kernel sources (the "
                           "CUDA translation unit is C++, which has none); use a constant size");
        else
            clang_EvalResult_dispose(r);
    }
}

/* (void *)0, possibly in parentheses: NULL, which C++ converts implicitly. */
static bool is_null_constant(CXCursor c, int depth) {
    c = moxc__strip_parens(c);
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_IntegerLiteral) {
        CXEvalResult r = clang_Cursor_Evaluate(c);
        bool zero = r && clang_EvalResult_getKind(r) == CXEval_Int && clang_EvalResult_getAsLongLong(r) == 0;
        if (r)
            clang_EvalResult_dispose(r);
        return zero;
    }
    if (depth > 8 || (k != CXCursor_CStyleCastExpr && k != CXCursor_UnexposedExpr))
        return false;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool yes = ch.count >= 1 && is_null_constant(ch.items[ch.count - 1], depth + 1);
    moxc__children_free(&ch);
    return yes;
}

static bool points_to(CXType t, enum CXTypeKind pointee) {
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Pointer)
        return false;
    enum CXTypeKind pk = clang_getCanonicalType(clang_getPointeeType(c)).kind;
    return pointee == CXType_Invalid ? pk != CXType_Void && pk != CXType_FunctionProto &&
                                           pk != CXType_FunctionNoProto
                                     : pk == pointee;
}

/* An implicit conversion (libclang: an unexposed expression) from void *
 * to an object pointer: C allows it, C++ needs a cast. */
static void check_void_conversion(moxc__tu *t, CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_UnexposedExpr || !points_to(clang_getCursorType(c), CXType_Invalid))
        return;
    moxc__children ch;
    moxc__children_of(c, &ch);
    if (ch.count == 1 && points_to(clang_getCursorType(ch.items[0]), CXType_Void) &&
        !is_null_constant(ch.items[0], 0)) {
        char *from = moxc__cxstr(clang_getTypeSpelling(clang_getCursorType(ch.items[0])));
        char *to = moxc__cxstr(clang_getTypeSpelling(clang_getCursorType(c)));
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "implicit conversion from '%s' to '%s' is not supported in kernel sources (the "
                       "CUDA translation unit is C++, which needs a cast); write '(%s)'",
                       from ? from : "?", to ? to : "?", to ? to : "?");
        free(to);
        free(from);
    }
    moxc__children_free(&ch);
}

static enum CXChildVisitResult visit_inner(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    check_name(data, c);
    check_vla(data, c);
    check_void_conversion(data, c);
    moxc__check_cxx_types(data, c);
    moxc__check_cxx_c11(data, c);
    return CXChildVisit_Recurse;
}

/* Top-level declarations decide where they are; what they hold is there too
 * (a macro's expansion is where the macro is used). */
static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    moxc__tu *t = data;
    CXSourceLocation loc = moxc__cursor_loc(c);
    if (clang_Location_isInSystemHeader(loc) ||
        (t->front->mox_include_real && moxc__in_mox_include(t->front, loc)))
        return CXChildVisit_Continue;
    visit_inner(c, parent, data);
    clang_visitChildren(c, visit_inner, data);
    return CXChildVisit_Continue;
}

void moxc__check_cxx(moxc__tu *t) {
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), visit_top, t);
}
