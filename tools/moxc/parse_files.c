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

typedef struct edit_state {
    moxc__tu *t;
    size_t *offsets;
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
    if (!moxc__grow(&st->offsets, &st->cap, st->count + 1, sizeof(size_t))) {
        st->failed = true;
        return CXChildVisit_Break;
    }
    st->offsets[st->count++] = offset;
    return CXChildVisit_Continue;
}

static int compare_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

bool moxc__collect_edits(moxc__tu *t, moxc_source_edit *edit) {
    edit_state st = {t, NULL, 0, 0, false};
    clang_visitChildren(clang_getTranslationUnitCursor(t->tu), edit_visit, &st);
    if (st.count)
        qsort(st.offsets, st.count, sizeof(size_t), compare_size);
    size_t unique = 0;
    for (size_t i = 0; i < st.count; i++)
        if (unique == 0 || st.offsets[unique - 1] != st.offsets[i])
            st.offsets[unique++] = st.offsets[i];
    edit->path = moxc__strdup(t->source_real ? t->source_real : t->source);
    edit->offsets = st.offsets;
    edit->offset_count = unique;
    if (st.failed || !edit->path) {
        moxc__error_plain(t->front, t->source, "out of memory");
        return false;
    }
    return true;
}
