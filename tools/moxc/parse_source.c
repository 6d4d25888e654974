/* parse_source.c - one kernel source: libclang parses it, clang's own
 * errors and warnings are printed (with the dialect's spelling of CUDA
 * names), the MOX_KERNEL definitions are found and their signatures read,
 * then the checks run over the translation unit and the CPU lowering plans
 * its kernels. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front_internal.h"

/* ---------------- clang's own diagnostics ---------------- */

/* Whether the token before byte `offset` of `file` is `extern` (as in
 * CUDA's `extern __shared__`). */
static bool extern_before(CXTranslationUnit tu, CXFile file, unsigned offset) {
    size_t size = 0;
    const char *text = file ? clang_getFileContents(tu, file, &size) : NULL;
    if (!text || offset > size)
        return false;
    size_t end = offset;
    while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n'))
        end--;
    if (end < 6 || strncmp(text + end - 6, "extern", 6) != 0)
        return false;
    char before = end > 6 ? text[end - 7] : ' ';
    return !(before == '_' || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
             (before >= '0' && before <= '9'));
}

/* Prints clang's errors and warnings; returns whether there was an error.
 * CUDA spellings get the dialect's equivalent (cuda_hints.c), and calls
 * without a declaration are errors: their arguments would be promoted to
 * double, and moxc cannot check what they do. */
static bool report_clang_diagnostics(moxc__front *f, CXTranslationUnit tu, const char *source) {
    bool failed = false;
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev == CXDiagnostic_Warning || sev == CXDiagnostic_Error || sev == CXDiagnostic_Fatal) {
            char *msg = moxc__cxstr(clang_getDiagnosticSpelling(d));
            CXFile file;
            unsigned line, col, offset;
            moxc__expansion(clang_getDiagnosticLocation(d), &file, &line, &col, &offset);
            bool error = false;
            char *better = msg ? moxc__clang_message(msg, extern_before(tu, file, offset), &error) : NULL;
            if (better) {
                free(msg);
                msg = better;
                if (error)
                    sev = CXDiagnostic_Error;
            }
            char *where = NULL;
            if (file) {
                char *name = moxc__cxstr(clang_getFileName(file));
                where = moxc__printf("%s:%u:%u", name ? name : source, line, col);
                free(name);
            }
            if (sev == CXDiagnostic_Warning) {
                char *text = moxc__printf("%s: warning: %s", where ? where : source, msg ? msg : "?");
                if (text)
                    moxc__print_line(f, text);
                free(text);
            } else {
                moxc__error_plain(f, where ? where : source, "%s", msg ? msg : "?");
                failed = true;
            }
            free(where);
            free(msg);
        }
        clang_disposeDiagnostic(d);
    }
    return failed;
}

/* ---------------- kernel discovery ---------------- */

static bool in_main_file(moxc__tu *t, CXCursor c) {
    CXFile file;
    moxc__expansion(moxc__cursor_loc(c), &file, NULL, NULL, NULL);
    return file && t->main_file && clang_File_isEqual(file, t->main_file);
}

static void add_kernel(moxc__tu *t, CXCursor c, const char *name) {
    moxc__front *f = t->front;
    for (size_t i = 0; i < f->kernel_count; i++) {
        if (strcmp(f->kernels[i].name, name) == 0) {
            moxc__error_at(f, moxc__cursor_loc(c), "duplicate kernel '%s' (first defined at %s)",
                           name, f->kernel_where[i] ? f->kernel_where[i] : "?");
            return;
        }
    }
    if (!moxc__grow(&f->kernels, &f->kernel_cap, f->kernel_count + 1, sizeof *f->kernels)) {
        moxc__error_at(f, moxc__cursor_loc(c), "out of memory");
        return;
    }
    size_t cap = f->kernel_cap;
    void *p1 = realloc(f->infos, cap * sizeof *f->infos);
    if (p1)
        f->infos = p1;
    void *p2 = realloc(f->kernel_where, cap * sizeof *f->kernel_where);
    if (p2)
        f->kernel_where = p2;
    if (!p1 || !p2 || !moxc__grow(&t->kernel_cursors, &t->kernel_cursor_cap,
                                  t->kernel_cursor_count + 1, sizeof(CXCursor))) {
        moxc__error_at(f, moxc__cursor_loc(c), "out of memory");
        return;
    }
    size_t i = f->kernel_count++;
    memset(&f->kernels[i], 0, sizeof f->kernels[i]);
    memset(&f->infos[i], 0, sizeof f->infos[i]);
    f->kernels[i].name = moxc__strdup(name);
    f->kernel_where[i] = moxc__where(moxc__cursor_loc(c));
    t->kernel_cursors[t->kernel_cursor_count++] = c;
    moxc__parse_kernel(t, c, &f->kernels[i], &f->infos[i]);
}

static enum CXChildVisitResult find_kernels(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    moxc__tu *t = data;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c))
        return CXChildVisit_Continue;
    char *mark = moxc__annotation(c, "mox_kernel");
    if (!mark)
        return CXChildVisit_Continue;
    bool exact = strcmp(mark, "mox_kernel") == 0;
    free(mark);
    if (!exact)
        return CXChildVisit_Continue;
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    if (!in_main_file(t, c))
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "kernel '%s' must be defined in a kernel source file, not in a header",
                       name ? name : "?");
    else if (name)
        add_kernel(t, c, name);
    free(name);
    return CXChildVisit_Continue;
}

/* ---------------- one translation unit ---------------- */

static void free_tu(moxc__tu *t) {
    for (size_t i = 0; i < t->fn_count; i++) {
        free(t->fns[i].name);
        free(t->fns[i].calls);
    }
    free(t->fns);
    free(t->kernel_cursors);
}

void moxc__parse_source(moxc__front *f, CXIndex index, size_t si, const char *const *args, int arg_count) {
    const char *source = f->opts->sources[si];
    if (!source || access(source, R_OK) != 0) {
        moxc__error_plain(f, source ? source : "moxc", "cannot read kernel source: %s",
                          source ? strerror(errno) : "null path");
        return;
    }
    CXTranslationUnit tu = NULL;
    unsigned flags = CXTranslationUnit_None;
    enum CXErrorCode rc =
        clang_parseTranslationUnit2(index, source, args, arg_count, NULL, 0, flags, &tu);
    if (rc != CXError_Success || !tu) {
        moxc__error_plain(f, source, "libclang could not parse this file (error %d)", (int)rc);
        return;
    }
    moxc__tu t;
    memset(&t, 0, sizeof t);
    t.front = f;
    t.tu = tu;
    t.source = source;
    t.source_real = f->source_real[si];
    t.main_file = clang_getFile(tu, source);
    t.first_kernel = f->kernel_count;
    moxc__collect_dependencies(&t);
    if (!report_clang_diagnostics(f, tu, source)) {
        clang_visitChildren(clang_getTranslationUnitCursor(tu), find_kernels, &t);
        for (size_t k = t.first_kernel; k < f->kernel_count; k++) {
            free(f->infos[k].file);
            f->infos[k].file = moxc__strdup(t.source_real ? t.source_real : source);
        }
        moxc__check_file_scope(&t);
        moxc__check_cxx(&t);
        moxc__check_calls(&t);
        moxc__check_spin(&t);
        moxc__check_uniform(&t);
        moxc__collect_edits(&t, &f->edits[si]);
        if (f->errors == 0) {
            moxc__cpu_lower(&t);
            moxc__gate_defer(&t);
        }
    }
    free_tu(&t);
    clang_disposeTranslationUnit(tu);
}
