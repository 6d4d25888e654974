/* manifest_cpu.c - the manifest's "cpu" section: how the CPU backend runs
 * each kernel of the artifact (moxc's work-group function of region loops,
 * a loop calling the kernel per thread, or fibers) and moxc's note on why
 * a kernel is not run as loops (docs/abi.md). */
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"
#include "manifest.h"

static const char *const executors[] = {"loops", "thread-calls", "fibers"};
static const char *const cpu_keys[] = {"kernels"};
static const char *const kernel_keys[] = {"name", "executor", "note"};

void mox__manifest_free_cpu(mox_manifest *m)
{
    for (size_t i = 0; m->cpu_kernels && i < m->cpu_kernel_count; i++) {
        mox__free(m->cpu_kernels[i].name);
        mox__free(m->cpu_kernels[i].executor);
        mox__free(m->cpu_kernels[i].note);
    }
    mox__free(m->cpu_kernels);
    m->cpu_kernels = NULL;
    m->cpu_kernel_count = 0;
}

static bool read_kernel(const json_t *v, size_t i, mox_manifest_cpu_kernel *k, mox_artifact_error *err)
{
    char what[96];
    mox__format(what, sizeof what, "manifest cpu.kernels[%zu]", i);
    if (!mox__json_object(v, what, kernel_keys, 3, err) || !mox__json_strdup(v, "name", what, &k->name, err) ||
        !mox__json_strdup(v, "executor", what, &k->executor, err))
        return false;
    const json_t *note = json_object_get(v, "note");
    if (json_is_null(note))
        return true;
    if (!json_is_string(note))
        return mox__fail(err, "%s: field \"note\" must be a string or null", what);
    return (k->note = mox__strdup(json_string_value(note))) != NULL ||
           mox__fail_oom(err, "out of memory reading %s", what);
}

bool mox__manifest_read_cpu(const json_t *cpu, mox_manifest *m, mox_artifact_error *err)
{
    if (!mox__json_object(cpu, "manifest cpu", cpu_keys, 1, err))
        return false;
    const json_t *list = json_object_get(cpu, "kernels");
    if (!json_is_array(list))
        return mox__fail(err, "manifest cpu: field \"kernels\" must be an array");
    size_t n = json_array_size(list);
    if (n && !(m->cpu_kernels = mox__calloc(n, sizeof *m->cpu_kernels)))
        return mox__fail_oom(err, "out of memory reading the manifest's cpu section");
    m->cpu_kernel_count = n;
    for (size_t i = 0; i < n; i++)
        if (!read_kernel(json_array_get(list, i), i, &m->cpu_kernels[i], err))
            return false;
    return true;
}

bool mox__manifest_check_cpu(const mox_manifest *m, mox_artifact_error *err)
{
    if (m->cpu_kernel_count != m->abi->kernel_count)
        return mox__fail(err, "manifest cpu: %zu kernels, the ABI has %zu", m->cpu_kernel_count,
                         m->abi->kernel_count);
    for (size_t i = 0; i < m->cpu_kernel_count; i++) {
        const mox_manifest_cpu_kernel *k = &m->cpu_kernels[i];
        const mox_abi_kernel *a = &m->abi->kernels[i];
        if (strcmp(k->name, a->name) != 0)
            return mox__fail(err, "manifest cpu.kernels[%zu]: \"%s\" is not the ABI's kernel %zu (\"%s\")", i,
                             k->name, i, a->name);
        int e = -1;
        for (int x = 0; x < 3; x++)
            if (strcmp(k->executor, executors[x]) == 0)
                e = x;
        if (e < 0)
            return mox__fail(err, "manifest cpu.kernels[%zu]: unknown executor \"%s\" (loops, thread-calls or fibers)",
                             i, k->executor);
        bool cooperative = (a->features & (MOX_KFEAT_BARRIER | MOX_KFEAT_WARP)) != 0;
        if (e == 1 && cooperative)
            return mox__fail(err, "manifest cpu.kernels[%zu]: kernel %s has barriers or warp operations, so it "
                             "cannot run as thread-calls", i, a->name);
        if (e == 2 && !cooperative)
            return mox__fail(err, "manifest cpu.kernels[%zu]: kernel %s has no barrier or warp operation, so it "
                             "does not run on fibers", i, a->name);
    }
    return true;
}

json_t *mox__manifest_cpu_to_value(const mox_manifest *m)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < m->cpu_kernel_count; i++) {
        const mox_manifest_cpu_kernel *k = &m->cpu_kernels[i];
        /* "s" fails on a NULL name or executor; only the note may be null. */
        json_t *item = json_pack("{s:s,s:s,s:s?}", "name", k->name, "executor", k->executor, "note",
                                 k->note);
        if (!item || json_array_append_new(list, item) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list ? json_pack("{s:o}", "kernels", list) : NULL;
}
