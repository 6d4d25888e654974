/* cpu_lower_code.c - per-thread code of the work-group function: the
 * statements of a region with their rewrites and re-indented, declarations
 * whose variables moved, the prologue that declares a region's recomputed
 * and redeclared variables, and the block-level assignments set before a
 * region's loop. cpu_lower_emit.c writes the loops around them. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

void lw_indent(lw_em *m) {
    for (int i = 0; i < m->depth + 1; i++)
        moxc_buf_put(m->b, "    ");
}

void lw_line(lw_em *m, const char *text) {
    lw_indent(m);
    moxc_buf_put(m->b, text);
    moxc_buf_put(m->b, "\n");
}

/* Copies text[start, end) with edits, its later lines moved from the
 * source's indentation (that of the line where it starts) to ours. */
static void put_reindented(lw_em *m, unsigned start, unsigned end, const lw_edits *e) {
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
static void emit_decl_rewrite(lw_em *m, size_t item) {
    lw *L = m->L;
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (v->decl_item != item || v->cls == LV_BLOCK)
            continue;
        lw_indent(m);
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
            lw_put_init(L, m->b, v, item);
        if (v->cls == LV_STORAGE && list)
            moxc_buf_printf(m->b, "; memcpy(&mox__p%zu[mox__t], &mox__init, sizeof mox__init); }\n", v->id);
        else
            moxc_buf_put(m->b, ";\n");
    }
}

void lw_emit_code(lw_em *m, size_t item) {
    lw *L = m->L;
    const lw_item *it = &L->items[item];
    if (it->phase == LW_PRE) {
        for (size_t c = it->call_first; c < it->call_first + it->call_count; c++)
            for (int a = 0; a < 2; a++) {
                if (clang_Cursor_isNull(L->calls[c].arg[a]))
                    continue;
                lw_indent(m);
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
    lw_indent(m);
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

/* Recomputed and redeclared variables that items at[0..n) of region
 * `region` use but do not declare, in declaration order (a recomputed one
 * may use earlier ones); warp_only: just the recomputed ones that are the
 * same for a whole warp (for the code that runs once per warp). */
void lw_emit_prologue(lw_em *m, size_t region, const size_t *at, size_t n, bool warp_only) {
    lw *L = m->L;
    bool *need = calloc(L->var_count ? L->var_count : 1, sizeof *need);
    if (!need) {
        L->oom = L->failed = true;
        return;
    }
    for (size_t r = 0; r < L->ref_count; r++) {
        const lw_var *v = &L->vars[L->refs[r].var];
        const lw_item *it = &L->items[L->refs[r].item];
        bool listed = false;
        for (size_t k = 0; k < n && !listed; k++)
            listed = at[k] == L->refs[r].item;
        if (listed && it->region == region && !it->dead && (v->cls == LV_REMAT || (v->multi && !warp_only)) &&
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
        if (!need[i] || (warp_only && lw_expr_class(L, v->init, true) > LE_WARP))
            continue;
        lw_indent(m);
        if (!lw_put_decl(L, m->b, clang_getCursorType(v->decl), v->name)) {
            lw_fail(L, v->decl, "the type of '%s' cannot be written outside its declaration", v->name);
            break;
        }
        if (v->cls == LV_REMAT) {
            moxc_buf_put(m->b, " = ");
            lw_put_init(L, m->b, v, v->decl_item);
        }
        moxc_buf_put(m->b, ";\n");
    }
    free(need);
}

void lw_emit_stmt(lw_em *m, CXCursor stmt, size_t item, const char *before, const char *after) {
    lw *L = m->L;
    unsigned start, end;
    if (!lw_stmt_range(L, stmt, true, &start, &end)) {
        lw_fail(L, stmt, "a statement written by a macro");
        return;
    }
    lw_edits e = {0};
    lw_collect_edits(L, stmt, item, &e);
    for (size_t i = 0; i < e.n; i++)
        m->returned = m->returned || strncmp(e.at[i].text, "goto mox__tend", 14) == 0;
    lw_indent(m);
    moxc_buf_put(m->b, before);
    put_reindented(m, start, end, &e);
    moxc_buf_put(m->b, after);
    moxc_buf_put(m->b, "\n");
    lw_edits_free(&e);
}

size_t lw_emit_region_entry(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    size_t region = LW_NONE;
    for (size_t k = 0; k < n && region == LW_NONE; k++)
        region = L->items[at[k]].region;
    if (region_syncs_lane(L, at, n)) {
        lw_line(m, "mox__lane->thread_idx.x = mox__x, mox__lane->thread_idx.y = mox__y, "
                "mox__lane->thread_idx.z = mox__z, mox__lane->linear = mox__t;");
        L->any_lane_sync = true;
    }
    lw_emit_prologue(m, region, at, n, false);
    return region;
}

void lw_emit_region_body(lw_em *m, const size_t *at, size_t n, const lw_guard *guard, const size_t *skip,
                         size_t skips) {
    lw *L = m->L;
    size_t region = lw_emit_region_entry(m, at, n);
    m->returned = false;
    if (guard) /* the guard is the loop's condition: only its statement is left */
        lw_emit_stmt(m, guard->body, guard->item, "", "");
    for (size_t k = 0; k < n && !guard; k++) {
        const lw_item *it = &L->items[at[k]];
        bool skipped = false;
        for (size_t s = 0; s < skips && !skipped; s++)
            skipped = skip[s] == at[k];
        if (it->kind == LW_CODE && !it->dead && it->region != LW_NONE && !skipped)
            lw_emit_code(m, at[k]);
    }
    if (m->returned) {
        lw_indent(m);
        moxc_buf_printf(m->b, "mox__tend%zu:;\n", region);
    }
}

/* Block-level variables declared by the run's items, set before its loop. */
void lw_emit_hoists(lw_em *m, const size_t *at, size_t n) {
    lw *L = m->L;
    for (size_t k = 0; k < n; k++) {
        if (L->items[at[k]].kind != LW_CODE || L->items[at[k]].dead)
            continue;
        for (size_t i = 0; i < L->var_count; i++) {
            const lw_var *v = &L->vars[i];
            if (v->decl_item != at[k] || v->cls != LV_BLOCK || v->decl_loop != LW_NONE)
                continue;
            lw_indent(m);
            moxc_buf_printf(m->b, "mox__b%zu = ", v->id);
            lw_put_init(L, m->b, v, at[k]);
            moxc_buf_printf(m->b, "; /* %s */\n", v->name);
        }
    }
}

