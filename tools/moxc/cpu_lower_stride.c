/* cpu_lower_stride.c - a region that is one grid-stride loop,
 *
 *     for (T i = E; i < N; i += S) B
 *     T i = E; while (i < N) { B i += S; }    (i used nowhere else)
 *
 * with T a 32-bit integer, N and S block-level, and B neither writing i
 * (nor taking its address) nor leaving the loop (break, return; in the
 * while form continue, which skips the increment, too); declarations of
 * recomputed variables (functions of the thread index) may precede it,
 * and are written again in each round. Run the
 * usual way, each thread walks its whole loop before the next thread
 * starts, so the block's threads step through memory a stride apart and
 * the host compiler cannot vectorize across them (a saxpy ran 15 - 57x
 * slower than plain C). Here they walk it side by side, a round at a
 * time: round r runs every thread's r-th iteration, in thread order, and
 * per-thread arrays keep each thread's i and whether it goes on. Every
 * thread runs the same iterations as before, evaluating E, N, S and B as
 * the loop does; only the interleaving of the threads' iterations
 * differs, which a region without barriers leaves open on CUDA too. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

static bool is_ref_to(CXCursor e, CXCursor var) {
    e = lw_strip(e);
    return clang_getCursorKind(e) == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(e), var);
}

/* `var OP rhs` with rhs block-level; *rhs gets it. */
static bool var_op_block(lw *L, CXCursor e, CXCursor var, const char *want, CXCursor *rhs) {
    e = lw_strip(e);
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k != CXCursor_BinaryOperator && k != CXCursor_CompoundAssignOperator)
        return false;
    char op[8];
    lw_operator(L, e, op, sizeof op);
    moxc__children ch;
    moxc__children_of(e, &ch);
    bool ok = ch.count == 2 && strcmp(op, want) == 0 && is_ref_to(ch.items[0], var) &&
              lw_expr_class(L, ch.items[1], false) == LE_BLOCK;
    if (ok)
        *rhs = ch.items[1];
    moxc__children_free(&ch);
    return ok;
}

/* Whether B keeps to the loop: no write to var or its address taken, no
 * return or goto, no break of the loop itself (`breaks`: loops and
 * switches around c inside B), and - in a while loop, where it would skip
 * the increment - no continue of it (`continues`: loops around c). A
 * for loop's continue goes on to the increment, as it does. */
static bool body_keeps_to_loop(lw *L, CXCursor c, CXCursor var, int breaks, int continues) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ReturnStmt || k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt ||
        (k == CXCursor_BreakStmt && breaks == 0) || (k == CXCursor_ContinueStmt && continues == 0))
        return false;
    CXCursor target;
    bool addr;
    if (lw_writes(L, c, &target, &addr) &&
        clang_equalCursors(lw_target_root(target), var))
        return false;
    bool loop = k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt;
    bool nests = loop || k == CXCursor_SwitchStmt;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool ok = true;
    for (size_t i = 0; i < ch.count && ok; i++)
        ok = body_keeps_to_loop(L, ch.items[i], var, breaks + nests, continues + loop);
    moxc__children_free(&ch);
    return ok;
}

/* The for statement's variable and its initializer: `T i = E` with T a
 * 32-bit integer, kept as written. */
static bool loop_variable(lw *L, CXCursor decl_stmt, CXCursor *var, CXCursor *init) {
    if (clang_getCursorKind(decl_stmt) != CXCursor_DeclStmt)
        return false;
    moxc__children ch;
    moxc__children_of(decl_stmt, &ch);
    bool ok = ch.count == 1 && clang_getCursorKind(ch.items[0]) == CXCursor_VarDecl;
    if (ok)
        *var = ch.items[0];
    moxc__children_free(&ch);
    if (!ok)
        return false;
    /* (a variable declared inside a region's statement is no lw_var: its
     * text stays as written) */
    enum CXTypeKind t = clang_getCanonicalType(clang_getCursorType(*var)).kind;
    const lw_var *v = lw_var_of(L, *var);
    *init = clang_Cursor_getVarDeclInitializer(*var);
    return (t == CXType_Int || t == CXType_UInt) && !clang_Cursor_isNull(*init) &&
           (!v || (v->cls == LV_LOCAL && !v->addr_taken && !v->multi));
}

/* Whether variable v is used by items a and b only. */
static bool used_only_by(lw *L, const lw_var *v, size_t a, size_t b) {
    size_t var = (size_t)(v - L->vars);
    for (size_t r = 0; r < L->ref_count; r++)
        if (L->refs[r].var == var && L->refs[r].item != a && L->refs[r].item != b)
            return false;
    return true;
}

/* `for (T i = E; i < N; i += S) B` */
static bool for_form(lw *L, size_t item, lw_stride *s) {
    moxc__children ch;
    moxc__children_of(L->items[item].cur, &ch);
    CXCursor bound, step;
    bool ok = ch.count == 4 && loop_variable(L, ch.items[0], &s->var, &s->init) &&
              var_op_block(L, ch.items[1], s->var, "<", &bound) &&
              var_op_block(L, ch.items[2], s->var, "+=", &step) &&
              body_keeps_to_loop(L, ch.items[3], s->var, 0, 1);
    if (ok) {
        s->cond = ch.items[1];
        s->inc = ch.items[2];
        s->body = ch.items[3];
        s->item = item;
        s->decl_item = LW_NONE;
    }
    moxc__children_free(&ch);
    return ok;
}

/* `T i = E; while (i < N) { B i += S; }`, i used nowhere else */
static bool while_form(lw *L, size_t decl, size_t loop, lw_stride *s) {
    if (clang_getCursorKind(L->items[loop].cur) != CXCursor_WhileStmt ||
        !loop_variable(L, L->items[decl].cur, &s->var, &s->init))
        return false;
    const lw_var *v = lw_var_of(L, s->var);
    if (!v || v->decl_item != decl || !used_only_by(L, v, decl, loop))
        return false;
    moxc__children ch, body;
    moxc__children_of(L->items[loop].cur, &ch);
    CXCursor bound, step;
    bool ok = ch.count == 2 && var_op_block(L, ch.items[0], s->var, "<", &bound) &&
              clang_getCursorKind(ch.items[1]) == CXCursor_CompoundStmt;
    if (ok) {
        s->cond = ch.items[0];
        s->body = ch.items[1];
    }
    moxc__children_free(&ch);
    if (!ok)
        return false;
    moxc__children_of(s->body, &body);
    ok = body.count >= 1 && var_op_block(L, body.items[body.count - 1], s->var, "+=", &step);
    for (size_t i = 0; ok && i + 1 < body.count; i++)
        ok = body_keeps_to_loop(L, body.items[i], s->var, 0, 0);
    if (ok)
        s->inc = body.items[body.count - 1];
    moxc__children_free(&body);
    s->item = loop;
    s->decl_item = decl;
    return ok;
}

/* A declaration of variables that can be written again in each round:
 * recomputed ones (functions of the thread index), or locals never set
 * again whose initializer reads no memory and has no effect. */
bool lw_recomputed_decl(lw *L, size_t item) {
    if (clang_getCursorKind(L->items[item].cur) != CXCursor_DeclStmt)
        return false;
    moxc__children ch;
    moxc__children_of(L->items[item].cur, &ch);
    bool ok = ch.count > 0;
    for (size_t i = 0; ok && i < ch.count; i++) {
        const lw_var *v = clang_getCursorKind(ch.items[i]) == CXCursor_VarDecl ? lw_var_of(L, ch.items[i]) : NULL;
        ok = v && (v->cls == LV_REMAT ||
                   (v->cls == LV_LOCAL && !v->written && !v->addr_taken && !v->multi &&
                    !clang_Cursor_isNull(v->init) && !v->init_in_macro && lw_expr_class(L, v->init, false) <= LE_THREAD));
    }
    moxc__children_free(&ch);
    return ok;
}

bool lw_region_stride(lw *L, const size_t *at, size_t n, lw_stride *s) {
    size_t code[LW_STRIDE_DECLS + 2];
    size_t count = lw_region_code(L, at, n, code, LW_STRIDE_DECLS + 2, true);
    if (count == 0 || count > LW_STRIDE_DECLS + 2)
        return false;
    size_t loop = code[count - 1], decl = LW_NONE;
    enum CXCursorKind kind = clang_getCursorKind(L->items[loop].cur);
    s->decl_count = 0;
    for (size_t k = 0; k + 1 < count; k++) {
        if (lw_recomputed_decl(L, code[k]) && s->decl_count < LW_STRIDE_DECLS)
            s->decls[s->decl_count++] = code[k];
        else if (kind == CXCursor_WhileStmt && decl == LW_NONE)
            decl = code[k];
        else
            return false;
    }
    if (kind == CXCursor_ForStmt)
        return decl == LW_NONE && for_form(L, loop, s);
    return kind == CXCursor_WhileStmt && decl != LW_NONE && while_form(L, decl, loop, s);
}

/* `T name` for the loop variable's type. */
static bool put_var_decl(lw_em *m, const lw_stride *s, const char *name) {
    if (lw_put_decl(m->L, m->b, clang_getCursorType(s->var), name))
        return true;
    lw_fail(m->L, s->var, "the type of the grid-stride variable cannot be written");
    return false;
}

static void put_cond(lw_em *m, const lw_stride *s) {
    moxc_buf_put(m->b, "(");
    lw_put_expr(m->L, m->b, s->cond, s->item);
    moxc_buf_put(m->b, ")");
}

/* One thread's step of round mox__r (in the thread loop): its value of
 * the variable (E in round 0), B, the increment, and whether it goes on. */
static void emit_step(lw_em *m, const size_t *at, size_t n, const lw_stride *s, const char *name) {
    lw *L = m->L;
    size_t id = s->item;
    lw_indent(m);
    moxc_buf_printf(m->b, "if (mox__r != 0 && !mox__ga%zu[mox__t])\n", id);
    m->depth++;
    lw_line(m, "continue;");
    m->depth--;
    lw_emit_region_entry(m, at, n);
    for (size_t k = 0; k < s->decl_count; k++)
        lw_emit_code(m, s->decls[k]);
    lw_indent(m);
    if (!put_var_decl(m, s, name))
        return;
    moxc_buf_put(m->b, ";\n");
    lw_line(m, "if (mox__r == 0) {");
    m->depth++;
    lw_indent(m);
    moxc_buf_printf(m->b, "%s = ", name);
    lw_put_expr(L, m->b, s->init, s->decl_item == LW_NONE ? id : s->decl_item);
    moxc_buf_put(m->b, ";\n");
    lw_indent(m);
    moxc_buf_put(m->b, "if (!");
    put_cond(m, s);
    moxc_buf_put(m->b, ") {\n");
    m->depth++;
    lw_indent(m);
    moxc_buf_printf(m->b, "mox__ga%zu[mox__t] = 0;\n", id);
    lw_line(m, "continue;");
    m->depth--;
    lw_line(m, "}");
    m->depth--;
    lw_line(m, "} else {");
    m->depth++;
    lw_indent(m);
    moxc_buf_printf(m->b, "%s = mox__gi%zu[mox__t];\n", name, id);
    m->depth--;
    lw_line(m, "}");
    m->returned = false;
    if (s->decl_item == LW_NONE) {
        lw_emit_stmt(m, s->body, id, "do ", " while (0);");
    } else { /* the while's statements but its last, the increment */
        moxc__children body;
        moxc__children_of(s->body, &body);
        lw_line(m, "{");
        m->depth++;
        for (size_t i = 0; i + 1 < body.count; i++)
            lw_emit_stmt(m, body.items[i], id, "", "");
        m->depth--;
        lw_line(m, "}");
        moxc__children_free(&body);
    }
    lw_indent(m);
    lw_put_expr(L, m->b, s->inc, id);
    moxc_buf_put(m->b, ";\n");
    lw_indent(m);
    moxc_buf_printf(m->b, "mox__gi%zu[mox__t] = %s;\n", id, name);
    lw_indent(m);
    moxc_buf_printf(m->b, "mox__go%zu |= mox__ga%zu[mox__t] = ", id, id);
    put_cond(m, s);
    moxc_buf_put(m->b, ";\n");
}

/* The loop over the block's threads (x fastest), as the other regions'. */
static void open_thread_loop(lw_em *m) {
    lw *L = m->L;
    if (L->block[0] && L->block[1] == 1 && L->block[2] == 1) {
        lw_line(m, "for (uint32_t mox__x = 0; mox__x < mox__bx; ++mox__x) {");
        m->depth++;
        lw_line(m, "const uint32_t mox__y = 0, mox__z = 0, mox__t = mox__x;");
        return;
    }
    lw_line(m, "for (uint32_t mox__z = 0; mox__z < mox__bz; ++mox__z)");
    lw_line(m, "for (uint32_t mox__y = 0; mox__y < mox__by; ++mox__y)");
    lw_line(m, "for (uint32_t mox__x = 0; mox__x < mox__bx; ++mox__x) {");
    m->depth++;
    lw_line(m, "const uint32_t mox__t = mox__x + mox__bx * (mox__y + mox__by * mox__z);");
}

void lw_emit_stride(lw_em *m, const size_t *at, size_t n, const lw_stride *s) {
    lw *L = m->L;
    size_t id = s->item;
    char *name = moxc__cxstr(clang_getCursorSpelling(s->var));
    char *array = moxc__printf("mox__gi%zu[%u]", id, L->threads);
    if (!name || !array) {
        L->oom = L->failed = true;
    } else {
        lw_line(m, "{ /* a grid-stride loop: the threads' iterations side by side, round by round */");
        m->depth++;
        lw_indent(m);
        if (put_var_decl(m, s, array)) {
            moxc_buf_put(m->b, ";\n");
            lw_indent(m);
            moxc_buf_printf(m->b, "unsigned char mox__ga%zu[%u];\n", id, L->threads);
            lw_indent(m);
            moxc_buf_printf(m->b, "for (uint32_t mox__r = 0, mox__go%zu = 1; mox__go%zu; ++mox__r) {\n", id, id);
            m->depth++;
            lw_indent(m);
            moxc_buf_printf(m->b, "mox__go%zu = 0;\n", id);
            open_thread_loop(m);
            emit_step(m, at, n, s, name);
            m->depth--;
            lw_line(m, "}");
            m->depth--;
            lw_line(m, "}");
        }
        m->depth--;
        lw_line(m, "}");
    }
    free(array);
    free(name);
}
