/* parse_module.c - the end of moxc_parse(): the parsed kernels, records,
 * dependencies and CUDA edits handed over into a moxc_module (ABI version,
 * sorted unique dependencies), and freeing the front's state or a module. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

static void free_kernel_info(moxc_kernel_info *info, size_t param_count) {
    if (info->params)
        for (size_t p = 0; p < param_count; p++)
            free(info->params[p].c_spelling);
    free(info->params);
    free(info->file);
    free(info->cpu.body);
    free(info->cpu.note);
    moxc__gate_defer_free(&info->gate);
}

void moxc__free_front(moxc__front *f) {
    moxc__diag_order_flush(&f->held, f->diag);
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
moxc_module *moxc__assemble_module(moxc__front *f) {
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
