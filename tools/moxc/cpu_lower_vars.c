/* cpu_lower_vars.c - the kernel's local variables: where each is declared,
 * which items read, write or take the address of it, and which of them are
 * block-level (set once per block from uniform values, or the variables
 * of a loop whose header is block-level) or recomputed (a function of the
 * thread index alone, evaluated again in each region that reads it). The
 * constructs whose conditions are then evaluable directly have their flag
 * code marked dead. cpu_lower_regions.c decides about the rest. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

/* ---------------- collection ---------------- */

static size_t add_var(lw *L, CXCursor decl, size_t item, size_t loop, bool param) {
    if (!moxc__grow(&L->vars, &L->var_cap, L->var_count + 1, sizeof *L->vars)) {
        L->oom = L->failed = true;
        return LW_NONE;
    }
    lw_var *v = &L->vars[L->var_count];
    memset(v, 0, sizeof *v);
    v->decl = decl;
    v->name = moxc__cxstr(clang_getCursorSpelling(decl));
    v->cls = LV_LOCAL;
    v->decl_item = item;
    v->decl_loop = loop;
    v->param = param;
    v->init = clang_getNullCursor();
    v->id = L->var_count;
    CXType type = clang_getCursorType(decl);
    v->array = clang_getCanonicalType(type).kind == CXType_ConstantArray;
    long long size = clang_Type_getSizeOf(type);
    v->size = size > 0 ? (uint64_t)size : 0;
    /* from the AST, not by position: a declaration a macro writes has all
     * its parts at the macro's name */
    if (!param)
        v->init = clang_Cursor_getVarDeclInitializer(decl);
    /* a macro that writes the whole declaration puts every part at its
     * call: the initializer does not come after the name */
    v->init_in_macro = !clang_Cursor_isNull(v->init) &&
                       lw_offset(moxc__cursor_start(v->init)) <= lw_offset(moxc__cursor_loc(decl));
    if (!v->name)
        L->oom = L->failed = true;
    return L->var_count++;
}

static void collect_seq(lw *L, const lw_seq *s, size_t parent);

static void collect_item(lw *L, size_t i, size_t parent) {
    L->items[i].parent = parent;
    lw_item *it = &L->items[i];
    if (it->kind == LW_CODE && it->wrap == LW_WRAP_STMT && it->phase != LW_PRE &&
        clang_getCursorKind(it->cur) == CXCursor_DeclStmt) {
        bool loop_init = it->owner != LW_NONE && L->items[it->owner].kind == LW_LOOP;
        moxc__children ch;
        moxc__children_of(it->cur, &ch);
        for (size_t k = 0; k < ch.count; k++)
            if (clang_getCursorKind(ch.items[k]) == CXCursor_VarDecl)
                add_var(L, ch.items[k], i, loop_init ? it->owner : LW_NONE, false);
        moxc__children_free(&ch);
    }
    if (L->items[i].kind == LW_IF || L->items[i].kind == LW_LOOP) {
        lw_seq body = L->items[i].body, other = L->items[i].other, tail = L->items[i].tail;
        collect_seq(L, &body, i);
        collect_seq(L, &other, i);
        collect_seq(L, &tail, i);
    }
}

static void collect_seq(lw *L, const lw_seq *s, size_t parent) {
    for (size_t k = 0; k < s->n && !L->failed; k++)
        collect_item(L, s->at[k], parent);
}

bool lw_encloses(lw *L, size_t loop, size_t it) {
    for (size_t p = it; p != LW_NONE; p = L->items[p].parent)
        if (p == loop)
            return true;
    return false;
}

/* ---------------- uses ---------------- */

typedef struct ref_walk {
    lw *L;
    size_t item;
    const lw_item *it;
} ref_walk;

static void add_ref(ref_walk *w, lw_var *v, unsigned how) {
    lw *L = w->L;
    size_t var = (size_t)(v - L->vars);
    for (size_t i = L->ref_count; i-- > 0 && L->refs[i].item == w->item;)
        if (L->refs[i].var == var) {
            L->refs[i].how |= how;
            return;
        }
    if (!moxc__grow(&L->refs, &L->ref_cap, L->ref_count + 1, sizeof *L->refs)) {
        L->oom = L->failed = true;
        return;
    }
    L->refs[L->ref_count++] = (lw_ref){var, w->item, how};
}

/* The variable an assignment target writes (part of), or NULL. */
static lw_var *target_var(lw *L, CXCursor c) {
    CXCursor root = lw_target_root(c);
    return clang_Cursor_isNull(root) ? NULL : lw_var_of(L, root);
}

static bool is_warp_call_of(const lw *L, const lw_item *it, CXCursor c) {
    for (size_t i = it->call_first; i < it->call_first + it->call_count; i++)
        if (clang_equalCursors(L->calls[i].call, c))
            return true;
    return false;
}

static enum CXChildVisitResult walk_refs(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    ref_walk *w = data;
    lw *L = w->L;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CallExpr && w->it->phase == LW_POST && is_warp_call_of(L, w->it, c))
        return CXChildVisit_Continue; /* replaced by its result */
    if (k == CXCursor_DeclRefExpr) {
        lw_var *v = lw_var_of(L, clang_getCursorReferenced(c));
        if (v)
            add_ref(w, v, LR_READ);
    } else if (k == CXCursor_VarDecl) {
        lw_var *v = lw_var_of(L, c);
        if (v)
            add_ref(w, v, LR_WRITE | LR_DEF);
    } else {
        CXCursor target;
        bool addr;
        if (lw_writes(L, c, &target, &addr)) {
            lw_var *v = target_var(L, target);
            if (v)
                add_ref(w, v, addr ? LR_ADDR | LR_WRITE : LR_WRITE);
        }
    }
    return CXChildVisit_Recurse;
}

typedef struct mention {
    const lw *L;
    const lw_item *skip; /* a POST item: its warp calls are replaced */
    CXCursor decl;
    bool found;
} mention;

static enum CXChildVisitResult find_mention(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    mention *m = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CallExpr && m->skip && is_warp_call_of(m->L, m->skip, c))
        return CXChildVisit_Continue;
    if (k == CXCursor_DeclRefExpr && clang_equalCursors(clang_getCursorReferenced(c), m->decl))
        m->found = true;
    return m->found ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* Whether c reads variable `decl` (outside the calls an item replaces). */
static bool mentions(const lw *L, const lw_item *it, CXCursor c, CXCursor decl) {
    mention m = {L, it->phase == LW_POST ? it : NULL, decl, false};
    if (find_mention(c, c, &m) == CXChildVisit_Continue)
        return false;
    if (!m.found)
        clang_visitChildren(c, find_mention, &m);
    return m.found;
}

/* `v = expr;` with expr not reading v: v is set before it is read. (The
 * walk counted the target as a read.) */
static void mark_plain_def(ref_walk *w) {
    lw *L = w->L;
    const lw_item *it = w->it;
    if (it->wrap != LW_WRAP_EXPR || it->phase == LW_PRE)
        return;
    CXCursor c = lw_strip(it->cur);
    if (clang_getCursorKind(c) != CXCursor_BinaryOperator)
        return;
    char op[8];
    lw_operator(L, c, op, sizeof op);
    moxc__children ch;
    moxc__children_of(c, &ch);
    CXCursor lhs = ch.count == 2 ? lw_strip(ch.items[0]) : clang_getNullCursor();
    lw_var *v = strcmp(op, "=") == 0 && clang_getCursorKind(lhs) == CXCursor_DeclRefExpr
                    ? lw_var_of(L, clang_getCursorReferenced(lhs))
                    : NULL;
    bool reads = v && mentions(L, it, ch.items[1], v->decl);
    moxc__children_free(&ch);
    if (!v || reads)
        return;
    size_t var = (size_t)(v - L->vars);
    for (size_t i = L->ref_count; i-- > 0 && L->refs[i].item == w->item;)
        if (L->refs[i].var == var)
            L->refs[i].how = (L->refs[i].how & ~(unsigned)LR_READ) | LR_DEF;
}

static void refs_of_item(lw *L, size_t i) {
    const lw_item *it = &L->items[i];
    ref_walk w = {L, i, it};
    if (it->kind != LW_CODE)
        return;
    if (it->phase == LW_PRE) {
        for (size_t c = it->call_first; c < it->call_first + it->call_count; c++)
            for (int a = 0; a < 2; a++)
                if (!clang_Cursor_isNull(L->calls[c].arg[a])) {
                    walk_refs(L->calls[c].arg[a], it->cur, &w);
                    clang_visitChildren(L->calls[c].arg[a], walk_refs, &w);
                }
        return;
    }
    walk_refs(it->cur, it->cur, &w);
    clang_visitChildren(it->cur, walk_refs, &w);
    mark_plain_def(&w);
}

static void add_params(lw *L) {
    int n = clang_Cursor_getNumArguments(L->kernel);
    for (int p = 0; p < n; p++)
        add_var(L, clang_Cursor_getArgument(L->kernel, (unsigned)p), LW_NONE, LW_NONE, true);
}

/* written: set other than by its declaration (or, for a loop's variable,
 * by that loop's init and increment). */
static void summarize(lw *L) {
    for (size_t r = 0; r < L->ref_count; r++) {
        lw_var *v = &L->vars[L->refs[r].var];
        const lw_item *it = &L->items[L->refs[r].item];
        unsigned how = L->refs[r].how;
        if (how & LR_ADDR)
            v->addr_taken = true;
        bool header = v->decl_loop != LW_NONE && it->owner == v->decl_loop && it->flag == LW_NONE;
        if ((how & LR_WRITE) && L->refs[r].item != v->decl_item && !header)
            v->written = true;
    }
}

/* ---------------- block-level variables and direct headers ---------------- */

static bool header_direct(lw *L, size_t i) {
    const lw_item *it = &L->items[i];
    int limit = it->level == LW_W ? LE_WARP : LE_BLOCK;
    if (it->kind == LW_IF)
        return lw_expr_class(L, it->cond, false) <= limit;
    if (!clang_Cursor_isNull(it->init) && lw_header_class(L, it->init, i) > limit)
        return false;
    if (!clang_Cursor_isNull(it->inc) && lw_header_class(L, it->inc, i) > limit)
        return false;
    return clang_Cursor_isNull(it->cond) || lw_expr_class(L, it->cond, false) <= limit;
}

/* Candidates become LV_BLOCK, then lose it until the rest is consistent. */
static void find_block_vars(lw *L) {
    for (size_t i = 0; i < L->var_count; i++) {
        lw_var *v = &L->vars[i];
        bool shape = !v->param && !v->written && !v->addr_taken && !v->array && v->size && !v->not_block;
        bool decl = v->decl_loop == LW_NONE && !clang_Cursor_isNull(v->init) &&
                    L->items[v->decl_item].phase == LW_WHOLE && L->items[v->decl_item].owner == LW_NONE;
        if (shape && (decl || v->decl_loop != LW_NONE))
            v->cls = LV_BLOCK;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < L->var_count; i++) {
            lw_var *v = &L->vars[i];
            if (v->cls == LV_BLOCK && v->decl_loop == LW_NONE && lw_expr_class(L, v->init, false) > LE_BLOCK) {
                v->cls = LV_LOCAL;
                changed = true;
            }
        }
        for (size_t i = 0; i < L->item_count; i++) {
            if (L->items[i].kind != LW_LOOP || header_direct(L, i))
                continue;
            for (size_t k = 0; k < L->var_count; k++)
                if (L->vars[k].decl_loop == i && L->vars[k].cls == LV_BLOCK) {
                    L->vars[k].cls = LV_LOCAL;
                    changed = true;
                }
        }
    }
}

static bool in_direct_header(lw *L, size_t var) {
    for (size_t i = 0; i < L->item_count; i++) {
        const lw_item *it = &L->items[i];
        if ((it->kind != LW_IF && it->kind != LW_LOOP) || !it->direct)
            continue;
        CXCursor parts[3] = {it->init, it->cond, it->inc};
        for (int p = 0; p < 3; p++)
            if (!clang_Cursor_isNull(parts[p]) && mentions(L, it, parts[p], L->vars[var].decl))
                return true;
    }
    return false;
}

/* Read by an item other than its declaration, or by a direct header. */
static bool referenced_elsewhere(lw *L, size_t var) {
    for (size_t r = 0; r < L->ref_count; r++)
        if (L->refs[r].var == var && L->refs[r].item != L->vars[var].decl_item &&
            !L->items[L->refs[r].item].dead)
            return true;
    return in_direct_header(L, var);
}

static void mark_direct(lw *L) {
    for (size_t i = 0; i < L->item_count; i++) {
        lw_item *it = &L->items[i];
        if (it->kind == LW_IF || it->kind == LW_LOOP)
            it->direct = header_direct(L, i);
    }
    for (size_t i = 0; i < L->item_count; i++) {
        size_t o = L->items[i].owner;
        L->items[i].dead = o != LW_NONE && L->items[o].direct;
    }
}

/* ---------------- recomputed variables ---------------- */

static bool unique_name(lw *L, size_t var) {
    for (size_t i = 0; i < L->var_count; i++)
        if (i != var && strcmp(L->vars[i].name, L->vars[var].name) == 0)
            return false;
    return true;
}

static void find_remat_vars(lw *L) {
    for (size_t i = 0; i < L->var_count; i++) {
        lw_var *v = &L->vars[i];
        const lw_item *d = v->decl_item == LW_NONE ? NULL : &L->items[v->decl_item];
        if (v->cls == LV_LOCAL && !v->param && !v->written && !v->addr_taken && !v->array && v->size &&
            !clang_Cursor_isNull(v->init) && d && d->phase == LW_WHOLE && d->owner == LW_NONE &&
            unique_name(L, i) && referenced_elsewhere(L, i))
            v->cls = LV_REMAT;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < L->var_count; i++) {
            lw_var *v = &L->vars[i];
            if (v->cls != LV_REMAT)
                continue;
            L->remat_site = v->decl_item;
            if (lw_expr_class(L, v->init, true) > LE_THREAD) {
                v->cls = LV_LOCAL;
                changed = true;
            }
        }
    }
    L->remat_site = LW_NONE;
}

void lw_vars(lw *L) {
    add_params(L);
    collect_seq(L, &L->top, LW_NONE);
    for (size_t i = 0; i < L->item_count && !L->failed; i++)
        refs_of_item(L, i);
    if (L->failed)
        return;
    summarize(L);
    /* Block-level variables nothing else reads stay as written; dropping
     * one may leave another unread, so repeat until stable. */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < L->var_count; i++)
            if (L->vars[i].cls == LV_BLOCK)
                L->vars[i].cls = LV_LOCAL;
        find_block_vars(L);
        mark_direct(L);
        for (size_t i = 0; i < L->var_count; i++) {
            lw_var *v = &L->vars[i];
            if (v->cls == LV_BLOCK && v->decl_loop == LW_NONE && !referenced_elsewhere(L, i)) {
                v->not_block = true;
                changed = true;
            }
        }
    }
    find_remat_vars(L);
    lw_regions(L);
}
