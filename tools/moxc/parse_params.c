/* parse_params.c - a kernel's signature: void result, a prototype, the
 * MOX_BLOCK shape, and each parameter's ABI kind (read/write/atomic buffer or
 * value) with its element layout. */
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

/* MOX_BLOCK's arguments arrive as macro-expanded text ("16", "2*16",
 * "(256u)"): a small integer constant expression evaluator over + - * / %
 * << >> and parentheses, in 64 bits with every overflow an error. */
typedef struct block_expr {
    const char *p, *end;
    bool ok;
} block_expr;

static uint64_t block_sum(block_expr *e, int depth);

static void block_space(block_expr *e) {
    while (e->p < e->end && (*e->p == ' ' || *e->p == '\t' || *e->p == '\n'))
        e->p++;
}

static uint64_t block_primary(block_expr *e, int depth) {
    block_space(e);
    if (e->p >= e->end || depth > 64) {
        e->ok = false;
        return 0;
    }
    if (*e->p == '(') {
        e->p++;
        uint64_t v = block_sum(e, depth + 1);
        block_space(e);
        if (e->p >= e->end || *e->p != ')')
            e->ok = false;
        else
            e->p++;
        return v;
    }
    if (*e->p == '+') {
        e->p++;
        return block_primary(e, depth + 1);
    }
    if (*e->p < '0' || *e->p > '9') {
        e->ok = false;
        return 0;
    }
    unsigned base = 10;
    if (*e->p == '0' && e->p + 1 < e->end && (e->p[1] == 'x' || e->p[1] == 'X')) {
        base = 16;
        e->p += 2;
    }
    uint64_t v = 0;
    bool digits = false;
    for (; e->p < e->end; e->p++) {
        char c = *e->p;
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        if (v > (UINT64_MAX - d) / base)
            e->ok = false;
        v = v * base + d;
        digits = true;
    }
    while (e->p < e->end && (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L'))
        e->p++;
    if (!digits || (e->p < e->end && ((*e->p >= 'a' && *e->p <= 'z') || (*e->p >= 'A' && *e->p <= 'Z') ||
                                      *e->p == '_' || *e->p == '.')))
        e->ok = false;
    return v;
}

static uint64_t block_product(block_expr *e, int depth) {
    uint64_t v = block_primary(e, depth);
    for (;;) {
        block_space(e);
        if (e->p >= e->end || !e->ok)
            return v;
        char op = *e->p;
        bool shift = e->p + 1 < e->end && e->p[0] == e->p[1] && (op == '<' || op == '>');
        if (op != '*' && op != '/' && op != '%' && !shift)
            return v;
        e->p += shift ? 2 : 1;
        uint64_t r = block_primary(e, depth);
        if (op == '*') {
            if (r && v > UINT64_MAX / r)
                e->ok = false;
            v *= r;
        } else if (op == '/' || op == '%') {
            if (r == 0) {
                e->ok = false;
                return 0;
            }
            v = op == '/' ? v / r : v % r;
        } else if (op == '<') {
            if (r >= 32 || v > (UINT64_MAX >> r))
                e->ok = false;
            else
                v <<= r;
        } else {
            v = r >= 64 ? 0 : v >> r;
        }
    }
}

static uint64_t block_sum(block_expr *e, int depth) {
    uint64_t v = block_product(e, depth);
    for (;;) {
        block_space(e);
        if (e->p >= e->end || !e->ok || (*e->p != '+' && *e->p != '-'))
            return v;
        char op = *e->p++;
        uint64_t r = block_product(e, depth);
        if (op == '+') {
            if (v > UINT64_MAX - r)
                e->ok = false;
            v += r;
        } else {
            if (r > v) /* negative */
                e->ok = false;
            v -= r;
        }
    }
}

/* Evaluates one comma-separated MOX_BLOCK argument. */
static bool parse_block_number(const char *s, size_t len, uint64_t *out) {
    block_expr e = {s, s + len, true};
    uint64_t v = block_sum(&e, 0);
    block_space(&e);
    if (!e.ok || e.p != e.end)
        return false;
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
        } else if (v[0] > 1024 || v[1] > 1024 || v[2] > 64 || v[0] * v[1] * v[2] > 1024) {
            /* CUDA's limits; the CPU backend keeps them so both run alike */
            moxc__error_at(f, loc,
                           "MOX_BLOCK of kernel '%s' has %llu x %llu x %llu threads; a block has at most "
                           "1024 threads, at most 1024 x 1024 x 64 in each dimension",
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
    if (!parse_block_number(count, strlen(count), &n) || n == 0 || n > UINT32_MAX) {
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
