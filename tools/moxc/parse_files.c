/* parse_files.c - what a translation unit read (the build fingerprint's
 * dependencies) and where the CUDA translation unit must insert
 * "__device__ " (start of each file-scope function and variable declaration
 * written in the kernel source itself). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

static void add_inclusion(CXFile file, CXSourceLocation *stack, unsigned depth, CXClientData data) {
    (void)stack;
    (void)depth;
    moxc__tu *t = data;
    moxc__front *f = t->front;
    char *path = moxc__file_real(file);
    if (!path)
        return;
    if (!moxc__grow(&f->deps, &f->dep_cap, f->dep_count + 1, sizeof(char *))) {
        free(path);
        return;
    }
    f->deps[f->dep_count++] = path;
}

void moxc__collect_dependencies(moxc__tu *t) {
    clang_getInclusions(t->tu, add_inclusion, t);
}

/* One declaration's insertion point. */
typedef struct edit_point {
    size_t offset;
    CXCursor decl;
} edit_point;

typedef struct edit_state {
    moxc__tu *t;
    edit_point *points;
    size_t count, cap;
    bool failed;
} edit_state;

static enum CXChildVisitResult edit_visit(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    edit_state *st = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind != CXCursor_FunctionDecl && kind != CXCursor_VarDecl)
        return CXChildVisit_Continue;
    /* The expansion location of the extent's start is the macro use when
     * the declaration comes from a macro, and otherwise its first token
     * (including leading attributes such as MOX_KERNEL). */
    CXFile file;
    unsigned offset;
    moxc__expansion(moxc__cursor_start(c), &file, NULL, NULL, &offset);
    if (!file || !st->t->main_file || !clang_File_isEqual(file, st->t->main_file))
        return CXChildVisit_Continue;
    if (!moxc__grow(&st->points, &st->cap, st->count + 1, sizeof *st->points)) {
        st->failed = true;
        return CXChildVisit_Break;
    }
    edit_point *p = &st->points[st->count++];
    p->offset = offset;
    p->decl = c;
    return CXChildVisit_Continue;
}

static bool is_function_definition(CXCursor c) {
    return clang_getCursorKind(c) == CXCursor_FunctionDecl && clang_isCursorDefinition(c);
}

static int compare_points(const void *a, const void *b) {
    const edit_point *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

bool moxc__collect_edits(moxc__tu *t, moxc_source_edit *edit) {
    edit_state st = {t, NULL, 0, 0, false};
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), edit_visit, &st);
    if (st.count)
        qsort(st.points, st.count, sizeof *st.points, compare_points);
    size_t *offsets = st.count ? malloc(st.count * sizeof *offsets) : NULL;
    size_t unique = 0;
    for (size_t i = 0; offsets && i < st.count; i++) {
        edit_point *p = &st.points[i];
        if (unique && offsets[unique - 1] == p->offset) {
            /* Several declarators of one declaration share one __device__,
             * but a function definition stands alone in its declaration:
             * two points at one offset with a definition among them are
             * separate declarations from one macro use. */
            edit_point *q = &st.points[i - 1];
            if (is_function_definition(p->decl) || is_function_definition(q->decl)) {
                char *a = moxc__cxstr(clang_getCursorSpelling(q->decl));
                char *b = moxc__cxstr(clang_getCursorSpelling(p->decl));
                moxc__error_at(t->front, moxc__cursor_start(p->decl),
                               "one macro use declares both '%s' and '%s'; moxc can mark only one declaration per macro use for CUDA, so declare them with separate macro uses",
                               a ? a : "?", b ? b : "?");
                free(a);
                free(b);
            }
            continue;
        }
        offsets[unique++] = p->offset;
    }
    free(st.points);
    edit->path = moxc__strdup(t->source_real ? t->source_real : t->source);
    edit->offsets = offsets;
    edit->offset_count = unique;
    if (st.failed || !edit->path || (st.count && !offsets)) {
        moxc__error_plain(t->front, t->source, "out of memory");
        return false;
    }
    return true;
}
