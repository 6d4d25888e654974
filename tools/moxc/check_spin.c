/* check_spin.c - spin-waits: a loop that can only end when an atomic it
 * reads with mox_atomic_load_* changes, with no mox_barrier inside. Atomics
 * are relaxed and order nothing; threads of a block wait for each other
 * only at barriers, and blocks never wait for each other. The CPU runs a
 * block's threads one after another between barriers, so such a loop
 * never ends there (CUDA may or may not end it). Rejected in every function
 * reachable from a kernel.
 *
 * A loop exit - the loop's condition, or the condition of an `if` in the
 * loop guarding a `break` of this loop or a `return` - is a wait when it
 * reads an atomic load (directly, or a local the loop assigns from one)
 * and no other variable the loop changes (a counter bounds the loop), and
 * the loop does not update that atomic itself. CAS calls are updates: their
 * arguments are not reads here, so CAS retry loops stay accepted, as do
 * loops that only read atomics in their body. Loads inside helpers the
 * condition calls are not followed. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

typedef struct var_set {
    CXCursor *items;
    size_t count, cap;
} var_set;

typedef struct spin_loop {
    moxc__tu *t;
    CXCursor loop;
    var_set written; /* locals the loop changes */
    var_set fed;     /* the ones assigned a value read from an atomic */
    var_set atomics; /* arrays or pointers of atomics the loop itself updates */
    bool changed;
    bool barrier;    /* a mox_barrier (or a helper using one) in the loop */
} spin_loop;

static bool set_has(const var_set *s, CXCursor v) {
    for (size_t i = 0; i < s->count; i++)
        if (clang_equalCursors(s->items[i], v))
            return true;
    return false;
}

static void set_add(spin_loop *l, var_set *s, CXCursor v) {
    if (clang_Cursor_isNull(v) || set_has(s, v) || !moxc__grow(&s->items, &s->cap, s->count + 1, sizeof(CXCursor)))
        return;
    s->items[s->count++] = v;
    l->changed = true;
}

static char *callee_name(CXCursor call) {
    CXCursor ref = clang_getCursorReferenced(call);
    return clang_Cursor_isNull(ref) ? NULL : moxc__cxstr(clang_getCursorSpelling(ref));
}

static enum CXChildVisitResult first_ref(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr)
        return CXChildVisit_Recurse;
    *(CXCursor *)data = clang_getCursorReferenced(c);
    return CXChildVisit_Break;
}

/* The variable or parameter an atomic call's pointer starts from
 * (`&flag[0]`, `bins + i`: flag, bins), or a null cursor. */
static CXCursor atomic_base(CXCursor call) {
    CXCursor base = clang_getNullCursor();
    if (clang_Cursor_getNumArguments(call) >= 1)
        clang_visitChildren(clang_Cursor_getArgument(call, 0), first_ref, &base);
    return base;
}

/* The local variable an expression names (through parentheses and
 * implicit conversions), or a null cursor. */
static CXCursor local_of(CXCursor e) {
    e = moxc__strip_parens(e);
    for (int guard = 0; guard < 8 && clang_getCursorKind(e) == CXCursor_UnexposedExpr; guard++) {
        moxc__children ch;
        moxc__children_of(e, &ch);
        CXCursor inner = ch.count == 1 ? ch.items[0] : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(inner))
            break;
        e = moxc__strip_parens(inner);
    }
    if (clang_getCursorKind(e) != CXCursor_DeclRefExpr)
        return clang_getNullCursor();
    CXCursor v = clang_getCursorReferenced(e);
    return clang_getCursorKind(v) == CXCursor_VarDecl && !clang_Cursor_hasVarDeclGlobalStorage(v) ? v
                                                                                                     : clang_getNullCursor();
}

/* The operator of a unary expression: its first token, or its last for
 * postfix ++/--. */
static bool unary_changes(CXTranslationUnit tu, CXCursor c) {
    CXToken *tokens = NULL;
    unsigned count = 0;
    clang_tokenize(tu, clang_getCursorExtent(c), &tokens, &count);
    bool yes = false;
    for (unsigned i = 0; i < count && !yes; i += count > 1 ? count - 1 : 1) {
        char *s = moxc__cxstr(clang_getTokenSpelling(tu, tokens[i]));
        yes = s && (strcmp(s, "++") == 0 || strcmp(s, "--") == 0 || strcmp(s, "&") == 0);
        free(s);
    }
    if (tokens)
        clang_disposeTokens(tu, tokens, count);
    return yes;
}

static bool is_assignment(const char *op) {
    size_t n = strlen(op);
    return n > 0 && op[n - 1] == '=' && strcmp(op, "==") != 0 && strcmp(op, "!=") != 0 &&
           strcmp(op, "<=") != 0 && strcmp(op, ">=") != 0;
}

/* What an expression reads: an atomic load (or a local fed by one), and
 * whether it reads a local the loop changes otherwise. */
typedef struct reads {
    const spin_loop *l;
    bool atomic;
    bool other;
    CXCursor load; /* the first load seen, for the message */
} reads;

static enum CXChildVisitResult scan_reads(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    reads *r = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CallExpr) {
        char *name = callee_name(c);
        bool cas = name && moxc__starts_with(name, "mox_atomic_cas_");
        if (name && moxc__starts_with(name, "mox_atomic_load_")) {
            if (!r->atomic)
                r->load = c;
            r->atomic = true;
            /* the loop updates this atomic itself: it makes progress */
            CXCursor base = atomic_base(c);
            if (!clang_Cursor_isNull(base) && set_has(&r->l->atomics, base))
                r->other = true;
        }
        free(name);
        return cas ? CXChildVisit_Continue : CXChildVisit_Recurse;
    }
    if (k == CXCursor_DeclRefExpr) {
        CXCursor v = local_of(c);
        if (!clang_Cursor_isNull(v) && set_has(&r->l->fed, v))
            r->atomic = true;
        else if (!clang_Cursor_isNull(v) && set_has(&r->l->written, v))
            r->other = true;
    }
    return CXChildVisit_Recurse;
}

static reads reads_of(const spin_loop *l, CXCursor e) {
    reads r = {l, false, false, clang_getNullCursor()};
    scan_reads(e, clang_getNullCursor(), &r);
    if (clang_getCursorKind(e) != CXCursor_CallExpr)
        clang_visitChildren(e, scan_reads, &r);
    return r;
}

/* One pass over the loop: what it changes, what it feeds from atomics,
 * whether it holds a barrier. Repeated until nothing new is found. */
static enum CXChildVisitResult scan_writes(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    spin_loop *l = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_VarDecl) {
        set_add(l, &l->written, c);
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count >= 1 && clang_isExpression(clang_getCursorKind(ch.items[ch.count - 1])) &&
            reads_of(l, ch.items[ch.count - 1]).atomic)
            set_add(l, &l->fed, c);
        moxc__children_free(&ch);
    } else if (k == CXCursor_BinaryOperator || k == CXCursor_CompoundAssignOperator) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        char op[8] = "=";
        if (ch.count == 2 && k == CXCursor_BinaryOperator)
            moxc__binary_op(l->t->tu, ch.items[0], ch.items[1], op, sizeof op);
        if (ch.count == 2 && is_assignment(op)) {
            CXCursor v = local_of(ch.items[0]);
            set_add(l, &l->written, v);
            if (reads_of(l, ch.items[1]).atomic)
                set_add(l, &l->fed, v);
        }
        moxc__children_free(&ch);
    } else if (k == CXCursor_UnaryOperator && unary_changes(l->t->tu, c)) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count == 1)
            set_add(l, &l->written, local_of(ch.items[0]));
        moxc__children_free(&ch);
    } else if (k == CXCursor_CallExpr) {
        char *name = callee_name(c);
        CXCursor def = clang_getCursorDefinition(clang_getCursorReferenced(c));
        size_t fn = clang_Cursor_isNull(def) ? MOXC_NO_FN : moxc__fn_index(l->t, def, false);
        if ((name && strcmp(name, "mox_barrier") == 0) ||
            (fn != MOXC_NO_FN && l->t->fns[fn].coop == MOXC_COOP_BLOCK))
            l->barrier = true;
        if (name && moxc__starts_with(name, "mox_atomic_") && !moxc__starts_with(name, "mox_atomic_load_"))
            set_add(l, &l->atomics, atomic_base(c));
        free(name);
    }
    return CXChildVisit_Recurse;
}

/* The condition of a for statement: libclang leaves out absent parts, so
 * the child between the header's two top-level semicolons. */
static CXCursor for_condition(CXTranslationUnit tu, CXCursor loop, const moxc__children *ch) {
    CXToken *tokens = NULL;
    unsigned count = 0, semi[2] = {0, 0}, found = 0;
    clang_tokenize(tu, clang_getCursorExtent(loop), &tokens, &count);
    int depth = 0;
    for (unsigned i = 0; i < count && found < 2; i++) {
        char *s = moxc__cxstr(clang_getTokenSpelling(tu, tokens[i]));
        if (s && strcmp(s, "(") == 0)
            depth++;
        else if (s && strcmp(s, ")") == 0)
            depth--;
        else if (s && strcmp(s, ";") == 0 && depth == 1)
            moxc__expansion(clang_getTokenLocation(tu, tokens[i]), NULL, NULL, NULL, &semi[found++]);
        free(s);
    }
    if (tokens)
        clang_disposeTokens(tu, tokens, count);
    CXCursor cond = clang_getNullCursor();
    for (size_t i = 0; found == 2 && i + 1 < ch->count; i++) {
        unsigned at = 0;
        moxc__expansion(moxc__cursor_start(ch->items[i]), NULL, NULL, NULL, &at);
        if (at > semi[0] && at < semi[1])
            cond = ch->items[i];
    }
    return cond;
}

static void report(spin_loop *l, CXCursor exit, const reads *r) {
    char *load = clang_Cursor_isNull(r->load) ? NULL : callee_name(r->load);
    char *where = moxc__where(moxc__cursor_loc(exit));
    moxc__error_at(l->t->front, moxc__cursor_loc(l->loop),
                   "this loop waits for another thread's atomic store (a spin-wait: its exit at %s reads only "
                   "%s); threads of a block only wait for each other at mox_barrier, and blocks never wait for "
                   "each other; store before a mox_barrier() and load after it, or split the work into two "
                   "dispatches",
                   where ? where : "?", load ? load : "a value read with mox_atomic_load_*");
    free(where);
    free(load);
}

/* Whether an exit condition waits; reports it once per loop. */
static bool check_exit(spin_loop *l, CXCursor cond) {
    if (clang_Cursor_isNull(cond))
        return false;
    reads r = reads_of(l, cond);
    if (!r.atomic || r.other)
        return false;
    report(l, cond, &r);
    return true;
}

typedef struct exit_find {
    bool found;
    int nested; /* loops and switches between here and the loop: their break is theirs */
} exit_find;

static enum CXChildVisitResult find_exit(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    exit_find *e = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ReturnStmt || (k == CXCursor_BreakStmt && e->nested == 0)) {
        e->found = true;
        return CXChildVisit_Break;
    }
    if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_SwitchStmt) {
        e->nested++;
        clang_visitChildren(c, find_exit, e);
        e->nested--;
        return e->found ? CXChildVisit_Break : CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
}

typedef struct guard_walk {
    spin_loop *l;
    int nested;
    bool reported;
} guard_walk;

/* `if` statements in the loop body whose branches leave the loop. */
static enum CXChildVisitResult find_guards(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    guard_walk *g = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (g->reported)
        return CXChildVisit_Break;
    if (k == CXCursor_IfStmt) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        exit_find e = {false, g->nested};
        for (size_t i = 1; i < ch.count && !e.found; i++)
            find_exit(ch.items[i], c, &e);
        if (e.found && ch.count >= 2)
            g->reported = check_exit(g->l, ch.items[0]);
        moxc__children_free(&ch);
    } else if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt ||
               k == CXCursor_SwitchStmt) {
        g->nested++;
        clang_visitChildren(c, find_guards, g);
        g->nested--;
        return CXChildVisit_Continue;
    }
    return CXChildVisit_Recurse;
}

static void check_loop(moxc__tu *t, CXCursor loop) {
    spin_loop l;
    memset(&l, 0, sizeof l);
    l.t = t;
    l.loop = loop;
    l.changed = true;
    for (int pass = 0; pass < 8 && l.changed; pass++) {
        l.changed = false;
        clang_visitChildren(loop, scan_writes, &l);
    }
    moxc__children ch;
    moxc__children_of(loop, &ch);
    enum CXCursorKind k = clang_getCursorKind(loop);
    CXCursor cond = clang_getNullCursor(), body = clang_getNullCursor();
    if (ch.count >= 1) {
        body = ch.items[k == CXCursor_DoStmt ? 0 : ch.count - 1];
        if (k == CXCursor_WhileStmt && ch.count == 2)
            cond = ch.items[0];
        else if (k == CXCursor_DoStmt && ch.count == 2)
            cond = ch.items[1];
        else if (k == CXCursor_ForStmt)
            cond = for_condition(t->tu, loop, &ch);
    }
    if (!l.barrier && !check_exit(&l, cond) && !clang_Cursor_isNull(body)) {
        guard_walk g = {&l, 0, false};
        if (find_guards(body, loop, &g) == CXChildVisit_Recurse)
            clang_visitChildren(body, find_guards, &g);
    }
    moxc__children_free(&ch);
    free(l.written.items);
    free(l.fed.items);
    free(l.atomics.items);
}

static enum CXChildVisitResult find_loops(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt)
        check_loop(data, c);
    return CXChildVisit_Recurse;
}

void moxc__check_spin(moxc__tu *t) {
    for (size_t i = 0; i < t->fn_count; i++)
        clang_visitChildren(t->fns[i].cursor, find_loops, t);
}
