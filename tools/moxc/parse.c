/* parse.c - moxc_parse(): runs libclang over each kernel source
 * (parse_source.c: finds the MOX_KERNEL definitions, runs the checks), and
 * assembles the module (parse_module.c: ABI, records, dependencies, CUDA
 * edits). Every problem becomes a "file:line:col: error: ..." line; nothing
 * is trusted to be well formed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* realpath */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

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
        moxc__free_front(&f);
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
            moxc__parse_source(&f, index, i, (const char *const *)args, arg_count);
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
        m = moxc__assemble_module(&f);
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
    moxc__free_front(&f);
    *out = m;
    return m != NULL;
}
