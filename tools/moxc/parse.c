/* parse.c - moxc_parse(): runs libclang over each kernel source, finds the
 * MOX_KERNEL definitions, runs the checks, and assembles the module (ABI,
 * records, dependencies, CUDA edits). Every problem becomes a
 * "file:line:col: error: ..." line; nothing is trusted to be well formed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <errno.h>
#include <stdio.h>
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

static void process_source(moxc__front *f, CXIndex index, size_t si, const char *const *args,
                           int arg_count) {
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
        moxc__check_uniform(&t);
        moxc__collect_edits(&t, &f->edits[si]);
        if (f->errors == 0)
            moxc__cpu_lower(&t);
    }
    free_tu(&t);
    clang_disposeTranslationUnit(tu);
}

/* ---------------- module assembly and cleanup ---------------- */

static void free_kernel_info(moxc_kernel_info *info, size_t param_count) {
    if (info->params)
        for (size_t p = 0; p < param_count; p++)
            free(info->params[p].c_spelling);
    free(info->params);
    free(info->file);
    free(info->cpu.body);
    free(info->cpu.note);
}

static void free_front(moxc__front *f) {
    for (size_t i = 0; i < f->kernel_count; i++) {
        free_kernel_info(&f->infos[i], f->kernels[i].param_count);
        mox_abi_kernel *k = &f->kernels[i];
        for (size_t p = 0; k->params && p < k->param_count; p++) {
            free(k->params[p].name);
            mox_abi_layout_free(k->params[p].layout);
        }
        free(k->params);
        free(k->name);
        free(f->kernel_where[i]);
    }
    free(f->kernels);
    free(f->infos);
    free(f->kernel_where);
    for (size_t i = 0; i < f->record_count; i++) {
        free(f->records[i].pub.name);
        free(f->records[i].pub.c_spelling);
        free(f->records[i].pub.header);
        mox_abi_layout_free(f->records[i].layout);
    }
    free(f->records);
    for (size_t i = 0; i < f->dep_count; i++)
        free(f->deps[i]);
    free(f->deps);
    for (size_t i = 0; f->edits && i < f->opts->source_count; i++) {
        free(f->edits[i].path);
        free(f->edits[i].offsets);
    }
    free(f->edits);
    moxc__line_set_free(&f->printed);
    moxc__line_set_free(&f->keyword_at);
    for (size_t i = 0; f->source_real && i < f->opts->source_count; i++)
        free(f->source_real[i]);
    free(f->source_real);
    free(f->mox_include_real);
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Moves the built pieces into a module; the front keeps nothing it gave away. */
static moxc_module *assemble(moxc__front *f) {
    moxc_module *m = calloc(1, sizeof *m);
    mox_abi *abi = calloc(1, sizeof *abi);
    moxc_record *records = f->record_count ? calloc(f->record_count, sizeof *records) : NULL;
    if (!m || !abi || (f->record_count && !records)) {
        free(m);
        free(abi);
        free(records);
        return NULL;
    }
    abi->required_features = f->required_features;
    abi->kernels = f->kernels;
    abi->kernel_count = f->kernel_count;
    /* The lowest version that holds it: modules without the version-2
     * constructs keep their version-1 text and hash. */
    abi->version = mox_abi_required_version(abi);
    m->abi = abi;
    m->kernels = f->infos;
    for (size_t i = 0; i < f->record_count; i++) {
        records[i] = f->records[i].pub;
        mox_abi_layout_free(f->records[i].layout);
    }
    free(f->records);
    m->records = records;
    m->record_count = f->record_count;
    qsort(f->deps, f->dep_count, sizeof *f->deps, compare_strings);
    size_t unique = 0;
    for (size_t i = 0; i < f->dep_count; i++) {
        if (unique && strcmp(f->deps[unique - 1], f->deps[i]) == 0)
            free(f->deps[i]);
        else
            f->deps[unique++] = f->deps[i];
    }
    m->dependencies = f->deps;
    m->dependency_count = unique;
    m->edits = f->edits;
    m->edit_count = f->opts->source_count;
    for (size_t i = 0; i < f->kernel_count; i++)
        free(f->kernel_where[i]);
    free(f->kernel_where);
    f->kernels = NULL;
    f->infos = NULL;
    f->kernel_where = NULL;
    f->kernel_count = 0;
    f->records = NULL;
    f->record_count = 0;
    f->deps = NULL;
    f->dep_count = 0;
    f->edits = NULL;
    return m;
}

static char **build_args(const moxc_parse_options *opts, int *count) {
    size_t n = 4 + 2 * (1 + opts->include_dir_count + opts->define_count);
    char **args = calloc(n, sizeof *args);
    if (!args)
        return NULL;
    int i = 0;
    args[i++] = moxc__strdup("-x");
    args[i++] = moxc__strdup("c");
    args[i++] = moxc__strdup("-std=c11");
    args[i++] = moxc__strdup("-D__MOXC__");
    if (opts->mox_include_dir)
        args[i++] = moxc__printf("-I%s", opts->mox_include_dir);
    for (size_t d = 0; opts->include_dirs && d < opts->include_dir_count; d++)
        args[i++] = moxc__printf("-I%s", opts->include_dirs[d] ? opts->include_dirs[d] : ".");
    for (size_t d = 0; opts->defines && d < opts->define_count; d++)
        args[i++] = moxc__printf("-D%s", opts->defines[d] ? opts->defines[d] : "");
    *count = i;
    for (int a = 0; a < i; a++) {
        if (!args[a]) {
            for (int b = 0; b < i; b++)
                free(args[b]);
            free(args);
            return NULL;
        }
    }
    return args;
}

static char *join_sources(const moxc_parse_options *opts) {
    char *s = moxc__strdup("");
    for (size_t i = 0; s && i < opts->source_count; i++) {
        char *n = moxc__printf("%s%s%s", s, i ? ", " : "", opts->sources[i] ? opts->sources[i] : "?");
        free(s);
        s = n;
    }
    return s;
}

bool moxc_parse(const moxc_parse_options *opts, moxc_module **out) {
    if (out)
        *out = NULL;
    if (!opts || !out)
        return false;
    moxc__front f;
    memset(&f, 0, sizeof f);
    f.opts = opts;
    f.diag = opts->diagnostics;
    if (opts->source_count == 0 || !opts->sources) {
        moxc__error_plain(&f, "moxc", "no kernel sources given");
        free_front(&f);
        return false;
    }
    if (opts->mox_include_dir)
        f.mox_include_real = realpath(opts->mox_include_dir, NULL);
    f.source_real = calloc(opts->source_count, sizeof *f.source_real);
    f.edits = calloc(opts->source_count, sizeof *f.edits);
    int arg_count = 0;
    char **args = build_args(opts, &arg_count);
    CXIndex index = clang_createIndex(0, 0);
    if (!f.source_real || !f.edits || !args || !index) {
        moxc__error_plain(&f, "moxc", "out of memory");
    } else {
        for (size_t i = 0; i < opts->source_count; i++)
            f.source_real[i] = opts->sources[i] ? realpath(opts->sources[i], NULL) : NULL;
        for (size_t i = 0; i < opts->source_count; i++)
            process_source(&f, index, i, (const char *const *)args, arg_count);
    }
    if (index)
        clang_disposeIndex(index);
    for (int a = 0; args && a < arg_count; a++)
        free(args[a]);
    free(args);

    if (f.errors == 0 && f.kernel_count == 0) {
        char *list = join_sources(opts);
        moxc__error_plain(&f, "moxc", "no MOX_KERNEL functions in %s", list ? list : "the sources");
        free(list);
    }
    for (size_t i = 0; i < f.kernel_count; i++) {
        if (f.kernels[i].features & MOX_KFEAT_ATOMICS)
            f.required_features |= MOX_FEAT_ATOMICS;
        if (f.kernels[i].features & MOX_KFEAT_WARP)
            f.required_features |= MOX_FEAT_WARP_OPS;
    }
    moxc_module *m = NULL;
    if (f.errors == 0) {
        m = assemble(&f);
        if (!m) {
            moxc__error_plain(&f, "moxc", "out of memory");
        } else {
            mox_artifact_error err;
            memset(&err, 0, sizeof err);
            if (!mox_abi_validate(m->abi, &err)) {
                moxc__error_plain(&f, "moxc", "invalid kernel ABI: %s", err.message);
                moxc_module_free(m);
                m = NULL;
            }
        }
    }
    free_front(&f);
    *out = m;
    return m != NULL;
}

void moxc_module_free(moxc_module *m) {
    if (!m)
        return;
    if (m->abi) {
        for (size_t i = 0; m->kernels && i < m->abi->kernel_count; i++)
            free_kernel_info(&m->kernels[i], m->abi->kernels[i].param_count);
        mox_abi_free(m->abi);
    }
    free(m->kernels);
    for (size_t i = 0; i < m->record_count; i++) {
        free(m->records[i].name);
        free(m->records[i].c_spelling);
        free(m->records[i].header);
    }
    free(m->records);
    for (size_t i = 0; i < m->dependency_count; i++)
        free(m->dependencies[i]);
    free(m->dependencies);
    for (size_t i = 0; i < m->edit_count; i++) {
        free(m->edits[i].path);
        free(m->edits[i].offsets);
    }
    free(m->edits);
    free(m);
}
