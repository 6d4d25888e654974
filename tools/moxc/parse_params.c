/* parse_params.c - a kernel's signature: void result, a prototype, the
 * MOX_BLOCK shape, and each parameter's ABI kind (read/write/atomic buffer or
 * value) with its element layout. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

/* The pointee of a (possibly typedef'd) pointer type, keeping its spelling. */
static CXType pointee_of(CXType t) {
    CXType orig = t;
    for (int guard = 0; guard < 64; guard++) {
        t = moxc__strip_elaborated(t);
        if (t.kind == CXType_Pointer)
            return clang_getPointeeType(t);
        if (t.kind != CXType_Typedef)
            break;
        t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
    }
    return clang_getPointeeType(clang_getCanonicalType(orig));
}

static const char *scalar_c_name(mox_scalar s) {
    switch (s) {
    case MOX_SCALAR_F32: return "float";
    case MOX_SCALAR_F16: return "mox_f16";
    case MOX_SCALAR_U32: return "uint32_t";
    case MOX_SCALAR_I32: return "int32_t";
    case MOX_SCALAR_U16: return "uint16_t";
    case MOX_SCALAR_I16: return "int16_t";
    case MOX_SCALAR_U8: return "uint8_t";
    case MOX_SCALAR_I8: return "int8_t";
    default: return "?";
    }
}

/* Parses one "X,Y,Z" number: decimal digits, optionally u/U. */
static bool parse_block_number(const char *s, size_t len, uint64_t *out) {
    while (len && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len && (s[len - 1] == 'u' || s[len - 1] == 'U'))
        len--;
    if (len == 0 || len > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static void parse_block(moxc__tu *t, CXCursor fn, mox_abi_kernel *k) {
    moxc__front *f = t->front;
    moxc__children ch;
    moxc__children_of(fn, &ch);
    for (size_t i = 0; i < ch.count; i++) {
        if (clang_getCursorKind(ch.items[i]) != CXCursor_AnnotateAttr)
            continue;
        char *text = moxc__cxstr(clang_getCursorSpelling(ch.items[i]));
        if (!text || !moxc__starts_with(text, "mox_block:")) {
            free(text);
            continue;
        }
        CXSourceLocation loc = moxc__cursor_loc(ch.items[i]);
        const char *list = text + strlen("mox_block:");
        if (k->has_required_block) {
            moxc__error_at(f, loc, "kernel '%s' has more than one MOX_BLOCK", k->name);
            free(text);
            continue;
        }
        uint64_t v[3] = {0, 0, 0};
        const char *p = list;
        bool ok = true;
        for (int axis = 0; axis < 3 && ok; axis++) {
            const char *end = strchr(p, ',');
            if (axis == 2)
                end = end ? end : p + strlen(p);
            if (!end || (axis == 2 && *end != '\0'))
                ok = false;
            else if (!parse_block_number(p, (size_t)(end - p), &v[axis]))
                ok = false;
            else
                p = end + 1;
        }
        if (!ok) {
            moxc__error_at(f, loc,
                           "MOX_BLOCK of kernel '%s' must be three integer constants, got (%s)",
                           k->name, list);
        } else if (v[0] == 0 || v[1] == 0 || v[2] == 0) {
            moxc__error_at(f, loc, "MOX_BLOCK of kernel '%s' has a zero dimension (%s)", k->name,
                           list);
        } else if (v[0] > UINT32_MAX || v[1] > UINT32_MAX || v[2] > UINT32_MAX ||
                   v[0] * v[1] > UINT32_MAX || v[0] * v[1] * v[2] > UINT32_MAX) {
            moxc__error_at(f, loc,
                           "MOX_BLOCK of kernel '%s' has %llu x %llu x %llu threads, which overflows 32 bits",
                           k->name, (unsigned long long)v[0], (unsigned long long)v[1],
                           (unsigned long long)v[2]);
        } else {
            k->has_required_block = true;
            for (int axis = 0; axis < 3; axis++)
                k->required_block[axis] = (uint32_t)v[axis];
        }
        free(text);
    }
    moxc__children_free(&ch);
}

/* Layout of a value type or buffer element; NULL after an error. */
static mox_abi_layout *element_layout(moxc__tu *t, CXType spelled, mox_abi_kernel *k,
                                      const char *pname, CXType declared, CXSourceLocation loc,
                                      char **c_spelling) {
    moxc__front *f = t->front;
    CXType c = clang_getCanonicalType(spelled);
    if (c.kind == CXType_Record && !moxc__is_f16(c)) {
        CXCursor decl = clang_getTypeDeclaration(c);
        if (clang_getCursorKind(decl) == CXCursor_UnionDecl) {
            char *ts = moxc__cxstr(clang_getTypeSpelling(declared));
            moxc__error_at(f, loc,
                           "unsupported parameter type '%s' for parameter '%s': unions are not supported",
                           ts ? ts : "?", pname);
            free(ts);
            return NULL;
        }
        mox_abi_layout *layout = moxc__record_layout(t, spelled, k->name, loc);
        if (layout) {
            for (size_t i = 0; i < f->record_count; i++)
                if (strcmp(f->records[i].pub.name, layout->record_name) == 0)
                    *c_spelling = moxc__strdup(f->records[i].pub.c_spelling);
            k->features |= moxc__type_features(c, true);
        }
        return layout;
    }
    mox_scalar s;
    char *why = NULL;
    if (!moxc__scalar_of(c, &s, &why)) {
        char *ts = moxc__cxstr(clang_getTypeSpelling(declared));
        moxc__error_at(f, loc, "unsupported parameter type '%s' for parameter '%s'%s%s",
                       ts ? ts : "?", pname, why ? ": " : "", why ? why : "");
        free(ts);
        free(why);
        return NULL;
    }
    if (s == MOX_SCALAR_F16)
        k->features |= MOX_KFEAT_F16;
    *c_spelling = moxc__strdup(scalar_c_name(s));
    return mox_abi_layout_scalar(s);
}

static void parse_param(moxc__tu *t, CXCursor pc, mox_abi_kernel *k, mox_abi_param *p,
                        moxc_param_info *info) {
    moxc__front *f = t->front;
    CXSourceLocation loc = moxc__cursor_loc(pc);
    CXType type = clang_getCursorType(pc);
    CXType canon = clang_getCanonicalType(type);
    const char *pname = p->name;
    if (canon.kind != CXType_Pointer) {
        p->kind = MOX_PARAM_VALUE;
        p->access = MOX_PARAM_READ;
        if (moxc__is_atomic(canon, NULL)) {
            char *ts = moxc__cxstr(clang_getTypeSpelling(type));
            moxc__error_at(f, loc,
                           "unsupported parameter type '%s' for parameter '%s': atomics are only supported as buffers (a pointer)",
                           ts ? ts : "?", pname);
            free(ts);
            return;
        }
        p->layout = element_layout(t, type, k, pname, type, loc, &info->c_spelling);
        return;
    }
    p->kind = MOX_PARAM_BUFFER;
    CXType pointee = pointee_of(type);
    CXType pc_canon = clang_getCanonicalType(pointee);
    mox_scalar atomic_elem;
    if (clang_isVolatileQualifiedType(pc_canon)) {
        char *ts = moxc__cxstr(clang_getTypeSpelling(type));
        moxc__error_at(f, loc,
                       "unsupported parameter type '%s' for parameter '%s': volatile buffers are not supported",
                       ts ? ts : "?", pname);
        free(ts);
        return;
    }
    if (moxc__is_atomic(pc_canon, &atomic_elem)) {
        if (clang_isConstQualifiedType(pc_canon)) {
            char *ts = moxc__cxstr(clang_getTypeSpelling(type));
            moxc__error_at(f, loc,
                           "atomic buffer parameter '%s' must not be const ('%s'): atomic operations write",
                           pname, ts ? ts : "?");
            free(ts);
            return;
        }
        p->access = MOX_PARAM_ATOMIC;
        p->layout = mox_abi_layout_scalar(atomic_elem);
        info->c_spelling =
            moxc__strdup(atomic_elem == MOX_SCALAR_U32 ? "mox_atomic_u32" : "mox_atomic_i32");
        k->features |= MOX_KFEAT_ATOMICS;
        return;
    }
    p->access = clang_isConstQualifiedType(pc_canon) ? MOX_PARAM_READ : MOX_PARAM_WRITE;
    p->layout = element_layout(t, pointee, k, pname, type, loc, &info->c_spelling);
}

bool moxc__parse_kernel(moxc__tu *t, CXCursor fn, mox_abi_kernel *k, moxc_kernel_info *info) {
    moxc__front *f = t->front;
    unsigned before = f->errors;
    CXSourceLocation loc = moxc__cursor_loc(fn);
    moxc__expansion(loc, NULL, &info->line, NULL, NULL);
    CXType ft = clang_getCursorType(fn);
    CXType fc = clang_getCanonicalType(ft);
    CXType result = clang_getCanonicalType(clang_getResultType(fc));
    if (result.kind != CXType_Void) {
        char *rs = moxc__cxstr(clang_getTypeSpelling(clang_getResultType(ft)));
        moxc__error_at(f, loc, "kernel '%s' must return void, not '%s'", k->name, rs ? rs : "?");
        free(rs);
    }
    if (fc.kind == CXType_FunctionNoProto) {
        moxc__error_at(f, loc,
                       "kernel '%s' has no prototype; declare its parameters (write '%s(void)' for none)",
                       k->name, k->name);
        return false;
    }
    if (clang_isFunctionTypeVariadic(fc)) {
        moxc__error_at(f, loc, "kernel '%s' is variadic; kernels take a fixed parameter list",
                       k->name);
        return false;
    }
    parse_block(t, fn, k);
    int n = clang_Cursor_getNumArguments(fn);
    if (n < 0)
        n = 0;
    if (n > MOX_ABI_MAX_PARAMS) {
        moxc__error_at(f, loc, "kernel '%s' has %d parameters; at most %d are supported", k->name,
                       n, MOX_ABI_MAX_PARAMS);
        return false;
    }
    if (n > 0) {
        k->params = calloc((size_t)n, sizeof *k->params);
        info->params = calloc((size_t)n, sizeof *info->params);
        if (!k->params || !info->params) {
            moxc__error_at(f, loc, "out of memory");
            return false;
        }
        k->param_count = (size_t)n;
    }
    for (int i = 0; i < n; i++) {
        CXCursor pc = clang_Cursor_getArgument(fn, (unsigned)i);
        mox_abi_param *p = &k->params[i];
        p->binding = (uint32_t)i;
        p->name = moxc__cxstr(clang_getCursorSpelling(pc));
        if (!p->name || !p->name[0]) {
            moxc__error_at(f, moxc__cursor_loc(pc), "parameter %d of kernel '%s' has no name",
                           i + 1, k->name);
            continue;
        }
        parse_param(t, pc, k, p, &info->params[i]);
    }
    return f->errors == before;
}
