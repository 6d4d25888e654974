/* check_calls.c - the call graph of a translation unit's kernels: which
 * defined functions each kernel reaches, recursion among them, the features
 * each kernel needs, which dialect and <math.h> calls are allowed without a
 * definition, and the file-scope rules of a kernel source. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

/* C's single-precision <math.h> functions: nvcc and the host C library
 * provide them, so kernels may call them without a visible definition. */
static const char *const math_functions[] = {
    "acosf", "acoshf", "asinf", "asinhf", "atanf", "atan2f", "atanhf", "cbrtf", "ceilf",
    "copysignf", "cosf", "coshf", "erff", "erfcf", "exp10f", "exp2f", "expf", "expm1f", "fabsf", "fdimf",
    "floorf", "fmaf", "fmaxf", "fminf", "fmodf", "frexpf", "hypotf", "ilogbf", "ldexpf",
    "lgammaf", "log10f", "log1pf", "log2f", "logbf", "logf", "modff", "nearbyintf", "nextafterf",
    "powf", "remainderf", "remquof", "rintf", "roundf", "scalbnf", "sinf", "sinhf", "sqrtf", "tanf",
    "tanhf", "tgammaf", "truncf",
};

bool moxc__is_math_function(const char *name) {
    for (size_t i = 0; i < sizeof math_functions / sizeof math_functions[0]; i++)
        if (strcmp(name, math_functions[i]) == 0)
            return true;
    return false;
}

bool moxc__is_intrinsic(moxc__tu *t, CXCursor decl) {
    char *name = moxc__cxstr(clang_getCursorSpelling(decl));
    bool yes = name && moxc__starts_with(name, "mox_") &&
               moxc__in_mox_include(t->front, moxc__cursor_loc(clang_getCanonicalCursor(decl)));
    free(name);
    return yes;
}

/* Warp-level queries that are not collectives (no participation needed). */
static bool is_warp_query(const char *name) {
    return strcmp(name, "mox_lane_id") == 0 || strcmp(name, "mox_warp_id") == 0 ||
           strcmp(name, "mox_warp_size") == 0 || strcmp(name, "mox_warps_per_block") == 0;
}

uint32_t moxc__intrinsic_features(const char *name) {
    if (strcmp(name, "mox_barrier") == 0)
        return MOX_KFEAT_BARRIER;
    if (moxc__starts_with(name, "mox_warp_") || is_warp_query(name))
        return MOX_KFEAT_WARP;
    if (moxc__starts_with(name, "mox_atomic_"))
        return MOX_KFEAT_ATOMICS;
    if (strcmp(name, "mox_fail") == 0)
        return MOX_KFEAT_FAIL;
    if (moxc__starts_with(name, "mox_f16_"))
        return MOX_KFEAT_F16;
    if (strcmp(name, "mox__dynamic_shared") == 0)
        return MOX_KFEAT_SHARED | MOX_KFEAT_DYNAMIC_SHARED;
    return 0;
}

int moxc__intrinsic_coop(const char *name) {
    if (strcmp(name, "mox_barrier") == 0)
        return MOXC_COOP_BLOCK;
    if (moxc__starts_with(name, "mox_warp_") && !is_warp_query(name))
        return MOXC_COOP_WARP;
    return MOXC_COOP_NONE;
}

size_t moxc__fn_index(moxc__tu *t, CXCursor def, bool add) {
    for (size_t i = 0; i < t->fn_count; i++)
        if (clang_equalCursors(t->fns[i].cursor, def))
            return i;
    if (!add)
        return MOXC_NO_FN;
    if (!moxc__grow(&t->fns, &t->fn_cap, t->fn_count + 1, sizeof *t->fns)) {
        moxc__error_at(t->front, moxc__cursor_loc(def), "out of memory");
        return MOXC_NO_FN;
    }
    moxc__fn *f = &t->fns[t->fn_count];
    memset(f, 0, sizeof *f);
    f->cursor = def;
    f->name = moxc__cxstr(clang_getCursorSpelling(def));
    if (!f->name) {
        moxc__error_at(t->front, moxc__cursor_loc(def), "out of memory");
        return MOXC_NO_FN;
    }
    return t->fn_count++;
}

/* A helper that kernels call, defined outside the kernel source (in a
 * header): moxc inserts __device__ only into the source itself, so it must
 * carry MOX_DEVICE, or nvcc refuses the call (a host function called from
 * device code) - on a machine with nvcc only. */
static void check_header_helper(moxc__tu *t, const moxc__fn *f) {
    CXFile file;
    moxc__expansion(moxc__cursor_start(f->cursor), &file, NULL, NULL, NULL);
    CXSourceLocation loc = moxc__cursor_loc(f->cursor);
    if (!file || (t->main_file && clang_File_isEqual(file, t->main_file)) || clang_Location_isInSystemHeader(loc) ||
        moxc__in_mox_include(t->front, loc))
        return;
    char *marker = moxc__annotation(f->cursor, "mox_device");
    if (!marker)
        moxc__error_at(t->front, loc,
                       "helper '%s' is defined in a header without MOX_DEVICE; kernels call it, and for CUDA "
                       "moxc marks only the functions of the kernel source itself: write "
                       "'MOX_DEVICE static inline ...' in the header",
                       f->name);
    free(marker);
}

/* ---------------- recursion ---------------- */

typedef struct dfs {
    moxc__tu *t;
    unsigned char *color; /* 0 unseen, 1 on the stack, 2 done */
    size_t *stack;
    size_t depth;
} dfs;

static void report_cycle(dfs *d, size_t callee, CXCursor site) {
    char *path = moxc__strdup("");
    size_t from = 0;
    for (size_t i = 0; i < d->depth; i++)
        if (d->stack[i] == callee)
            from = i;
    for (size_t i = from; path && i < d->depth; i++) {
        char *n = moxc__printf("%s%s -> ", path, d->t->fns[d->stack[i]].name);
        free(path);
        path = n;
    }
    moxc__error_at(d->t->front, moxc__cursor_loc(site),
                   "recursion is not supported in kernels: %s%s", path ? path : "",
                   d->t->fns[callee].name);
    free(path);
}

static void visit(dfs *d, size_t i) {
    d->color[i] = 1;
    d->stack[d->depth++] = i;
    moxc__fn *f = &d->t->fns[i];
    for (size_t c = 0; c < f->call_count; c++) {
        size_t j = f->calls[c].callee;
        if (d->color[j] == 1)
            report_cycle(d, j, f->calls[c].site);
        else if (d->color[j] == 0)
            visit(d, j);
    }
    d->depth--;
    d->color[i] = 2;
}

/* Features and cooperative needs of everything reachable from `i`. */
static void close_over(moxc__tu *t, size_t i, unsigned char *seen, uint32_t *features, int *coop) {
    seen[i] = 1;
    *features |= t->fns[i].direct_features;
    if (t->fns[i].coop_direct > *coop)
        *coop = t->fns[i].coop_direct;
    for (size_t c = 0; c < t->fns[i].call_count; c++)
        if (!seen[t->fns[i].calls[c].callee])
            close_over(t, t->fns[i].calls[c].callee, seen, features, coop);
}

void moxc__check_calls(moxc__tu *t) {
    size_t kernels = t->front->kernel_count - t->first_kernel;
    for (size_t k = 0; k < kernels && k < t->kernel_cursor_count; k++) {
        size_t idx = moxc__fn_index(t, t->kernel_cursors[k], true);
        if (idx == MOXC_NO_FN)
            return;
        t->fns[idx].is_kernel = true;
        t->fns[idx].kernel = t->first_kernel + k;
    }
    /* walking a body appends the functions it calls */
    for (size_t i = 0; i < t->fn_count; i++)
        moxc__check_body(t, i);
    for (size_t i = 0; i < t->fn_count; i++)
        if (!t->fns[i].is_kernel)
            check_header_helper(t, &t->fns[i]);

    size_t n = t->fn_count;
    if (n == 0)
        return;
    dfs d = {t, calloc(n, 1), calloc(n, sizeof(size_t)), 0};
    unsigned char *seen = calloc(n, 1);
    if (!d.color || !d.stack || !seen) {
        moxc__error_plain(t->front, t->source, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++)
            if (t->fns[i].is_kernel && d.color[i] == 0)
                visit(&d, i);
        for (size_t i = 0; i < n; i++) {
            memset(seen, 0, n);
            t->fns[i].features = 0;
            t->fns[i].coop = MOXC_COOP_NONE;
            close_over(t, i, seen, &t->fns[i].features, &t->fns[i].coop);
            if (t->fns[i].is_kernel)
                t->front->kernels[t->fns[i].kernel].features |= t->fns[i].features;
        }
    }
    free(d.color);
    free(d.stack);
    free(seen);
}

/* ---------------- file scope ---------------- */

typedef struct scope_walk {
    moxc__tu *t;
    bool in_kernel;
} scope_walk;


/* Finds MOX_SHARED declarations inside function bodies that are not kernels. */
static enum CXChildVisitResult find_shared(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    scope_walk *s = data;
    if (clang_getCursorKind(c) == CXCursor_VarDecl && !s->in_kernel) {
        if (moxc__is_shared_array(c)) {
            char *name = moxc__cxstr(clang_getCursorSpelling(c));
            moxc__error_at(s->t->front, moxc__cursor_loc(c),
                           "MOX_SHARED '%s' must be declared in a kernel body, not in a helper function",
                           name ? name : "?");
            free(name);
        }
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult file_scope_decl(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    moxc__tu *t = data;
    CXFile file;
    moxc__expansion(moxc__cursor_loc(c), &file, NULL, NULL, NULL);
    if (!file || !t->main_file || !clang_File_isEqual(file, t->main_file))
        return CXChildVisit_Continue;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_VarDecl) {
        char *name = moxc__cxstr(clang_getCursorSpelling(c));
        char *shared = moxc__annotation(c, "mox_shared");
        if (shared)
            moxc__error_at(t->front, moxc__cursor_loc(c),
                           "MOX_SHARED '%s' must be declared in a kernel body, not at file scope",
                           name ? name : "?");
        else if (!moxc__is_const_object(clang_getCursorType(c)))
            moxc__error_at(t->front, moxc__cursor_loc(c),
                           "file-scope mutable variables are not supported in kernel sources: '%s' (make it const)",
                           name ? name : "?");
        free(shared);
        free(name);
    } else if (k == CXCursor_FunctionDecl && clang_isCursorDefinition(c)) {
        scope_walk s = {t, false};
        for (size_t i = 0; i < t->kernel_cursor_count; i++)
            if (clang_equalCursors(t->kernel_cursors[i], c))
                s.in_kernel = true;
        clang_visitChildren(c, find_shared, &s);
    }
    return CXChildVisit_Continue;
}

/* glibc's feature-test macros: they only act when defined before the first
 * system header. */
static bool is_feature_macro(const char *name) {
    size_t n = strlen(name);
    return (name[0] == '_' && n > 7 && strcmp(name + n - 7, "_SOURCE") == 0) ||
           strcmp(name, "_FILE_OFFSET_BITS") == 0 || strcmp(name, "_TIME_BITS") == 0 ||
           strcmp(name, "_REENTRANT") == 0 || strcmp(name, "_THREAD_SAFE") == 0 ||
           moxc__starts_with(name, "__STDC_WANT_");
}

/* `#define _GNU_SOURCE` in a kernel source: moxc's front end parses each
 * source alone, so it takes effect there, but the CPU translation unit
 * includes <mox/kernel.h> (and every source) first, where it comes too late:
 * declarations the front end saw would be missing. */
static void check_feature_macros(moxc__tu *t) {
    size_t size = 0;
    if (!t->main_file || !clang_getFileContents(t->tu, t->main_file, &size))
        return;
    CXSourceRange all = clang_getRange(clang_getLocationForOffset(t->tu, t->main_file, 0),
                                       clang_getLocationForOffset(t->tu, t->main_file, (unsigned)size));
    CXToken *tok = NULL;
    unsigned count = 0;
    clang_tokenize(t->tu, all, &tok, &count);
    for (unsigned i = 0; i + 2 < count; i++) {
        char *hash = moxc__cxstr(clang_getTokenSpelling(t->tu, tok[i]));
        char *def = hash && strcmp(hash, "#") == 0 ? moxc__cxstr(clang_getTokenSpelling(t->tu, tok[i + 1])) : NULL;
        char *name = def && strcmp(def, "define") == 0 ? moxc__cxstr(clang_getTokenSpelling(t->tu, tok[i + 2])) : NULL;
        if (name && is_feature_macro(name))
            moxc__error_at(t->front, clang_getTokenLocation(t->tu, tok[i + 2]),
                           "defining %s in a kernel source is not supported: the CPU translation unit includes "
                           "<mox/kernel.h> before the kernel sources, where it would come too late; pass it to "
                           "moxc instead (-D%s; DEFINES %s in mox_add_kernels), which defines it for parsing "
                           "and both compilers",
                           name, name, name);
        free(name);
        free(def);
        free(hash);
    }
    if (tok)
        clang_disposeTokens(t->tu, tok, count);
}

void moxc__check_file_scope(moxc__tu *t) {
    check_feature_macros(t);
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), file_scope_decl, t);
}
