/* front_util.c - small helpers of moxc's front end: memory and strings,
 * diagnostics (one line per error, never repeated), source locations, and
 * libclang cursor/type queries that libclang 14 lacks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

bool moxc__grow(void *ptr, size_t *cap, size_t need, size_t elem_size) {
    void **p = (void **)ptr;
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem_size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

char *moxc__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *moxc__printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

char *moxc__cxstr(CXString s) {
    const char *c = clang_getCString(s);
    char *d = moxc__strdup(c ? c : "");
    clang_disposeString(s);
    return d;
}

bool moxc__starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---------------- diagnostics ---------------- */

void moxc__print_line(moxc__front *f, const char *line) {
    /* Out of memory (-1): the line still prints, it may then repeat. */
    if (moxc__line_set_add(&f->printed, line) == 0)
        return;
    if (f->diag)
        fprintf(f->diag, "%s\n", line);
}

static void report(moxc__front *f, const char *prefix, const char *fmt, va_list ap) {
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    char *line = moxc__printf("%s: error: %s", prefix, msg ? msg : "out of memory");
    f->errors++;
    if (line)
        moxc__print_line(f, line);
    else if (f->diag)
        fprintf(f->diag, "moxc: error: out of memory\n");
    free(line);
    free(msg);
}

/* "file:line:col" of a location's expansion, malloc'd; NULL without a file. */
static char *location_prefix(CXSourceLocation loc) {
    CXFile file;
    unsigned line, col;
    moxc__expansion(loc, &file, &line, &col, NULL);
    if (!file)
        return NULL;
    char *name = moxc__cxstr(clang_getFileName(file));
    char *prefix = moxc__printf("%s:%u:%u", name ? name : "?", line, col);
    free(name);
    return prefix;
}

void moxc__error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...) {
    char *prefix = location_prefix(loc);
    va_list ap;
    va_start(ap, fmt);
    report(f, prefix ? prefix : "moxc", fmt, ap);
    va_end(ap);
    free(prefix);
}

void moxc__keyword_error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...) {
    char *prefix = location_prefix(loc);
    /* the kernel and record checks name the place first, in their words */
    if (prefix && moxc__line_set_add(&f->keyword_at, prefix) == 0) {
        free(prefix);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    report(f, prefix ? prefix : "moxc", fmt, ap);
    va_end(ap);
    free(prefix);
}

void moxc__error_plain(moxc__front *f, const char *where, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report(f, where ? where : "moxc", fmt, ap);
    va_end(ap);
}

void moxc__expansion(CXSourceLocation loc, CXFile *file, unsigned *line, unsigned *col,
                     unsigned *offset) {
    CXFile fl = NULL;
    unsigned l = 0, c = 0, o = 0;
    clang_getExpansionLocation(loc, &fl, &l, &c, &o);
    if (file)
        *file = fl;
    if (line)
        *line = l;
    if (col)
        *col = c;
    if (offset)
        *offset = o;
}

char *moxc__where(CXSourceLocation loc) {
    CXFile file;
    unsigned line;
    moxc__expansion(loc, &file, &line, NULL, NULL);
    if (!file)
        return moxc__strdup("<unknown>");
    char *name = moxc__cxstr(clang_getFileName(file));
    char *s = moxc__printf("%s:%u", name ? name : "?", line);
    free(name);
    return s;
}

CXSourceLocation moxc__cursor_loc(CXCursor c) {
    return clang_getCursorLocation(c);
}

CXSourceLocation moxc__cursor_start(CXCursor c) {
    return clang_getRangeStart(clang_getCursorExtent(c));
}

char *moxc__file_real(CXFile file) {
    char *name = moxc__cxstr(clang_getFileName(file));
    if (!name)
        return NULL;
    char *real = realpath(name, NULL);
    if (real) {
        free(name);
        return real;
    }
    char *tried = moxc__cxstr(clang_File_tryGetRealPathName(file));
    if (tried && tried[0] == '/') {
        free(name);
        return tried;
    }
    free(tried);
    return name;
}

bool moxc__in_mox_include(moxc__front *f, CXSourceLocation loc) {
    if (!f->mox_include_real)
        return true;
    CXFile file;
    moxc__expansion(loc, &file, NULL, NULL, NULL);
    if (!file)
        return false;
    char *real = moxc__file_real(file);
    size_t n = strlen(f->mox_include_real);
    bool in = real && strncmp(real, f->mox_include_real, n) == 0 && real[n] == '/';
    free(real);
    return in;
}

/* ---------------- cursors and types ---------------- */

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

bool moxc__is_shared_array(CXCursor c) {
    char *text = moxc__annotation(c, "mox_shared");
    bool yes = text && strcmp(text, "mox_shared") == 0;
    free(text);
    return yes;
}

CXType moxc__strip_elaborated(CXType t) {
    for (int guard = 0; guard < 64; guard++) {
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Attributed)
            t = clang_Type_getModifiedType(t);
        else
            break;
    }
    return t;
}

char *moxc__canonical_name(CXType t) {
    char *s = moxc__cxstr(clang_getTypeSpelling(clang_getCanonicalType(t)));
    if (!s)
        return NULL;
    static const char *const drop[] = {"const ", "volatile ", "restrict ", "struct "};
    bool again = true;
    while (again) {
        again = false;
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
            if (moxc__starts_with(s, drop[i])) {
                memmove(s, s + strlen(drop[i]), strlen(s) - strlen(drop[i]) + 1);
                again = true;
            }
        }
    }
    return s;
}

static bool record_named(CXType t, const char *name) {
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return false;
    char *n = moxc__canonical_name(c);
    bool eq = n && strcmp(n, name) == 0;
    free(n);
    return eq;
}

bool moxc__is_f16(CXType t) {
    return record_named(t, "mox_f16");
}

/* The dialect's vector types (mox/vector_types.h) by their struct tags. */
static const struct {
    const char *name;
    mox_scalar lane;
    unsigned lanes;
} vector_types[] = {
    {"mox_float2", MOX_SCALAR_F32, 2}, {"mox_float3", MOX_SCALAR_F32, 3}, {"mox_float4", MOX_SCALAR_F32, 4},
    {"mox_int2", MOX_SCALAR_I32, 2},   {"mox_int3", MOX_SCALAR_I32, 3},   {"mox_int4", MOX_SCALAR_I32, 4},
    {"mox_uint2", MOX_SCALAR_U32, 2},  {"mox_uint3", MOX_SCALAR_U32, 3},  {"mox_uint4", MOX_SCALAR_U32, 4},
    {"mox_half2", MOX_SCALAR_F16, 2},
};

bool moxc__vector_of(CXType t, mox_scalar *lane, unsigned *lanes) {
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return false;
    char *n = moxc__canonical_name(c);
    for (size_t i = 0; n && i < sizeof vector_types / sizeof vector_types[0]; i++) {
        if (strcmp(n, vector_types[i].name) == 0) {
            if (lane)
                *lane = vector_types[i].lane;
            if (lanes)
                *lanes = vector_types[i].lanes;
            free(n);
            return true;
        }
    }
    free(n);
    return false;
}

bool moxc__is_atomic(CXType t, mox_scalar *element) {
    if (record_named(t, "mox_atomic_u32")) {
        if (element)
            *element = MOX_SCALAR_U32;
        return true;
    }
    if (record_named(t, "mox_atomic_i32")) {
        if (element)
            *element = MOX_SCALAR_I32;
        return true;
    }
    return false;
}

static CXType strip_pointers_arrays(CXType t) {
    t = clang_getCanonicalType(t);
    for (int guard = 0; guard < 64; guard++) {
        if (t.kind == CXType_Pointer)
            t = clang_getCanonicalType(clang_getPointeeType(t));
        else if (t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray ||
                 t.kind == CXType_VariableArray || t.kind == CXType_DependentSizedArray)
            t = clang_getCanonicalType(clang_getArrayElementType(t));
        else
            break;
    }
    return t;
}

bool moxc__involves_double(CXType t) {
    CXType c = strip_pointers_arrays(t);
    if (c.kind == CXType_Complex)
        c = clang_getCanonicalType(clang_getElementType(c));
    return c.kind == CXType_Double || c.kind == CXType_LongDouble || c.kind == CXType_Float128;
}

typedef struct field_features {
    uint32_t features;
    int depth;
} field_features;

static uint32_t type_features_depth(CXType t, bool fields, int depth);

static enum CXVisitorResult feature_field(CXCursor field, CXClientData data) {
    field_features *ff = data;
    ff->features |= type_features_depth(clang_getCursorType(field), true, ff->depth + 1);
    return CXVisit_Continue;
}

static uint32_t type_features_depth(CXType t, bool fields, int depth) {
    CXType c = strip_pointers_arrays(t);
    if (c.kind != CXType_Record || depth > 16)
        return 0;
    mox_scalar lane;
    if (moxc__is_f16(c) || (moxc__vector_of(c, &lane, NULL) && lane == MOX_SCALAR_F16))
        return MOX_KFEAT_F16;
    if (moxc__is_atomic(c, NULL))
        return MOX_KFEAT_ATOMICS;
    if (!fields)
        return 0;
    field_features ff = {0, depth};
    clang_Type_visitFields(c, feature_field, &ff);
    return ff.features;
}

uint32_t moxc__type_features(CXType t, bool fields) {
    return type_features_depth(t, fields, 0);
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

CXCursor moxc__strip_parens(CXCursor c) {
    for (int guard = 0; guard < 256 && clang_getCursorKind(c) == CXCursor_ParenExpr; guard++) {
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

bool moxc__is_const_object(CXType t) {
    CXType c = clang_getCanonicalType(t);
    /* a const array's qualifier may sit on the array or on its elements */
    for (int guard = 0; guard < 64; guard++) {
        if (clang_isConstQualifiedType(c))
            return true;
        if (c.kind != CXType_ConstantArray && c.kind != CXType_IncompleteArray &&
            c.kind != CXType_VariableArray)
            break;
        c = clang_getCanonicalType(clang_getArrayElementType(c));
    }
    return false;
}

/* The ABI's names must also be usable in the C bindings and the C++ CUDA
 * translation unit: the artifact validator's list, checked here so the error
 * can point at the declaration. */
bool moxc__is_reserved_name(const char *name) {
    return mox_abi_is_reserved_name(name);
}
