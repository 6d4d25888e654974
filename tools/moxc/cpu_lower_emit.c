/* cpu_lower_emit.c - writes the work-group function's body from the items:
 * the block's geometry, storage, block-level variables, flags and warp
 * staging arrays, then the block-level code with a loop over the threads
 * (or over the warps, holding loops over their lanes) for each run of
 * per-thread code. The names it uses are those of mox/kernel_cpu_wg.h. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

typedef struct em {
    lw *L;
    moxc_buf *b;
    int depth;
    size_t warp_loop; /* the warp loop being written (its label), or LW_NONE */
    bool returned;    /* a T-level return jumps to the current region's end */
} em;

static void indent(em *m) {
    for (int i = 0; i < m->depth + 1; i++)
        moxc_buf_put(m->b, "    ");
}

static void line(em *m, const char *text) {
    indent(m);
    moxc_buf_put(m->b, text);
    moxc_buf_put(m->b, "\n");
}

static void emit_seq(em *m, const size_t *at, size_t n, int ctx);

/* Copies text[start, end) with edits, its later lines moved from the
 * source's indentation (that of the line where it starts) to ours. */
static void put_reindented(em *m, unsigned start, unsigned end, const lw_edits *e) {
    lw *L = m->L;
    unsigned line = start;
    while (line > 0 && L->text[line - 1] != '\n')
        line--;
    unsigned source_indent = 0;
    while (line + source_indent < start && (L->text[line + source_indent] == ' ' || L->text[line + source_indent] == '\t'))
        source_indent++;
    moxc_buf tmp = {0};
    lw_put_range(L, &tmp, start, end, e);
    char *text = moxc_buf_finish(&tmp);
    if (!text) {
        L->oom = L->failed = true;
        return;
    }
    for (const char *p = text; *p; p++) {
        moxc_buf_write(m->b, p, 1);
        if (*p != '\n')
            continue;
        unsigned skip = 0;
        while (skip < source_indent && (p[1 + skip] == ' ' || p[1 + skip] == '\t'))
            skip++;
        p += skip;
        for (int i = 0; i < m->depth + 1; i++)
            moxc_buf_put(m->b, "    ");
    }
    free(text);
}

/* ---------------- per-thread code ---------------- */

static bool needs_rewrite(lw *L, size_t item) {
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].decl_item == item && (L->vars[i].cls == LV_STORAGE || L->vars[i].cls == LV_BLOCK))
            return true;
    return false;
}

/* A declaration whose variables became storage or block-level: one
 * statement per variable. */
static void emit_decl_rewrite(em *m, size_t item) {
    lw *L = m->L;
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (v->decl_item != item || v->cls == LV_BLOCK)
            continue;
        indent(m);
        bool list = !clang_Cursor_isNull(v->init) && clang_getCursorKind(v->init) == CXCursor_InitListExpr;
        if (v->cls == LV_STORAGE && clang_Cursor_isNull(v->init)) {
            moxc_buf_printf(m->b, "/* %s: per-thread storage mox__p%zu */\n", v->name, v->id);
            continue;
        }
        if (v->cls == LV_STORAGE && !list) {
            moxc_buf_printf(m->b, "mox__p%zu[mox__t] = ", v->id);
        } else {
            if (v->cls == LV_STORAGE)
                moxc_buf_put(m->b, "{ ");
            if (!lw_put_decl(L, m->b, clang_getCursorType(v->decl), v->cls == LV_STORAGE ? "mox__init" : v->name)) {
                lw_fail(L, v->decl, "the type of '%s' cannot be written outside its declaration", v->name);
                return;
            }
            if (!clang_Cursor_isNull(v->init))
                moxc_buf_put(m->b, " = ");
        }
        if (!clang_Cursor_isNull(v->init))
            lw_put_expr(L, m->b, v->init, item);
        if (v->cls == LV_STORAGE && list)
            moxc_buf_printf(m->b, "; memcpy(&mox__p%zu[mox__t], &mox__init, sizeof mox__init); }\n", v->id);
        else
            moxc_buf_put(m->b, ";\n");
    }
}

static void emit_code(em *m, size_t item) {
    lw *L = m->L;
    const lw_item *it = &L->items[item];
    if (it->phase == LW_PRE) {
        for (size_t c = it->call_first; c < it->call_first + it->call_count; c++)
            for (int a = 0; a < 2; a++) {
                if (clang_Cursor_isNull(L->calls[c].arg[a]))
                    continue;
                indent(m);
                moxc_buf_printf(m->b, "mox__w%c%zu[mox__l] = (", a ? 'b' : 'a', c);
                lw_put_expr(L, m->b, L->calls[c].arg[a], item);
                moxc_buf_put(m->b, ");\n");
            }
        return;
    }
    if (it->wrap == LW_WRAP_STMT && clang_getCursorKind(it->cur) == CXCursor_DeclStmt && needs_rewrite(L, item)) {
        emit_decl_rewrite(m, item);
        return;
    }
    unsigned start, end;
    if (!lw_stmt_range(L, it->cur, it->wrap == LW_WRAP_STMT, &start, &end)) {
        lw_fail(L, it->cur, "a statement written by a macro");
        return;
    }
    lw_edits e = {0};
    lw_collect_edits(L, it->cur, item, &e);
    for (size_t i = 0; i < e.n; i++)
        m->returned = m->returned || strncmp(e.at[i].text, "goto mox__tend", 14) == 0;
    indent(m);
    if (it->wrap == LW_WRAP_FLAG)
        moxc_buf_printf(m->b, "mox__c%zu = (", it->flag);
    put_reindented(m, start, end, &e);
    moxc_buf_put(m->b, it->wrap == LW_WRAP_FLAG ? ");\n" : it->wrap == LW_WRAP_EXPR ? ";\n" : "\n");
    lw_edits_free(&e);
}

/* ---------------- regions ---------------- */

static bool region_syncs_lane(lw *L, const size_t *at, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (L->items[at[k]].kind == LW_CODE && !L->items[at[k]].dead && lw_calls_thread_geometry(L, L->items[at[k]].cur))
            return true;
    return false;
}

/* Recomputed and redeclared variables the region uses but does not
 * declare, in declaration order (a recomputed one may use earlier ones). */
static void emit_prologue(em *m, size_t region) {
    lw *L = m->L;
    bool *need = calloc(L->var_count ? L->var_count : 1, sizeof *need);
    if (!need) {
        L->oom = L->failed = true;
        return;
    }
    for (size_t r = 0; r < L->ref_count; r++) {
        const lw_var *v = &L->vars[L->refs[r].var];
        const lw_item *it = &L->items[L->refs[r].item];
        if (it->region == region && !it->dead && (v->cls == LV_REMAT || v->multi) &&
            (v->decl_item == LW_NONE || L->items[v->decl_item].region != region))
            need[L->refs[r].var] = true;
    }
    /* what the needed recomputed ones read, transitively (earlier variables) */
    for (size_t i = L->var_count; i-- > 0;) {
        if (!need[i] || L->vars[i].cls != LV_REMAT)
            continue;
        for (size_t r = 0; r < L->ref_count; r++)
            if (L->refs[r].item == L->vars[i].decl_item && L->vars[L->refs[r].var].cls == LV_REMAT &&
                L->refs[r].var != i)
                need[L->refs[r].var] = true;
    }
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (!need[i])
            continue;
        indent(m);
        if (!lw_put_decl(L, m->b, clang_getCursorType(v->decl), v->name)) {
            lw_fail(L, v->decl, "the type of '%s' cannot be written outside its declaration", v->name);
            break;
        }
        if (v->cls == LV_REMAT) {
            moxc_buf_put(m->b, " = ");
            lw_put_expr(L, m->b, v->init, v->decl_item);
        }
        moxc_buf_put(m->b, ";\n");
    }
    free(need);
}

static void emit_region_body(em *m, const size_t *at, size_t n, const lw_guard *guard) {
    lw *L = m->L;
    size_t region = LW_NONE;
    for (size_t k = 0; k < n && region == LW_NONE; k++)
        region = L->items[at[k]].region;
    if (region_syncs_lane(L, at, n)) {
        line(m, "mox__lane->thread_idx.x = mox__x, mox__lane->thread_idx.y = mox__y, "
                "mox__lane->thread_idx.z = mox__z, mox__lane->linear = mox__t;");
        L->any_lane_sync = true;
    }
    emit_prologue(m, region);
    m->returned = false;
    if (guard) {
        /* the guard is the loop's condition: only its statement is left */
        unsigned start, end;
        if (!lw_stmt_range(L, guard->body, true, &start, &end)) {
            lw_fail(L, guard->body, "a statement written by a macro");
            return;
        }
        lw_edits e = {0};
        lw_collect_edits(L, guard->body, guard->item, &e);
        for (size_t i = 0; i < e.n; i++)
            m->returned = m->returned || strncmp(e.at[i].text, "goto mox__tend", 14) == 0;
        indent(m);
        put_reindented(m, start, end, &e);
        moxc_buf_put(m->b, "\n");
        lw_edits_free(&e);
    }
    for (size_t k = 0; k < n && !guard; k++) {
        const lw_item *it = &L->items[at[k]];
        if (it->kind == LW_CODE && !it->dead && it->region != LW_NONE)
            emit_code(m, at[k]);
    }
    if (m->returned) {
        indent(m);
        moxc_buf_printf(m->b, "mox__tend%zu:;\n", region);
    }
}

/* Block-level variables declared by the run's items, set before its loop. */
static void emit_hoists(em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    for (size_t k = 0; k < n; k++) {
        if (L->items[at[k]].kind != LW_CODE || L->items[at[k]].dead)
            continue;
        for (size_t i = 0; i < L->var_count; i++) {
            const lw_var *v = &L->vars[i];
            if (v->decl_item != at[k] || v->cls != LV_BLOCK || v->decl_loop != LW_NONE)
                continue;
            indent(m);
            moxc_buf_printf(m->b, "mox__b%zu = ", v->id);
            lw_put_expr(L, m->b, v->init, at[k]);
            moxc_buf_printf(m->b, "; /* %s */\n", v->name);
        }
    }
}

static bool has_region_code(lw *L, const size_t *at, size_t n) {
    for (size_t k = 0; k < n; k++)
        if (L->items[at[k]].kind == LW_CODE && !L->items[at[k]].dead && L->items[at[k]].region != LW_NONE)
            return true;
    return false;
}

static void emit_thread_loop(em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    emit_hoists(m, at, n);
    if (!has_region_code(L, at, n))
        return;
    bool line_1d = L->block[0] && L->block[1] == 1 && L->block[2] == 1;
    lw_guard guard;
    bool guarded = line_1d && lw_region_guard(L, at, n, &guard);
    if (line_1d && !guarded && L->block[0] % 32u == 0 && lw_region_reads_warp(L, at, n)) {
        line(m, "for (uint32_t mox__w = 0; mox__w < mox__nw; ++mox__w)");
        line(m, "for (uint32_t mox__l = 0; mox__l < MOX_WARP_SIZE; ++mox__l) {");
        m->depth++;
        line(m, "const uint32_t mox__x = mox__w * MOX_WARP_SIZE + mox__l, mox__y = 0, mox__z = 0, mox__t = mox__x;");
    } else if (line_1d) {
        indent(m);
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
        line(m, "const uint32_t mox__y = 0, mox__z = 0, mox__t = mox__x;");
    } else {
        line(m, "for (uint32_t mox__z = 0; mox__z < mox__bz; ++mox__z)");
        line(m, "for (uint32_t mox__y = 0; mox__y < mox__by; ++mox__y)");
        line(m, "for (uint32_t mox__x = 0; mox__x < mox__bx; ++mox__x) {");
        m->depth++;
        line(m, "const uint32_t mox__t = mox__x + mox__bx * (mox__y + mox__by * mox__z);");
    }
    emit_region_body(m, at, n, guarded ? &guard : NULL);
    m->depth--;
    line(m, "}");
}

static void emit_lane_loop(em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    emit_hoists(m, at, n);
    if (!has_region_code(L, at, n))
        return;
    line(m, "for (uint32_t mox__l = 0; mox__l < mox__nl; ++mox__l) {");
    m->depth++;
    line(m, "const uint32_t mox__t = mox__w * MOX_WARP_SIZE + mox__l;");
    if (L->block[0] && L->block[1] == 1 && L->block[2] == 1)
        line(m, "const uint32_t mox__x = mox__t, mox__y = 0, mox__z = 0;");
    else
        line(m, "const uint32_t mox__x = mox__t % mox__bx, mox__y = mox__t / mox__bx % mox__by, "
                "mox__z = mox__t / (mox__bx * mox__by);");
    emit_region_body(m, at, n, NULL);
    m->depth--;
    line(m, "}");
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

static void emit_warp_loop(em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    emit_hoists(m, at, n);
    size_t saved = m->warp_loop;
    m->warp_loop = L->label_count++;
    line(m, "for (uint32_t mox__w = 0; mox__w < mox__nw; ++mox__w) {");
    m->depth++;
    line(m, "const uint32_t mox__nl = mox__nt - mox__w * MOX_WARP_SIZE < MOX_WARP_SIZE ? "
            "mox__nt - mox__w * MOX_WARP_SIZE : MOX_WARP_SIZE;");
    line(m, "const uint32_t mox__t = mox__w * MOX_WARP_SIZE; /* the warp's first thread */");
    emit_seq(m, at, n, LW_W);
    if (has_warp_return(L, at, n)) {
        indent(m);
        moxc_buf_printf(m->b, "mox__wend%zu:;\n", m->warp_loop);
    }
    m->depth--;
    line(m, "}");
    m->warp_loop = saved;
}

/* ---------------- constructs ---------------- */

static void emit_header_init(em *m, size_t loop) {
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
            lw_put_expr(L, m->b, L->vars[i].init, loop);
            first = false;
        }
}

static void emit_loop(em *m, size_t i, int ctx) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    indent(m);
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
        indent(m);
        moxc_buf_printf(m->b, "mox__cont%zu:;\n", L->items[i].id);
        lw_seq tail = L->items[i].tail;
        emit_seq(m, tail.at, tail.n, ctx);
    }
    m->depth--;
    indent(m);
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

static void emit_if(em *m, size_t i, int ctx) {
    lw *L = m->L;
    indent(m);
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
        line(m, "} else {");
        m->depth++;
        emit_seq(m, other.at, other.n, ctx);
        m->depth--;
    }
    line(m, "}");
}

static void emit_jump(em *m, size_t i) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    indent(m);
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

static void emit_construct(em *m, size_t i, int ctx) {
    lw *L = m->L;
    const lw_item *it = &L->items[i];
    switch (it->kind) {
    case LW_BARRIER: {
        unsigned line_no = 0;
        moxc__expansion(moxc__cursor_loc(it->cur), NULL, &line_no, NULL, NULL);
        indent(m);
        moxc_buf_printf(m->b, "/* mox_barrier() of line %u */\n", line_no);
        break;
    }
    case LW_WARP: {
        const lw_call *c = &L->calls[it->call_first];
        indent(m);
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

static void emit_seq(em *m, const size_t *at, size_t n, int ctx) {
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

static void emit_declarations(em *m) {
    lw *L = m->L;
    for (size_t i = 0; i < L->static_count; i++) {
        unsigned start, end;
        if (!lw_stmt_range(L, L->statics[i], true, &start, &end)) {
            lw_fail(L, L->statics[i], "a shared or static declaration written by a macro that moxc cannot copy");
            return;
        }
        indent(m);
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
        indent(m);
        if (!name || !lw_put_decl(L, m->b, clang_getCursorType(v->decl), name))
            lw_fail(L, v->decl, "the type of '%s' cannot be written outside its declaration", v->name);
        moxc_buf_printf(m->b, "; /* %s */\n", v->name);
        free(name);
    }
    for (size_t i = 0; i < L->item_count; i++) {
        const lw_item *it = &L->items[i];
        if ((it->kind == LW_IF || it->kind == LW_LOOP) && !it->direct && it->flag != LW_NONE) {
            indent(m);
            moxc_buf_printf(m->b, "bool mox__c%zu;\n", it->flag);
        }
    }
    for (size_t i = 0; i < L->call_count; i++) {
        const lw_op *op = L->calls[i].op;
        indent(m);
        moxc_buf_printf(m->b, "%s mox__wa%zu[MOX_WARP_SIZE]; ", op->arg, i);
        if (op->arg2)
            moxc_buf_printf(m->b, "%s mox__wb%zu[MOX_WARP_SIZE]; ", op->arg2, i);
        moxc_buf_printf(m->b, "%s mox__wr%zu[MOX_WARP_SIZE];\n", op->result, i);
    }
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (v->param && v->cls == LV_STORAGE) {
            indent(m);
            moxc_buf_printf(m->b, "for (uint32_t mox__t = 0; mox__t < mox__nt; ++mox__t) mox__p%zu[mox__t] = %s;\n",
                            v->id, v->name);
        }
    }
}

char *lw_emit(lw *L) {
    moxc_buf b = {0}, body = {0};
    em m = {L, &body, 0, LW_NONE, false};
    emit_seq(&m, L->top.at, L->top.n, LW_B);
    em d = {L, &b, 0, LW_NONE, false};
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
