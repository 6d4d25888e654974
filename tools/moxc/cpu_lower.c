/* cpu_lower.c - turns each kernel into a CPU work-group function: one call
 * runs a whole block, its threads becoming loops around the kernel's
 * barrier-free regions (the approach of PoCL's work-group functions and
 * AdaptiveCpp's deep loop fission, done here on the source text).
 *
 * - Statements without barriers or warp operations run per thread: a run
 *   of them becomes one loop over the block's threads (x fastest) whose
 *   body is their text. A barrier ends one such loop and starts the next.
 * - A loop or branch that contains a barrier stays a loop or branch, now
 *   around region loops: moxc's uniformity check proved its condition is
 *   the same for every thread, so it is evaluated once per block (when it
 *   only needs block-level values) or by every thread into one flag.
 * - A run that contains warp operations becomes a loop over the block's
 *   warps whose body has loops over the warp's lanes; a warp operation is
 *   a step between them over the lanes' arguments (kernel_cpu.h), with the
 *   combination order of the fiber executor and CUDA.
 * - Local variables: those set at block level stay single values; those
 *   computed from the thread index alone are recomputed in each region;
 *   only variables live across a region boundary get per-thread storage.
 *
 * What it does not handle keeps the kernel on its old executor (fibers, or
 * a loop calling the kernel per thread when it has no barrier), with a
 * build note saying why: a barrier or warp operation inside a switch, in a
 * called helper, or inside &&, || or ?:; goto; uses of rewritten variables
 * inside macro bodies; types declared inside the kernel. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include "cpu_lower.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The dialect's warp collectives and the C types of their staging arrays. */
static const lw_op ops[] = {
    {"mox_warp_sum_f32", "float", NULL, "float"},
    {"mox_warp_sum_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_sum_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_min_f32", "float", NULL, "float"},
    {"mox_warp_min_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_min_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_max_f32", "float", NULL, "float"},
    {"mox_warp_max_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_max_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_and_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_and_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_or_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_or_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_xor_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_xor_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_inclusive_sum_f32", "float", NULL, "float"},
    {"mox_warp_inclusive_sum_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_inclusive_sum_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_exclusive_sum_f32", "float", NULL, "float"},
    {"mox_warp_exclusive_sum_u32", "uint32_t", NULL, "uint32_t"},
    {"mox_warp_exclusive_sum_i32", "int32_t", NULL, "int32_t"},
    {"mox_warp_shuffle_f32", "float", "uint32_t", "float"},
    {"mox_warp_shuffle_u32", "uint32_t", "uint32_t", "uint32_t"},
    {"mox_warp_shuffle_i32", "int32_t", "uint32_t", "int32_t"},
    {"mox_warp_shuffle_up_f32", "float", "uint32_t", "float"},
    {"mox_warp_shuffle_up_u32", "uint32_t", "uint32_t", "uint32_t"},
    {"mox_warp_shuffle_up_i32", "int32_t", "uint32_t", "int32_t"},
    {"mox_warp_shuffle_down_f32", "float", "uint32_t", "float"},
    {"mox_warp_shuffle_down_u32", "uint32_t", "uint32_t", "uint32_t"},
    {"mox_warp_shuffle_down_i32", "int32_t", "uint32_t", "int32_t"},
    {"mox_warp_shuffle_xor_f32", "float", "uint32_t", "float"},
    {"mox_warp_shuffle_xor_u32", "uint32_t", "uint32_t", "uint32_t"},
    {"mox_warp_shuffle_xor_i32", "int32_t", "uint32_t", "int32_t"},
    {"mox_warp_any", "bool", NULL, "bool"},
    {"mox_warp_all", "bool", NULL, "bool"},
    {"mox_warp_ballot", "bool", NULL, "uint64_t"},
};

const lw_op *lw_find_op(const char *name) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* ---------------- small helpers ---------------- */

void lw_fail(lw *L, CXCursor at, const char *fmt, ...) {
    if (L->failed)
        return;
    L->failed = true;
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    char *where = moxc__where(moxc__cursor_loc(at));
    L->why = moxc__printf("%s at %s", msg ? msg : "?", where ? where : "?");
    free(where);
    free(msg);
}

size_t lw_new_item(lw *L, lw_kind kind, int level, CXCursor cur) {
    if (!moxc__grow(&L->items, &L->item_cap, L->item_count + 1, sizeof *L->items)) {
        L->oom = L->failed = true;
        return LW_NONE;
    }
    lw_item *it = &L->items[L->item_count];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->level = level;
    it->cur = cur;
    it->flag = LW_NONE;
    it->owner = LW_NONE;
    it->target = LW_NONE;
    it->region = LW_NONE;
    it->init = it->cond = it->inc = clang_getNullCursor();
    return L->item_count++;
}

void lw_seq_push(lw *L, lw_seq *s, size_t item) {
    if (item == LW_NONE)
        return;
    if (!moxc__grow(&s->at, &s->cap, s->n + 1, sizeof *s->at)) {
        L->oom = L->failed = true;
        return;
    }
    s->at[s->n++] = item;
}

unsigned lw_offset(CXSourceLocation loc) {
    unsigned off = 0;
    moxc__expansion(loc, NULL, NULL, NULL, &off);
    return off;
}

bool lw_in_main(lw *L, CXSourceLocation loc) {
    CXFile file;
    moxc__expansion(loc, &file, NULL, NULL, NULL);
    return file && L->t->main_file && clang_File_isEqual(file, L->t->main_file);
}

CXCursor lw_strip(CXCursor c) {
    for (int guard = 0; guard < 64; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr)
            break;
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool one = ch.count == 1;
        if (one)
            c = ch.items[0];
        moxc__children_free(&ch);
        if (!one)
            break;
    }
    return c;
}

const char *lw_intrinsic(lw *L, CXCursor call, CXCursor *def) {
    static char name[96];
    if (def)
        *def = clang_getNullCursor();
    CXCursor ref = clang_getCursorReferenced(call);
    if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_FunctionDecl)
        return NULL;
    if (!moxc__is_intrinsic(L->t, ref)) {
        if (def)
            *def = clang_getCursorDefinition(ref);
        return NULL;
    }
    char *n = moxc__cxstr(clang_getCursorSpelling(ref));
    snprintf(name, sizeof name, "%s", n ? n : "");
    free(n);
    return name;
}

/* ---------------- preconditions ---------------- */

typedef struct scan {
    lw *L;
    bool cooperative;
    /* Called functions that contain barriers or warp operations: each
     * named once in the note, which points at the first call. */
    char *helpers;
    size_t helper_count;
    CXCursor first_call;
} scan;

/* Adds helper `name` to s->helpers ("'a', 'b'") unless listed already. */
static void note_helper(scan *s, CXCursor call, const char *name) {
    char *quoted = moxc__printf("'%s'", name);
    if (!quoted) {
        s->L->oom = s->L->failed = true;
        return;
    }
    const char *h = s->helpers;
    size_t qn = strlen(quoted);
    for (const char *at = h ? strstr(h, quoted) : NULL; at; at = strstr(at + 1, quoted))
        if ((at == h || at[-1] == ' ') && (at[qn] == ',' || at[qn] == '\0')) {
            free(quoted);
            return;
        }
    char *joined = h ? moxc__printf("%s, %s", h, quoted) : quoted;
    if (h)
        free(quoted);
    if (!joined) {
        s->L->oom = s->L->failed = true;
        return;
    }
    free(s->helpers);
    s->helpers = joined;
    if (s->helper_count++ == 0)
        s->first_call = call;
}

/* Barriers and warp calls (their offsets: where a return's continuation
 * looks), helpers that contain them, and goto. */
static enum CXChildVisitResult prescan(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    scan *s = data;
    lw *L = s->L;
    enum CXCursorKind k = clang_getCursorKind(c);
    if ((k == CXCursor_GotoStmt || k == CXCursor_IndirectGotoStmt || k == CXCursor_LabelStmt) &&
        s->cooperative) {
        lw_fail(L, c, "goto or a label in a kernel with barriers or warp operations");
        return CXChildVisit_Break;
    }
    if (k == CXCursor_CallExpr) {
        CXCursor def;
        const char *name = lw_intrinsic(L, c, &def);
        int coop = name ? moxc__intrinsic_coop(name) : MOXC_COOP_NONE;
        if (coop != MOXC_COOP_NONE) {
            if (!moxc__grow(&L->coop_offsets, &L->coop_cap, L->coop_count + 1, sizeof *L->coop_offsets) ||
                !(L->coop_levels = realloc(L->coop_levels, L->coop_cap * sizeof *L->coop_levels))) {
                L->oom = L->failed = true;
                return CXChildVisit_Break;
            }
            L->coop_offsets[L->coop_count] = lw_offset(moxc__cursor_start(c));
            L->coop_levels[L->coop_count++] = coop == MOXC_COOP_BLOCK ? LW_B : LW_W;
            if (coop == MOXC_COOP_WARP && !lw_find_op(name))
                lw_fail(L, c, "warp operation '%s' has no work-group form", name);
        } else if (!clang_Cursor_isNull(def)) {
            size_t fn = moxc__fn_index(L->t, def, false);
            if (fn != MOXC_NO_FN && L->t->fns[fn].coop != MOXC_COOP_NONE)
                note_helper(s, c, L->t->fns[fn].name);
        }
    }
    return L->failed ? CXChildVisit_Break : CXChildVisit_Recurse;
}

/* ---------------- driver ---------------- */

static void free_seq(lw_seq *s) {
    free(s->at);
}

static void lower_free(lw *L) {
    for (size_t i = 0; i < L->item_count; i++) {
        free_seq(&L->items[i].body);
        free_seq(&L->items[i].other);
        free_seq(&L->items[i].tail);
    }
    free(L->items);
    free(L->calls);
    for (size_t i = 0; i < L->var_count; i++)
        free(L->vars[i].name);
    free(L->vars);
    free(L->refs);
    free(L->jumps);
    free(L->statics);
    free_seq(&L->top);
    free(L->loops);
    free(L->coop_offsets);
    free(L->coop_levels);
    free(L->why);
}

static void lower_kernel(moxc__tu *t, size_t k, CXCursor fn, const char *text, size_t size) {
    moxc__front *f = t->front;
    moxc_cpu_plan *plan = &f->infos[k].cpu;
    lw L;
    memset(&L, 0, sizeof L);
    L.t = t;
    L.kernel = fn;
    L.abi = &f->kernels[k];
    L.text = text;
    L.text_size = size;
    L.threads = LW_MAX_THREADS;
    if (L.abi->has_required_block) {
        memcpy(L.block, L.abi->required_block, sizeof L.block);
        L.threads = L.block[0] * L.block[1] * L.block[2];
    }
    CXCursor body = moxc__function_body(fn);
    scan s = {&L, (L.abi->features & (MOX_KFEAT_BARRIER | MOX_KFEAT_WARP)) != 0, NULL, 0,
              clang_getNullCursor()};
    if (!text)
        lw_fail(&L, fn, "the source text is not available");
    else if (clang_Cursor_isNull(body))
        lw_fail(&L, fn, "the kernel has no body");
    else
        clang_visitChildren(body, prescan, &s);
    if (s.helper_count)
        lw_fail(&L, s.first_call, "a barrier or warp operation inside the called function%s %s",
                s.helper_count > 1 ? "s" : "", s.helpers);
    free(s.helpers);
    if (!L.failed)
        lw_build(&L, body);
    if (!L.failed)
        lw_vars(&L);
    char *out = L.failed ? NULL : lw_emit(&L);
    if (out) {
        plan->body = out;
        plan->stats = L.stats;
    } else {
        plan->note = L.oom ? moxc__strdup("out of memory while planning it")
                           : moxc__strdup(L.why ? L.why : "the work-group function could not be written");
    }
    lower_free(&L);
}

void moxc__cpu_lower(moxc__tu *t) {
    size_t size = 0;
    const char *text = t->main_file ? clang_getFileContents(t->tu, t->main_file, &size) : NULL;
    size_t kernels = t->front->kernel_count - t->first_kernel;
    for (size_t i = 0; i < kernels && i < t->kernel_cursor_count; i++)
        lower_kernel(t, t->first_kernel + i, t->kernel_cursors[i], text, size);
}
