/* parse_params.c - a kernel's signature: void result, a prototype, the
 * MOX_BLOCK shape (read by parse_block.c), and each parameter's ABI kind
 * (read/write/atomic buffer, value or table) with its element layout. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

static bool is_array_kind(enum CXTypeKind k) {
    return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray;
}

/* The pointee of a (possibly typedef'd) pointer type, keeping its spelling;
 * an array parameter (`const float x[]`) is a pointer to its element. */
static CXType pointee_of(CXType t) {
    CXType orig = t;
    for (int guard = 0; guard < 64; guard++) {
        t = moxc__strip_elaborated(t);
        if (t.kind == CXType_Pointer)
            return clang_getPointeeType(t);
        if (is_array_kind(t.kind))
            return clang_getArrayElementType(t);
        if (t.kind != CXType_Typedef)
            break;
        t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
    }
    CXType c = clang_getCanonicalType(orig);
    return is_array_kind(c.kind) ? clang_getArrayElementType(c) : clang_getPointeeType(c);
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

/* Layout of a value type or buffer element; NULL after an error. */
static mox_abi_layout *element_layout(moxc__tu *t, CXType spelled, mox_abi_kernel *k,
                                      const char *pname, CXType declared, CXSourceLocation loc,
                                      char **c_spelling) {
    moxc__front *f = t->front;
    CXType c = clang_getCanonicalType(spelled);
    mox_scalar lane;
    unsigned lanes;
    if (moxc__vector_of(c, &lane, &lanes)) {
        if (lane == MOX_SCALAR_F16)
            k->features |= MOX_KFEAT_F16;
        *c_spelling = moxc__canonical_name(c);
        return mox_abi_layout_vector(lane, lanes);
    }
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

/* MOX_TABLE(T, name, N): an array of N elements of T (a scalar, vector or
 * record) that the launch copies from the host; annotation "mox_table:N". */
static void parse_table(moxc__tu *t, CXCursor pc, mox_abi_kernel *k, mox_abi_param *p, moxc_param_info *info,
                        const char *annotation) {
    moxc__front *f = t->front;
    CXSourceLocation loc = moxc__cursor_loc(pc);
    const char *count = annotation + strlen("mox_table:");
    uint64_t n = 0;
    p->kind = MOX_PARAM_TABLE;
    p->access = MOX_PARAM_READ;
    if (!moxc__parse_constant(count, strlen(count), &n) || n == 0 || n > UINT32_MAX) {
        moxc__error_at(f, loc, "MOX_TABLE '%s' of kernel '%s' must have a positive integer constant count, got (%s)",
                       p->name, k->name, count);
        return;
    }
    CXType elem = pointee_of(clang_getCursorType(pc));
    if (moxc__is_atomic(clang_getCanonicalType(elem), NULL)) {
        moxc__error_at(f, loc, "MOX_TABLE '%s' of kernel '%s' holds atomics; a table is read-only", p->name, k->name);
        return;
    }
    mox_abi_layout *e = element_layout(t, elem, k, p->name, clang_getCursorType(pc), loc, &info->c_spelling);
    if (!e)
        return;
    p->layout = mox_abi_layout_array(e, n);
    if (!p->layout)
        moxc__error_at(f, loc, "MOX_TABLE '%s' of kernel '%s' is too large", p->name, k->name);
}

/* CUDA passes a kernel's parameters in the constant bank, at most 32764
 * bytes of them (CUDA 12.1+ on Volta and later), behind the entry's gate;
 * tables live there, so moxc checks the total for both backends. */
#define MOXC_CUDA_PARAM_BYTES 32764u

static void check_param_space(moxc__tu *t, CXCursor fn, const mox_abi_kernel *k) {
    uint64_t end = sizeof(mox_gate); /* the entry's first parameter (mox/kernel_abi.h) */
    const mox_abi_param *biggest = NULL;
    for (size_t i = 0; i < k->param_count; i++) {
        const mox_abi_param *p = &k->params[i];
        uint64_t size = p->kind == MOX_PARAM_BUFFER ? 8 : p->layout ? p->layout->size : 0;
        uint64_t align = p->kind == MOX_PARAM_BUFFER ? 8 : p->layout ? p->layout->align : 1;
        end = ((end + align - 1) & ~(align - 1)) + size;
        if (p->kind != MOX_PARAM_BUFFER && p->layout && (!biggest || p->layout->size > biggest->layout->size))
            biggest = p;
    }
    if (end <= MOXC_CUDA_PARAM_BYTES || !biggest)
        return;
    moxc__error_at(t->front, moxc__cursor_loc(fn),
                   "kernel '%s' has %llu bytes of parameters (the largest, %s '%s', %llu); CUDA passes at most %u "
                   "bytes of kernel parameters, where values and tables live",
                   k->name, (unsigned long long)end, biggest->kind == MOX_PARAM_TABLE ? "table" : "value",
                   biggest->name, (unsigned long long)biggest->layout->size, MOXC_CUDA_PARAM_BYTES);
}

static void parse_param(moxc__tu *t, CXCursor pc, mox_abi_kernel *k, mox_abi_param *p,
                        moxc_param_info *info) {
    moxc__front *f = t->front;
    CXSourceLocation loc = moxc__cursor_loc(pc);
    CXType type = clang_getCursorType(pc);
    CXType canon = clang_getCanonicalType(type);
    const char *pname = p->name;
    char *table = moxc__annotation(pc, "mox_table:");
    if (table) {
        parse_table(t, pc, k, p, info, table);
        free(table);
        return;
    }
    if (canon.kind != CXType_Pointer && !is_array_kind(canon.kind)) {
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

/* The ABI's one nesting limit, with the artifact layer's message, located
 * at the parameter (the layout is built; its depth is checked once). */
static void check_nesting(moxc__front *f, CXSourceLocation loc, const mox_abi_kernel *k,
                          const mox_abi_param *p) {
    char what[256];
    mox_artifact_error err = {0};
    snprintf(what, sizeof what, "kernel %s parameter %s%s", k->name, p->name,
             p->kind == MOX_PARAM_BUFFER ? " element" : "");
    if (p->layout && !mox_abi_layout_check_depth(p->layout, what, &err))
        moxc__error_at(f, loc, "%s", err.message);
}

bool moxc__parse_kernel(moxc__tu *t, CXCursor fn, mox_abi_kernel *k, moxc_kernel_info *info) {
    moxc__front *f = t->front;
    unsigned before = f->errors;
    CXSourceLocation loc = moxc__cursor_loc(fn);
    moxc__expansion(loc, NULL, &info->line, NULL, NULL);
    if (moxc__is_reserved_name(k->name))
        moxc__keyword_error_at(f, loc, "kernel name '%s' is a C++ keyword; the CUDA translation unit is C++",
                       k->name);
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
    moxc__parse_block(t, fn, k);
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
        if (moxc__is_reserved_name(p->name)) {
            moxc__keyword_error_at(f, moxc__cursor_loc(pc),
                           "parameter '%s' of kernel '%s' is a C++ keyword; the CUDA translation unit is C++, rename it",
                           p->name, k->name);
            continue;
        }
        parse_param(t, pc, k, p, &info->params[i]);
        check_nesting(f, moxc__cursor_loc(pc), k, p);
    }
    if (f->errors == before)
        check_param_space(t, fn, k);
    return f->errors == before;
}
