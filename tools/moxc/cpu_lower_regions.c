/* cpu_lower_regions.c - numbers the region loops in the order the work-
 * group function will run them, then decides what each remaining local
 * variable needs: per-thread storage only when a region reads it before
 * setting it while another region set it (live across a region boundary),
 * else it stays a variable of each region that uses it. Also: names a
 * region would declare twice, the regions that must keep the lane's thread
 * index current for helpers, the stack budget, and the counts. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a work-group function's frame that moxc may fill with storage,
 * shared memory and staging arrays: pool threads have stacks of 8 MiB. */
#define LW_STACK_BUDGET (1u << 20)

bool lw_is_hoist(lw *L, size_t item) {
    const lw_item *it = &L->items[item];
    if (it->kind != LW_CODE || it->wrap != LW_WRAP_STMT || it->phase != LW_WHOLE ||
        clang_getCursorKind(it->cur) != CXCursor_DeclStmt)
        return false;
    bool any = false;
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].decl_item == item) {
            if (L->vars[i].cls != LV_BLOCK || L->vars[i].decl_loop != LW_NONE)
                return false;
            any = true;
        }
    return any;
}

const lw_seq *lw_iteration(lw *L, size_t loop, lw_seq *tmp) {
    const lw_item *it = &L->items[loop];
    memset(tmp, 0, sizeof *tmp);
    if (it->direct || it->continued)
        return &it->body;
    for (size_t i = 0; i < it->body.n; i++)
        lw_seq_push(L, tmp, it->body.at[i]);
    for (size_t i = 0; i < it->tail.n; i++)
        lw_seq_push(L, tmp, L->items[loop].tail.at[i]);
    return tmp;
}

/* ---------------- regions ---------------- */

typedef struct layout {
    lw *L;
    size_t order;
} layout;

/* What ends a run in context ctx (block: B-level items; warp: W-level). */
static bool boundary(const lw_item *it, int ctx) {
    return it->level == ctx;
}

static void assign_range(layout *y, const size_t *at, size_t n, int ctx);

static void assign_construct(layout *y, size_t i, int ctx) {
    lw *L = y->L;
    L->items[i].order = y->order++;
    if (L->items[i].kind == LW_IF) {
        lw_seq body = L->items[i].body, other = L->items[i].other;
        assign_range(y, body.at, body.n, ctx);
        assign_range(y, other.at, other.n, ctx);
    } else if (L->items[i].kind == LW_LOOP) {
        lw_seq tmp;
        const lw_seq *iter = lw_iteration(L, i, &tmp);
        lw_seq copy = *iter; /* items may move while assigning */
        assign_range(y, copy.at, copy.n, ctx);
        if (!L->items[i].direct && L->items[i].continued) {
            lw_seq tail = L->items[i].tail;
            assign_range(y, tail.at, tail.n, ctx);
        }
        free(tmp.at);
    }
}

static void assign_run(layout *y, const size_t *at, size_t n) {
    lw *L = y->L;
    size_t region = LW_NONE;
    for (size_t k = 0; k < n; k++) {
        lw_item *it = &L->items[at[k]];
        if (it->dead || it->kind != LW_CODE || lw_is_hoist(L, at[k]))
            continue;
        if (region == LW_NONE)
            region = L->region_count++;
        it->region = region;
        it->order = y->order++;
    }
}

static void assign_range(layout *y, const size_t *at, size_t n, int ctx) {
    lw *L = y->L;
    size_t i = 0;
    while (i < n) {
        lw_item *it = &L->items[at[i]];
        if (it->dead) {
            i++;
            continue;
        }
        if (boundary(it, ctx)) {
            assign_construct(y, at[i], ctx);
            i++;
            continue;
        }
        size_t j = i;
        bool warp = false;
        while (j < n && (L->items[at[j]].dead || !boundary(&L->items[at[j]], ctx))) {
            warp = warp || (!L->items[at[j]].dead && L->items[at[j]].level == LW_W);
            j++;
        }
        if (ctx == LW_B && warp)
            assign_range(y, at + i, j - i, LW_W);
        else
            assign_run(y, at + i, j - i);
        i = j;
    }
}

/* ---------------- storage ---------------- */

/* The first use of var in region r, in emitted order (LW_NONE if none). */
static size_t first_ref(lw *L, size_t var, size_t r) {
    size_t best = LW_NONE, order = 0;
    for (size_t k = 0; k < L->ref_count; k++) {
        const lw_item *it = &L->items[L->refs[k].item];
        if (L->refs[k].var != var || it->dead || it->region != r)
            continue;
        if (best == LW_NONE || it->order < order) {
            best = k;
            order = it->order;
        }
    }
    return best;
}

static bool used_in(lw *L, size_t var, size_t r) {
    return first_ref(L, var, r) != LW_NONE;
}

static size_t decl_region(lw *L, const lw_var *v) {
    return v->decl_item == LW_NONE ? LW_NONE : L->items[v->decl_item].region;
}

static void decide(lw *L, size_t var) {
    lw_var *v = &L->vars[var];
    if (v->cls != LV_LOCAL || (v->param && !v->written && !v->addr_taken))
        return;
    size_t regions = 0, exposed = 0, home = decl_region(L, v);
    for (size_t r = 0; r < L->region_count; r++) {
        size_t f = first_ref(L, var, r);
        if (f == LW_NONE)
            continue;
        regions++;
        if (r != home && !(L->refs[f].how & LR_DEF))
            exposed++;
    }
    bool several = regions > 1 || (v->param && regions == 1);
    if (!several)
        return;
    if (exposed || v->addr_taken || v->array)
        v->cls = LV_STORAGE;
    else
        v->multi = true;
}

/* A pointer kept in storage may point at any variable whose address was
 * taken: those must outlive their region too. */
static void keep_pointees(lw *L) {
    bool pointer = false;
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].cls == LV_STORAGE &&
            clang_getCanonicalType(clang_getCursorType(L->vars[i].decl)).kind == CXType_Pointer)
            pointer = true;
    for (size_t i = 0; pointer && i < L->var_count; i++) {
        lw_var *v = &L->vars[i];
        if (v->cls == LV_LOCAL && (v->addr_taken || v->array) && !(v->param && !v->written && !v->addr_taken))
            v->cls = LV_STORAGE;
    }
}

/* Whether var is declared in region r's scope by the emitted code: its own
 * declaration there, or a declaration moxc adds (recomputed, multi). */
static bool declared_in(lw *L, size_t var, size_t r) {
    const lw_var *v = &L->vars[var];
    if (v->cls == LV_REMAT || v->multi)
        return used_in(L, var, r) || decl_region(L, v) == r;
    return v->cls == LV_LOCAL && !v->param && decl_region(L, v) == r;
}

typedef struct clash_walk {
    lw *L;
    size_t region;
    bool changed;
} clash_walk;

/* A name the region declares must not hide anything else it uses. */
static enum CXChildVisitResult find_clash(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    clash_walk *w = data;
    lw *L = w->L;
    if (clang_getCursorKind(c) != CXCursor_DeclRefExpr)
        return CXChildVisit_Recurse;
    CXCursor ref = clang_getCursorReferenced(c);
    char *name = moxc__cxstr(clang_getCursorSpelling(ref));
    for (size_t i = 0; name && i < L->var_count; i++) {
        lw_var *v = &L->vars[i];
        if (strcmp(v->name, name) == 0 && !clang_equalCursors(v->decl, ref) && declared_in(L, i, w->region) &&
            v->cls != LV_REMAT) {
            v->cls = LV_STORAGE;
            v->multi = false;
            w->changed = true;
        }
    }
    free(name);
    return CXChildVisit_Recurse;
}

static bool resolve_clashes(lw *L) {
    clash_walk w = {L, 0, false};
    for (size_t i = 0; i < L->item_count; i++) {
        const lw_item *it = &L->items[i];
        if (it->kind != LW_CODE || it->dead || it->region == LW_NONE)
            continue;
        w.region = it->region;
        clang_visitChildren(it->cur, find_clash, &w);
    }
    return w.changed;
}

static void count(lw *L) {
    moxc_cpu_stats *s = &L->stats;
    s->regions = (unsigned)L->region_count;
    for (size_t i = 0; i < L->item_count; i++)
        if (L->items[i].kind == LW_WARP && !L->items[i].dead)
            s->warp_steps++;
    for (size_t i = 0; i < L->var_count; i++) {
        const lw_var *v = &L->vars[i];
        if (v->param && !v->written && !v->addr_taken)
            continue;
        s->locals++;
        s->crossing += v->cls != LV_LOCAL || v->multi;
        if (v->cls == LV_STORAGE) {
            s->privatized++;
            s->private_bytes += v->size;
        }
        s->block_level += v->cls == LV_BLOCK;
        s->rematerialized += v->cls == LV_REMAT;
    }
    uint64_t frame = s->private_bytes * L->threads + (uint64_t)L->call_count * 3u * 32u * 8u;
    for (size_t i = 0; i < L->static_count; i++) {
        moxc__children ch;
        moxc__children_of(L->statics[i], &ch);
        for (size_t k = 0; k < ch.count; k++) {
            long long size = clang_Type_getSizeOf(clang_getCursorType(ch.items[k]));
            frame += size > 0 ? (uint64_t)size : 0;
        }
        moxc__children_free(&ch);
    }
    if (frame > LW_STACK_BUDGET)
        lw_fail(L, L->kernel, "%llu bytes of per-thread storage, shared memory and staging arrays (more than %u)",
                (unsigned long long)frame, LW_STACK_BUDGET);
}

/* A recomputed variable only its own region reads (and no recomputed
 * variable read elsewhere needs) is just a variable of that region. */
static void keep_remat_local(lw *L) {
    bool *needed = calloc(L->var_count ? L->var_count : 1, sizeof *needed);
    if (!needed) {
        L->oom = L->failed = true;
        return;
    }
    for (size_t r = 0; r < L->ref_count; r++) {
        const lw_var *v = &L->vars[L->refs[r].var];
        const lw_item *it = &L->items[L->refs[r].item];
        if (v->cls == LV_REMAT && !it->dead && it->region != decl_region(L, v))
            needed[L->refs[r].var] = true;
    }
    for (size_t i = L->var_count; i-- > 0;)
        for (size_t r = 0; needed[i] && r < L->ref_count; r++)
            if (L->refs[r].item == L->vars[i].decl_item && L->vars[L->refs[r].var].cls == LV_REMAT)
                needed[L->refs[r].var] = true;
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].cls == LV_REMAT && !needed[i])
            L->vars[i].cls = LV_LOCAL;
    free(needed);
}

void lw_regions(lw *L) {
    layout y = {L, 0};
    assign_range(&y, L->top.at, L->top.n, LW_B);
    keep_remat_local(L);
    for (size_t i = 0; i < L->var_count; i++)
        decide(L, i);
    keep_pointees(L);
    for (int guard = 0; guard < 64 && resolve_clashes(L); guard++)
        ;
    for (size_t i = 0; i < L->var_count; i++)
        if (L->vars[i].cls == LV_STORAGE)
            L->vars[i].multi = false;
    count(L);
}
