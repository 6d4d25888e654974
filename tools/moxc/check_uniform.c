/* check_uniform.c - uniform participation. A barrier needs every thread of
 * the block, a warp operation every lane of the warp; a thread that skips
 * one deadlocks the CPU fibers and is undefined behaviour on CUDA. So each
 * cooperative call (or call of a helper that contains one) must only sit
 * under control flow whose conditions are the same for all participants.
 *
 * The analysis is conservative and flow-insensitive per variable: a local is
 * varying if any assignment to it is varying, or happens under varying
 * control; values read from memory, thread/lane indices, atomics and scans
 * are varying; kernel parameters, block/grid geometry and constants are
 * uniform; warp ids and warp reductions are uniform within a warp (enough
 * for warp operations, not for barriers). Helper parameters take the
 * least-uniform level of their call sites. Everything iterates to a fixpoint,
 * then one last pass reports. Early exits under varying control
 * (return/break/continue/goto) make the code they can skip divergent.
 *
 * Here: the analysis's state (levels of variables, loops and switches left
 * early, the control around the current point) and the driver; statements
 * are walked in check_uniform_stmt.c, expressions and calls in
 * check_uniform_expr.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <stdlib.h>
#include <string.h>

#include "check_uniform.h"

/* ---------------- state ---------------- */

uvar *moxc__u_find_var(ufn *f, CXCursor decl) {
    for (size_t i = 0; i < f->var_count; i++)
        if (clang_equalCursors(f->vars[i].decl, decl))
            return &f->vars[i];
    return NULL;
}

void moxc__u_raise_var(uwalk *w, CXCursor decl, int level, uwhy why) {
    ufn *f = ucur(w);
    uvar *v = moxc__u_find_var(f, decl);
    if (!v) {
        if (!moxc__grow(&f->vars, &f->var_cap, f->var_count + 1, sizeof *f->vars))
            return;
        v = &f->vars[f->var_count++];
        v->decl = decl;
        v->level = MOXC_UNIFORM;
        v->why.kind = UWHY_NONE;
        w->a->changed = true;
    }
    if (level > v->level) {
        v->level = level;
        v->why = why;
        w->a->changed = true;
    }
}

uwhy moxc__u_why_expr(uwalk *w, CXCursor e, uwhy_kind kind) {
    uwhy why;
    why.kind = kind;
    why.expr = e;
    why.loc = moxc__cursor_loc(e);
    why.fn = w->fn;
    return why;
}

static udiv *find_div(ufn *f, CXCursor stmt) {
    for (size_t i = 0; i < f->div_count; i++)
        if (clang_equalCursors(f->divs[i].stmt, stmt))
            return &f->divs[i];
    return NULL;
}

void moxc__u_mark_div(uwalk *w, CXCursor stmt, int level, CXSourceLocation loc, uwhy why) {
    ufn *f = ucur(w);
    udiv *d = find_div(f, stmt);
    if (!d) {
        if (!moxc__grow(&f->divs, &f->div_cap, f->div_count + 1, sizeof *f->divs))
            return;
        d = &f->divs[f->div_count++];
        d->stmt = stmt;
        d->level = MOXC_UNIFORM;
        d->loc = loc;
        d->why = why;
    }
    if (level > d->level) {
        d->level = level;
        d->loc = loc;
        d->why = why;
        w->a->changed = true;
    }
}

/* The innermost reason the current point is not reached by every thread
 * with a level above `tolerance`; returns its level (0 when none). */
int moxc__u_ctrl_exceeding(uwalk *w, int tolerance, CXSourceLocation *loc, uwhy *why) {
    /* an early exit is the root cause of the loop conditions it makes vary */
    ufn *f = ucur(w);
    uwhy none;
    none.kind = UWHY_NONE;
    if (!why)
        why = &none;
    for (size_t i = w->scope_count; i-- > 0;) {
        udiv *d = find_div(f, w->scopes[i]);
        if (d && d->level > tolerance) {
            *loc = d->loc;
            *why = d->why;
            return d->level;
        }
    }
    for (size_t i = w->ctrl_count; i-- > 0;) {
        if (w->ctrl[i].level > tolerance) {
            *loc = w->ctrl[i].loc;
            *why = moxc__u_why_expr(w, w->ctrl[i].cond, UWHY_CONTROL);
            why->loc = w->ctrl[i].loc;
            return w->ctrl[i].level;
        }
    }
    if (w->after_return > tolerance) {
        *loc = w->after_loc;
        *why = w->after_why;
        return w->after_return;
    }
    if (f->whole > tolerance) {
        *loc = f->whole_loc;
        *why = f->whole_why;
        return f->whole;
    }
    return MOXC_UNIFORM;
}

int moxc__u_ctrl_level(uwalk *w, CXSourceLocation *loc, uwhy *why) {
    CXSourceLocation l = clang_getNullLocation();
    int level = moxc__u_ctrl_exceeding(w, MOXC_WARP_UNIFORM, &l, why);
    if (level == MOXC_UNIFORM)
        level = moxc__u_ctrl_exceeding(w, MOXC_UNIFORM, &l, why);
    if (loc)
        *loc = l;
    return level;
}

void moxc__u_push_ctrl(uwalk *w, int level, CXSourceLocation loc, CXCursor cond) {
    if (!moxc__grow(&w->ctrl, &w->ctrl_cap, w->ctrl_count + 1, sizeof *w->ctrl)) {
        w->a->oom = true; /* the result is discarded: an error is reported */
        return;
    }
    w->ctrl[w->ctrl_count].level = level;
    w->ctrl[w->ctrl_count].loc = loc;
    w->ctrl[w->ctrl_count].cond = cond;
    w->ctrl_count++;
}

void moxc__u_pop_ctrl(uwalk *w) {
    if (w->ctrl_count)
        w->ctrl_count--;
}

bool moxc__u_push_scope(uwalk *w, CXCursor stmt, bool is_switch) {
    size_t cap = w->scope_cap;
    if (!moxc__grow(&w->scopes, &w->scope_cap, w->scope_count + 1, sizeof *w->scopes))
        return false;
    if (w->scope_cap != cap) {
        bool *p = realloc(w->is_switch, w->scope_cap * sizeof *p);
        if (!p) {
            w->scope_cap = cap;
            return false;
        }
        w->is_switch = p;
    }
    w->scopes[w->scope_count] = stmt;
    w->is_switch[w->scope_count] = is_switch;
    w->scope_count++;
    return true;
}

bool moxc__u_is_local(CXCursor decl) {
    enum CXCursorKind k = clang_getCursorKind(decl);
    if (k == CXCursor_ParmDecl)
        return true;
    return k == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(decl);
}

bool moxc__u_is_array_type(CXType t) {
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray;
}

/* ---------------- driver ---------------- */

static void walk_function(uanalysis *a, size_t fn, bool report) {
    uwalk w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.fn = fn;
    w.report = report;
    moxc__children ch;
    moxc__children_of(a->t->fns[fn].cursor, &ch);
    for (size_t i = 0; i < ch.count; i++)
        if (clang_getCursorKind(ch.items[i]) == CXCursor_CompoundStmt)
            moxc__u_stmt(&w, ch.items[i]);
    moxc__children_free(&ch);
    free(w.ctrl);
    free(w.scopes);
    free(w.is_switch);
}

void moxc__check_uniform(moxc__tu *t) {
    if (t->fn_count == 0)
        return;
    uanalysis a = {t, calloc(t->fn_count, sizeof(ufn)), false, false, NULL, 0, 0};
    bool ok = a.fns != NULL;
    for (size_t i = 0; ok && i < t->fn_count; i++) {
        int n = clang_Cursor_getNumArguments(t->fns[i].cursor);
        if (n <= 0)
            continue;
        a.fns[i].params = calloc((size_t)n, sizeof(CXCursor));
        a.fns[i].param_levels = calloc((size_t)n, sizeof(int));
        a.fns[i].param_whys = calloc((size_t)n, sizeof(uwhy));
        ok = a.fns[i].params && a.fns[i].param_levels && a.fns[i].param_whys;
        for (int p = 0; ok && p < n; p++)
            a.fns[i].params[p] = clang_Cursor_getArgument(t->fns[i].cursor, (unsigned)p);
        a.fns[i].param_count = ok ? (size_t)n : 0;
    }
    if (ok) {
        /* levels only rise and are bounded, so this terminates; the cap is a guard */
        for (int pass = 0; pass < 10000; pass++) {
            a.changed = false;
            for (size_t i = 0; i < t->fn_count; i++)
                walk_function(&a, i, false);
            if (!a.changed)
                break;
        }
        for (size_t i = 0; i < t->fn_count; i++)
            if (t->fns[i].coop != MOXC_COOP_NONE)
                walk_function(&a, i, true);
    }
    if (!ok || a.oom)
        moxc__error_plain(t->front, t->source, "out of memory");
    for (size_t i = 0; a.fns && i < t->fn_count; i++) {
        free(a.fns[i].vars);
        free(a.fns[i].params);
        free(a.fns[i].param_levels);
        free(a.fns[i].param_whys);
        free(a.fns[i].divs);
    }
    free(a.fns);
    free(a.memo);
}
