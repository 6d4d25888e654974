/* cpu_lower_emit.c - writes the work-group function's body from the items:
 * the block's geometry, storage, block-level variables, flags and warp
 * staging arrays, then the block-level code with a loop over the threads
 * (or over the warps, holding loops over their lanes) for each run of
 * per-thread code. The names it uses are those of mox/kernel_cpu_wg.h. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

static void emit_seq(lw_em *m, const size_t *at, size_t n, int ctx);
static void emit_thread_loop_as_is(lw_em *m, const size_t *at, size_t n);

static bool has_region_code(lw *L, const size_t *at, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (L->items[at[k]].kind == LW_CODE && !L->items[at[k]].dead && L->items[at[k]].region != LW_NONE)
            return true;
    return false;
}

/* A 1-D region that reads warp indices: warps, then their lanes; the
 * leading code that is the same for every lane of a warp runs once per
 * warp, before the lane loop. */
static void emit_warp_major(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    size_t *prefix = malloc((n ? n : 1) * sizeof *prefix);
    if (!prefix) {
        L->oom = L->failed = true;
        return;
    }
    size_t once = lw_warp_prefix(L, at, n, prefix);
    lw_line(m, "for (uint32_t mox__w = 0; mox__w < mox__nw; ++mox__w) {");
    m->depth++;
    if (once) {
        size_t region = L->items[prefix[0]].region;
        lw_line(m, "const uint32_t mox__t = mox__w * MOX_WARP_SIZE; /* the warp's first thread */");
        lw_line(m, "/* the same for every lane of the warp: once */");
        lw_emit_prologue(m, region, prefix, once, true);
        for (size_t k = 0; k < once; k++)
            lw_emit_code(m, prefix[k]);
    }
    lw_line(m, "for (uint32_t mox__l = 0; mox__l < MOX_WARP_SIZE; ++mox__l) {");
    m->depth++;
    lw_line(m, "const uint32_t mox__x = mox__w * MOX_WARP_SIZE + mox__l, mox__y = 0, mox__z = 0, mox__t = mox__x;");
    lw_emit_region_body(m, at, n, NULL, prefix, once);
    m->depth--;
    lw_line(m, "}");
    m->depth--;
    lw_line(m, "}");
    free(prefix);
}

static void emit_thread_loop(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    lw_emit_hoists(m, at, n);
    if (!has_region_code(L, at, n))
        return;
    lw_stride stride;
    if (lw_region_stride(L, at, n, &stride)) {
        lw_emit_stride(m, at, n, &stride);
        return;
    }
    lw_bound bound;
    if (lw_region_bound(L, at, n, &bound)) {
        lw_emit_bound_open(m, at, n, &bound);
        m->depth++;
        emit_thread_loop_as_is(m, at, n);
        m->depth--;
        lw_line(m, "}");
        return;
    }
    emit_thread_loop_as_is(m, at, n);
}

/* The region's loop without the grid-stride or bound shapes. */
static void emit_thread_loop_as_is(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    bool line_1d = L->block[0] && L->block[1] == 1 && L->block[2] == 1;
    lw_guard guard;
    bool guarded = line_1d && lw_region_guard(L, at, n, &guard);
    if (line_1d && !guarded && L->block[0] % 32u == 0 && lw_region_reads_warp(L, at, n)) {
        emit_warp_major(m, at, n);
        return;
    } else if (line_1d) {
        lw_indent(m);
        moxc_buf_put(m->b, "for (uint32_t mox__x = 0; mox__x < mox__bx");
        if (guarded) {
            moxc_buf_printf(m->b, " && mox__x %s ", strcmp(guard.op, "==") == 0 ? "<" : guard.op);
            if (strcmp(guard.op, "==") == 0)
                moxc_buf_put(m->b, "1u");
            else {
                moxc_buf_put(m->b, "(");
                lw_put_expr(L, m->b, guard.bound, guard.item);
                moxc_buf_put(m->b, ")");
            }
        }
        moxc_buf_put(m->b, "; ++mox__x) {\n");
        m->depth++;
        lw_line(m, "const uint32_t mox__y = 0, mox__z = 0, mox__t = mox__x;");
    } else {
        lw_line(m, "for (uint32_t mox__z = 0; mox__z < mox__bz; ++mox__z)");
        lw_line(m, "for (uint32_t mox__y = 0; mox__y < mox__by; ++mox__y)");
        lw_line(m, "for (uint32_t mox__x = 0; mox__x < mox__bx; ++mox__x) {");
        m->depth++;
        lw_line(m, "const uint32_t mox__t = mox__x + mox__bx * (mox__y + mox__by * mox__z);");
    }
    lw_emit_region_body(m, at, n, guarded ? &guard : NULL, NULL, 0);
    m->depth--;
    lw_line(m, "}");
}

static void emit_lane_loop(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    lw_emit_hoists(m, at, n);
    if (!has_region_code(L, at, n))
        return;
    lw_line(m, "for (uint32_t mox__l = 0; mox__l < mox__nl; ++mox__l) {");
    m->depth++;
    lw_line(m, "const uint32_t mox__t = mox__w * MOX_WARP_SIZE + mox__l;");
    if (L->block[0] && L->block[1] == 1 && L->block[2] == 1)
        lw_line(m, "const uint32_t mox__x = mox__t, mox__y = 0, mox__z = 0;");
    else
        lw_line(m, "const uint32_t mox__x = mox__t % mox__bx, mox__y = mox__t / mox__bx % mox__by, "
                "mox__z = mox__t / (mox__bx * mox__by);");
    lw_emit_region_body(m, at, n, NULL, NULL, 0);
    m->depth--;
    lw_line(m, "}");
}

static bool has_warp_return(lw *L, const size_t *at, size_t n) {
    for (size_t k = 0; k < n; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind == LW_JUMP && it->jump == CXCursor_ReturnStmt && it->level == LW_W)
            return true;
        if ((it->kind == LW_IF || it->kind == LW_LOOP) &&
            (has_warp_return(L, it->body.at, it->body.n) || has_warp_return(L, it->other.at, it->other.n)))
            return true;
    }
    return false;
}

static void emit_warp_loop(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    lw_emit_hoists(m, at, n);
    size_t saved = m->warp_loop;
    m->warp_loop = L->label_count++;
    lw_line(m, "for (uint32_t mox__w = 0; mox__w < mox__nw; ++mox__w) {");
    m->depth++;
    lw_line(m, "const uint32_t mox__nl = mox__nt - mox__w * MOX_WARP_SIZE < MOX_WARP_SIZE ? "
            "mox__nt - mox__w * MOX_WARP_SIZE : MOX_WARP_SIZE;");
    lw_line(m, "const uint32_t mox__t = mox__w * MOX_WARP_SIZE; /* the warp's first thread */");
    emit_seq(m, at, n, LW_W);
    if (has_warp_return(L, at, n)) {
        lw_indent(m);
        moxc_buf_printf(m->b, "mox__wend%zu:;\n", m->warp_loop);
    }
    m->depth--;
    lw_line(m, "}");
    m->warp_loop = saved;
}

/* ---------------- constructs ---------------- */

static void emit_header_init(lw_em *m, size_t loop) {
    lw *L = m->L;
    CXCursor init = L->items[loop].init;
    if (clang_getCursorKind(init) != CXCursor_DeclStmt) {
        lw_put_expr(L, m->b, init, loop);
        return;
    }
    bool first = true;
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].decl_loop == loop && L->vars[i].cls == LV_BLOCK) {
            moxc_buf_printf(m->b, "%smox__b%zu = ", first ? "" : ", ", L->vars[i].id);
            lw_put_init(L, m->b, &L->vars[i], loop);
            first = false;
        }
}

static void emit_loop(lw_em *m, size_t i, int ctx) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    lw_indent(m);
    bool has_cond = !clang_Cursor_isNull(it->cond);
    if (it->loop == CXCursor_DoStmt) {
        moxc_buf_put(m->b, "do {\n");
    } else if (it->direct && it->loop == CXCursor_ForStmt) {
        moxc_buf_put(m->b, "for (");
        if (!clang_Cursor_isNull(it->init))
            emit_header_init(m, i);
        moxc_buf_put(m->b, "; ");
        if (has_cond)
            lw_put_expr(L, m->b, it->cond, i);
        moxc_buf_put(m->b, "; ");
        if (!clang_Cursor_isNull(it->inc))
            lw_put_expr(L, m->b, it->inc, i);
        moxc_buf_put(m->b, ") {\n");
    } else if (it->direct) {
        moxc_buf_put(m->b, "while (");
        lw_put_expr(L, m->b, it->cond, i);
        moxc_buf_put(m->b, ") {\n");
    } else if (has_cond) {
        moxc_buf_printf(m->b, "while (mox__c%zu) {\n", it->flag);
    } else {
        moxc_buf_put(m->b, "for (;;) {\n");
    }
    m->depth++;
    lw_seq tmp;
    const lw_seq *iter = lw_iteration(L, i, &tmp);
    lw_seq body = *iter;
    emit_seq(m, body.at, body.n, ctx);
    free(tmp.at);
    if (!L->items[i].direct && L->items[i].continued) {
        lw_indent(m);
        moxc_buf_printf(m->b, "mox__cont%zu:;\n", L->items[i].id);
        lw_seq tail = L->items[i].tail;
        emit_seq(m, tail.at, tail.n, ctx);
    }
    m->depth--;
    lw_indent(m);
    it = &L->items[i];
    if (it->loop != CXCursor_DoStmt) {
        moxc_buf_put(m->b, "}\n");
    } else if (it->direct) {
        moxc_buf_put(m->b, "} while (");
        lw_put_expr(L, m->b, it->cond, i);
        moxc_buf_put(m->b, ");\n");
    } else {
        moxc_buf_printf(m->b, "} while (mox__c%zu);\n", it->flag);
    }
}

static void emit_if(lw_em *m, size_t i, int ctx) {
    lw *L = m->L;
    lw_indent(m);
    if (L->items[i].direct) {
        moxc_buf_put(m->b, "if (");
        lw_put_expr(L, m->b, L->items[i].cond, i);
        moxc_buf_put(m->b, ") {\n");
    } else {
        moxc_buf_printf(m->b, "if (mox__c%zu) {\n", L->items[i].flag);
    }
    m->depth++;
    lw_seq body = L->items[i].body, other = L->items[i].other;
    emit_seq(m, body.at, body.n, ctx);
    m->depth--;
    if (other.n) {
        lw_line(m, "} else {");
        m->depth++;
        emit_seq(m, other.at, other.n, ctx);
        m->depth--;
    }
    lw_line(m, "}");
}

static void emit_jump(lw_em *m, size_t i) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    lw_indent(m);
    if (it->jump == CXCursor_ReturnStmt && it->level == LW_B)
        moxc_buf_put(m->b, "return;\n");
    else if (it->jump == CXCursor_ReturnStmt)
        moxc_buf_printf(m->b, "goto mox__wend%zu;\n", m->warp_loop);
    else if (it->jump == CXCursor_BreakStmt)
        moxc_buf_put(m->b, "break;\n");
    else if (L->items[it->target].direct)
        moxc_buf_put(m->b, "continue;\n");
    else
        moxc_buf_printf(m->b, "goto mox__cont%zu;\n", L->items[it->target].id);
}

static void emit_construct(lw_em *m, size_t i, int ctx) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    switch (it->kind) {
    case LW_BARRIER: {
        unsigned line_no = 0;
        moxc__expansion(moxc__cursor_loc(it->cur), NULL, &line_no, NULL, NULL);
        lw_indent(m);
        moxc_buf_printf(m->b, "/* mox_barrier() of line %u */\n", line_no);
        break;
    }
    case LW_WARP: {
        const lw_call *c = &L->calls[it->call_first];
        lw_indent(m);
        moxc_buf_printf(m->b, "mox__wstep_%s(mox__wr%zu, mox__wa%zu, ", c->op->name + strlen("mox_warp_"),
                        it->call_first, it->call_first);
        if (c->op->arg2)
            moxc_buf_printf(m->b, "mox__wb%zu, ", it->call_first);
        moxc_buf_put(m->b, "mox__nl);\n");
        break;
    }
    case LW_IF:
        emit_if(m, i, ctx);
        break;
    case LW_LOOP:
        emit_loop(m, i, ctx);
        break;
    case LW_JUMP:
        emit_jump(m, i);
        break;
    case LW_CODE:
        break;
    }
}

static void emit_seq(lw_em *m, const size_t *at, size_t n, int ctx) {
    lw *L = m->L;
    size_t i = 0;
    while (i < n && !L->failed) {
        const lw_item *it = &L->items[at[i]];
        if (it->dead) {
            i++;
            continue;
        }
        if (it->level == ctx) {
            emit_construct(m, at[i], ctx);
            i++;
            continue;
        }
        size_t j = i;
        bool warp = false;
        while (j < n && (L->items[at[j]].dead || L->items[at[j]].level != ctx)) {
            warp = warp || (!L->items[at[j]].dead && L->items[at[j]].level == LW_W);
            j++;
        }
        if (ctx == LW_B && warp)
            emit_warp_loop(m, at + i, j - i);
        else if (ctx == LW_B)
            emit_thread_loop(m, at + i, j - i);
        else
            emit_lane_loop(m, at + i, j - i);
        i = j;
    }
}

/* ---------------- the function ---------------- */

static void emit_declarations(lw_em *m) {
    lw *L = m->L;
    for (size_t i = 0; i < L->static_count; i++) {
        unsigned start, end;
        if (!lw_stmt_range(L, L->statics[i], true, &start, &end)) {
            lw_fail(L, L->statics[i], "a shared or static declaration written by a macro that moxc cannot copy");
            return;
        }
        lw_indent(m);
        lw_edits none = {0};
        lw_put_range(L, m->b, start, end, &none);
        moxc_buf_put(m->b, "\n");
    }
    for (size_t i = 0; i < L->var_count && !L->failed; i++) {
        const lw_var *v = &L->vars[i];
        if (v->cls != LV_STORAGE && v->cls != LV_BLOCK)
            continue;
        char *name = v->cls == LV_STORAGE ? moxc__printf("mox__p%zu[%u]", v->id, L->threads)
                                          : moxc__printf("mox__b%zu", v->id);
        lw_indent(m);
        if (!name || !lw_put_decl(L, m->b, clang_getCursorType(v->decl), name))
            lw_fail(L, v->decl, "the type of '%s' cannot be written outside its declaration", v->name);
        moxc_buf_printf(m->b, "; /* %s */\n", v->name);
        free(name);
    }
    for (size_t i = 0; i < L->item_count; i++) {
        const lw_item *it = &L->items[i];
        if ((it->kind == LW_IF || it->kind == LW_LOOP) && !it->direct && it->flag != LW_NONE) {
            lw_indent(m);
            moxc_buf_printf(m->b, "bool mox__c%zu;\n", it->flag);
        }
    }
    for (size_t i = 0; i < L->call_count; i++) {
        const lw_op *op = L->calls[i].op;
        lw_indent(m);
        moxc_buf_printf(m->b, "%s mox__wa%zu[MOX_WARP_SIZE]; ", op->arg, i);
        if (op->arg2)
            moxc_buf_printf(m->b, "%s mox__wb%zu[MOX_WARP_SIZE]; ", op->arg2, i);
        moxc_buf_printf(m->b, "%s mox__wr%zu[MOX_WARP_SIZE];\n", op->result, i);
    }
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (v->param && v->cls == LV_STORAGE) {
            lw_indent(m);
            moxc_buf_printf(m->b, "for (uint32_t mox__t = 0; mox__t < mox__nt; ++mox__t) mox__p%zu[mox__t] = %s;\n",
                            v->id, v->name);
        }
    }
}

char *lw_emit(lw *L) {
    moxc_buf b = {0}, body = {0};
    lw_em m = {L, &body, 0, LW_NONE, false};
    emit_seq(&m, L->top.at, L->top.n, LW_B);
    lw_em d = {L, &b, 0, LW_NONE, false};
    if (L->block[0])
        moxc_buf_printf(&b, "    const uint32_t mox__bx = %uu, mox__by = %uu, mox__bz = %uu;\n", L->block[0],
                        L->block[1], L->block[2]);
    else
        moxc_buf_put(&b, "    const uint32_t mox__bx = mox__g->block_dim.x, mox__by = mox__g->block_dim.y, "
                         "mox__bz = mox__g->block_dim.z;\n");
    moxc_buf_put(&b, "    const uint32_t mox__nt = mox__bx * mox__by * mox__bz, "
                     "mox__nw = (mox__nt + MOX_WARP_SIZE - 1u) / MOX_WARP_SIZE;\n"
                     "    const mox_kdim3 mox__bi = mox__g->block_idx, mox__gd = mox__g->grid_dim;\n");
    if (L->any_lane_sync)
        moxc_buf_put(&b, "    mox_cpu_lane *const mox__lane = mox__g->lane;\n");
    emit_declarations(&d);
    char *text = moxc_buf_finish(&body);
    if (text)
        moxc_buf_put(&b, text);
    free(text);
    if (L->failed) {
        free(moxc_buf_finish(&b));
        return NULL;
    }
    return moxc_buf_finish(&b);
}
