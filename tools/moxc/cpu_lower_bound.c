/* cpu_lower_bound.c - the most common kernel shape, a 1-D region
 *
 *     uint32_t i = B + x;    (B block-level, x the thread's x index)
 *     if (i < N) S           (N block-level, no else)
 *
 * (i recomputed, possibly declared in an earlier region). Run the usual
 * way, the thread loop tests i < N for each thread around S, and a
 * conditional store the host compiler cannot turn into a vector one (a
 * byte store: AVX2 has no masked byte store) keeps the whole loop scalar.
 * While B + x cannot wrap for the block's x, i < N holds exactly for x
 * below N - B (none when B > N), so that is the loop's bound and S runs
 * unguarded: the same threads run S as before, in the same order. When
 * B + x can wrap, the region's usual loop runs instead. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

static bool is_uint(CXCursor c) {
    return clang_getCanonicalType(clang_getCursorType(c)).kind == CXType_UInt;
}

/* i's initializer is B + x (either order): *base gets B. */
static bool base_plus_x(lw *L, CXCursor init, CXCursor *base) {
    init = lw_strip(init);
    if (clang_getCursorKind(init) != CXCursor_BinaryOperator)
        return false;
    char op[8];
    lw_operator(L, init, op, sizeof op);
    moxc__children ch;
    moxc__children_of(init, &ch);
    bool ok = ch.count == 2 && strcmp(op, "+") == 0;
    for (int x = 0; ok && x < 2; x++) {
        CXCursor other = ch.items[1 - x];
        if (lw_is_thread_x_value(L, ch.items[x]) && is_uint(other) && lw_expr_class(L, other, false) == LE_BLOCK) {
            *base = other;
            moxc__children_free(&ch);
            return true;
        }
    }
    moxc__children_free(&ch);
    return false;
}

static enum CXChildVisitResult find_return(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_ReturnStmt)
        return CXChildVisit_Recurse;
    *(bool *)data = true;
    return CXChildVisit_Break;
}

/* `if (i < N) S` with i recomputed as B + x, S without a return (its
 * jump label would be written twice): the parts into b. */
static bool bounded_if(lw *L, size_t item, lw_bound *b) {
    moxc__children ch;
    moxc__children_of(L->items[item].cur, &ch);
    bool ok = ch.count == 2;
    CXCursor cond = ok ? lw_strip(ch.items[0]) : clang_getNullCursor();
    if (ok)
        b->body = ch.items[1];
    moxc__children_free(&ch);
    bool returns = false;
    if (ok)
        clang_visitChildren(b->body, find_return, &returns);
    if (!ok || returns || clang_getCursorKind(cond) != CXCursor_BinaryOperator)
        return false;
    char op[8];
    lw_operator(L, cond, op, sizeof op);
    moxc__children_of(cond, &ch);
    ok = ch.count == 2 && strcmp(op, "<") == 0 && is_uint(ch.items[1]) &&
         lw_expr_class(L, ch.items[1], false) == LE_BLOCK;
    CXCursor i = ok ? lw_strip(ch.items[0]) : clang_getNullCursor();
    if (ok)
        b->limit = ch.items[1];
    moxc__children_free(&ch);
    if (!ok || clang_getCursorKind(i) != CXCursor_DeclRefExpr)
        return false;
    /* recomputed, or declared in this region (b->decls) and never set again */
    const lw_var *v = lw_var_of(L, clang_getCursorReferenced(i));
    bool here = false;
    for (size_t k = 0; v && k < b->decl_count; k++)
        here |= b->decls[k] == v->decl_item;
    if (!v || (v->cls != LV_REMAT && !(v->cls == LV_LOCAL && here)) || v->written || v->addr_taken ||
        !is_uint(v->decl) || clang_Cursor_isNull(v->init) || !base_plus_x(L, v->init, &b->base))
        return false;
    b->base_item = v->decl_item;
    b->item = item;
    return true;
}

bool lw_region_bound(lw *L, const size_t *at, size_t n, lw_bound *b) {
    if (!(L->block[0] && L->block[1] == 1 && L->block[2] == 1))
        return false;
    /* Recomputed declarations, then the if, each a statement of its own. */
    size_t items[LW_STRIDE_DECLS + 1];
    size_t count = lw_region_code(L, at, n, items, LW_STRIDE_DECLS + 1, true);
    if (count == 0 || count > LW_STRIDE_DECLS + 1)
        return false;
    size_t code = items[count - 1];
    if (clang_getCursorKind(L->items[code].cur) != CXCursor_IfStmt)
        return false;
    b->decl_count = 0;
    for (size_t k = 0; k + 1 < count; k++) {
        if (!lw_recomputed_decl(L, items[k]))
            return false;
        b->decls[b->decl_count++] = items[k];
    }
    return bounded_if(L, code, b);
}

void lw_emit_bound_open(lw_em *m, const size_t *at, size_t n, const lw_bound *b) {
    lw *L = m->L;
    lw_indent(m);
    moxc_buf_put(m->b, "if ((uint32_t)(");
    lw_put_expr(L, m->b, b->base, b->base_item);
    moxc_buf_put(m->b, ") <= 0xffffffffu - (mox__bx - 1u)) { /* i = B + x cannot wrap: i < N is x < N - B */\n");
    m->depth++;
    lw_indent(m);
    moxc_buf_put(m->b, "const uint32_t mox__base = (");
    lw_put_expr(L, m->b, b->base, b->base_item);
    moxc_buf_put(m->b, "), mox__limit = (");
    lw_put_expr(L, m->b, b->limit, b->item);
    moxc_buf_put(m->b, ");\n");
    lw_line(m, "const uint32_t mox__xend = mox__base <= mox__limit ? mox__limit - mox__base : 0u;");
    lw_line(m, "for (uint32_t mox__x = 0; mox__x < mox__bx && mox__x < mox__xend; ++mox__x) {");
    m->depth++;
    lw_line(m, "const uint32_t mox__y = 0, mox__z = 0, mox__t = mox__x;");
    lw_emit_region_entry(m, at, n);
    for (size_t k = 0; k < b->decl_count; k++)
        lw_emit_code(m, b->decls[k]);
    lw_emit_stmt(m, b->body, b->item, "", "");
    m->depth--;
    lw_line(m, "}");
    m->depth--;
    lw_line(m, "} else {");
}
