/* parse_block.c - MOX_BLOCK(x, y, z) of a kernel: its three arguments
 * arrive as macro-expanded text, evaluated here as integer constant
 * expressions and checked against CUDA's block limits. The same evaluator
 * reads MOX_TABLE's element count (parse_params.c). */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

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

/* Evaluates one comma-separated MOX_BLOCK argument (or MOX_TABLE's count). */
bool moxc__parse_constant(const char *s, size_t len, uint64_t *out) {
    block_expr e = {s, s + len, true};
    uint64_t v = block_sum(&e, 0);
    block_space(&e);
    if (!e.ok || e.p != e.end)
        return false;
    *out = v;
    return true;
}

void moxc__parse_block(moxc__tu *t, CXCursor fn, mox_abi_kernel *k) {
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
            else if (!moxc__parse_constant(p, (size_t)(end - p), &v[axis]))
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
