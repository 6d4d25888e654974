/* build.c - turns a plan into an artifact: generates the texts, compiles
 * kernels_cpu.so with the host C compiler and kernels.fatbin with nvcc (no
 * shell: argument vectors), hashes every file into manifest.json; and the
 * `moxc build` command around it (cache, bindings copy, depfile). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "manifest.h"
#include "sha256.h"

/* File names inside an artifact directory, by role. */
static const char *file_name(mox_artifact_file f, const char *module, char *scratch, size_t size)
{
    switch (f) {
    case MOX_FILE_ABI_JSON: return "abi.json";
    case MOX_FILE_FATBIN: return "kernels.fatbin";
    case MOX_FILE_CPU_SO: return "kernels_cpu.so";
    case MOX_FILE_CUDA_TU: return "kernels_cuda.cu";
    case MOX_FILE_CPU_TU: return "kernels_cpu.c";
    case MOX_FILE_BINDINGS_H: snprintf(scratch, size, "%s.h", module); return scratch;
    case MOX_FILE_BINDINGS_C: snprintf(scratch, size, "%s.c", module); return scratch;
    case MOX_FILE_COUNT_: break;
    }
    return "";
}

bool moxc_generate(const moxc_plan *plan, const char *artifact_dir, moxc_generated *out, FILE *diag)
{
    *out = (moxc_generated){
        .bindings_h = moxc_gen_bindings_h(plan->module, plan->name),
        .bindings_c = moxc_gen_bindings_c(plan->module, plan->name, artifact_dir),
        .cuda_tu = moxc_gen_cuda(plan->module, plan->texts, plan->module->edit_count),
        .cpu_tu = moxc_gen_cpu(plan->module, plan->abi_sha256),
    };
    if (out->bindings_h && out->bindings_c && out->cuda_tu && out->cpu_tu)
        return true;
    /* moxc_gen_cuda also refuses edits that do not fit their source. */
    fprintf(diag, "moxc: generating %s failed (out of memory, or a source changed while moxc read it)\n",
            plan->what);
    moxc_generated_free(out);
    return false;
}

void moxc_generated_free(moxc_generated *g)
{
    free(g->bindings_h);
    free(g->bindings_c);
    free(g->cuda_tu);
    free(g->cpu_tu);
    *g = (moxc_generated){0};
}

/* Runs a compiler; on failure prints "moxc: WHAT failed for module NAME:"
 * and its output verbatim. Warnings of a successful run are shown too.
 * diag NULL: quietly (the caller has another way). */
static bool compile(const moxc_plan *plan, const char *what, const char *tool, const moxc_strv *flags,
                    const char *output, const char *input, const char *trailing, FILE *diag)
{
    const char **argv = calloc(flags->count + 6, sizeof *argv);
    if (!argv) {
        if (diag)
            fprintf(diag, "moxc: out of memory\n");
        return false;
    }
    size_t n = 0;
    argv[n++] = tool;
    for (size_t i = 0; i < flags->count; ++i)
        argv[n++] = flags->items[i];
    argv[n++] = "-o";
    argv[n++] = output;
    argv[n++] = input;
    if (trailing)
        argv[n++] = trailing;
    argv[n] = NULL;
    moxc_proc proc;
    bool ran = moxc_run(argv, &proc);
    free(argv);
    if (!ran) {
        if (diag)
            fprintf(diag, "moxc: out of memory running %s\n", what);
        return false;
    }
    bool ok = proc.started && proc.exit_code == 0;
    if (!diag) {
        moxc_proc_free(&proc);
        return ok;
    }
    if (!ok) {
        fprintf(diag, "moxc: %s failed for %s:\n", what, plan->what);
        if (!proc.started)
            fprintf(diag, "cannot run %s: %s\n", tool, strerror(proc.errno_value));
        else if (proc.signal)
            fprintf(diag, "%s%s was killed by signal %d\n", proc.output, tool, proc.signal);
    }
    if (proc.output_len) {
        fputs(proc.output, diag);
        if (proc.output[proc.output_len - 1] != '\n')
            fputc('\n', diag);
    }
    moxc_proc_free(&proc);
    return ok;
}

typedef struct stage {
    const moxc_plan *plan;
    const char *dir;
    mox_manifest manifest;
    char names[MOX_FILE_COUNT_][256];
    FILE *diag;
    bool cpu_unplanned; /* the work-group functions did not compile: none are used */
} stage;

static void stage_names(stage *s)
{
    for (int f = 0; f < MOX_FILE_COUNT_; ++f) {
        char scratch[256];
        const char *name = file_name((mox_artifact_file)f, s->plan->name, scratch, sizeof scratch);
        snprintf(s->names[f], sizeof s->names[f], "%s", name);
    }
}

static char *stage_path(stage *s, mox_artifact_file f)
{
    return moxc_path_join(s->dir, s->names[f]);
}

/* Records file f (already written in the stage) in the manifest. */
static bool add_file(stage *s, mox_artifact_file f)
{
    char *path = stage_path(s, f);
    mox_manifest_file *entry = &s->manifest.files[f];
    entry->path = s->names[f];
    bool ok = path && moxc_sha256_file(path, entry->sha256);
    if (!ok)
        fprintf(s->diag, "moxc: cannot read %s\n", path ? path : "(out of memory)");
    entry->present = ok;
    free(path);
    return ok;
}

static bool write_text(stage *s, mox_artifact_file f, const char *text)
{
    char *path = stage_path(s, f);
    bool ok = path && moxc_write_file(path, text, strlen(text));
    if (!ok)
        fprintf(s->diag, "moxc: cannot write %s: %s\n", path ? path : "(out of memory)", strerror(errno));
    free(path);
    return ok && add_file(s, f);
}

static bool write_manifest(stage *s)
{
    const moxc_plan *plan = s->plan;
    mox_manifest *m = &s->manifest;
    char *nvcc_line = moxc_version_line(plan->tc.nvcc_version, "release");
    char *cc_line = moxc_version_line(plan->tc.cc_version, NULL);
    m->module = plan->name;
    m->abi = plan->module->abi;
    memcpy(m->abi_sha256, plan->abi_sha256, sizeof m->abi_sha256);
    bool cuda = plan->tc.nvcc != NULL;
    m->cuda_archs = cuda ? plan->archs.items : NULL;
    m->cuda_arch_count = cuda ? plan->archs.count : 0;
    m->ptx = cuda;
    memcpy(m->fingerprint, plan->fingerprint, sizeof m->fingerprint);
    m->moxc_version = (char *)(uintptr_t)MOXC_VERSION;
    m->nvcc_version = nvcc_line;
    m->cc_version = cc_line;
    m->nvcc_flags = plan->nvcc_flags.items;
    m->nvcc_flag_count = plan->nvcc_flags.count;
    m->cc_flags = plan->cc_flags.items;
    m->cc_flag_count = plan->cc_flags.count;
    const moxc_module *mod = plan->module;
    mox_manifest_cpu_kernel *cpu = calloc(mod->abi->kernel_count + 1, sizeof *cpu);
    for (size_t k = 0; cpu && k < mod->abi->kernel_count; ++k) {
        moxc_cpu_executor e = moxc_cpu_executor_of(mod, k, !s->cpu_unplanned);
        cpu[k].name = mod->abi->kernels[k].name;
        cpu[k].executor = (char *)(uintptr_t)moxc_cpu_executor_name(e);
        cpu[k].note = e == MOXC_CPU_LOOPS ? NULL
                      : s->cpu_unplanned ? (char *)(uintptr_t)"its work-group function did not compile"
                                         : mod->kernels[k].cpu.note;
    }
    m->cpu_kernels = cpu;
    m->cpu_kernel_count = cpu ? mod->abi->kernel_count : 0;
    char *json = nvcc_line && cc_line && cpu ? mox_manifest_to_json(m) : NULL;
    char *path = moxc_path_join(s->dir, "manifest.json");
    bool ok = json && path && moxc_write_file(path, json, strlen(json));
    if (!ok)
        fprintf(s->diag, "moxc: cannot write the manifest of module %s\n", plan->name);
    free(path);
    free(json);
    free(nvcc_line);
    free(cc_line);
    free(cpu);
    return ok;
}

/* Compiles kernels_cpu.so. Should the work-group functions not compile (a
 * construct moxc copied but the host compiler rejects in its new place),
 * the module is built again without them (every kernel on its old
 * executor) and, when that compiles, a note says so: a moxc bug, never the
 * user's. When it does not compile either, the sources themselves do not
 * compile on the CPU: the compiler's errors of that second attempt are
 * printed, and no note. */
static bool compile_cpu(stage *s, const char *cpu_tu, const char *cpu_so)
{
    const moxc_plan *plan = s->plan;
    bool planned = false;
    for (size_t k = 0; k < plan->module->abi->kernel_count; ++k)
        planned = planned || moxc_cpu_executor_of(plan->module, k, true) == MOXC_CPU_LOOPS;
    if (compile(plan, "cc", plan->tc.cc, &plan->cc_flags, cpu_so, cpu_tu, "-lm", planned ? NULL : s->diag))
        return true;
    if (!planned)
        return false;
    char *text = moxc_gen_cpu_unplanned(plan->module, plan->abi_sha256);
    s->cpu_unplanned = true;
    bool ok = text && moxc_write_file(cpu_tu, text, strlen(text)) &&
              compile(plan, "cc", plan->tc.cc, &plan->cc_flags, cpu_so, cpu_tu, "-lm", s->diag);
    free(text);
    if (ok)
        fprintf(s->diag, "moxc: note: %s: the CPU work-group functions did not compile; every kernel runs on "
                         "the fiber or thread-call executor instead (please report this as a moxc bug)\n",
                plan->what);
    return ok && add_file(s, MOX_FILE_CPU_TU);
}

bool moxc_build_stage(const moxc_plan *plan, const char *stage_dir, const char *artifact_dir, FILE *diag)
{
    stage s = {.plan = plan, .dir = stage_dir, .diag = diag};
    stage_names(&s);
    moxc_generated g;
    if (!moxc_generate(plan, artifact_dir, &g, diag))
        return false;
    bool ok = write_text(&s, MOX_FILE_ABI_JSON, plan->abi_json) &&
              write_text(&s, MOX_FILE_BINDINGS_H, g.bindings_h) &&
              write_text(&s, MOX_FILE_BINDINGS_C, g.bindings_c) && write_text(&s, MOX_FILE_CUDA_TU, g.cuda_tu) &&
              write_text(&s, MOX_FILE_CPU_TU, g.cpu_tu);
    moxc_generated_free(&g);
    char *cpu_tu = stage_path(&s, MOX_FILE_CPU_TU), *cpu_so = stage_path(&s, MOX_FILE_CPU_SO);
    char *cuda_tu = stage_path(&s, MOX_FILE_CUDA_TU), *fatbin = stage_path(&s, MOX_FILE_FATBIN);
    ok = ok && cpu_tu && cpu_so && cuda_tu && fatbin;
    ok = ok && compile_cpu(&s, cpu_tu, cpu_so) && add_file(&s, MOX_FILE_CPU_SO);
    if (ok && plan->tc.nvcc)
        ok = compile(plan, "nvcc", plan->tc.nvcc, &plan->nvcc_flags, fatbin, cuda_tu, NULL, diag) &&
             add_file(&s, MOX_FILE_FATBIN);
    free(cpu_tu);
    free(cpu_so);
    free(cuda_tu);
    free(fatbin);
    return ok && write_manifest(&s);
}

/* Copies NAME.h / NAME.c out of the artifact, touching only files whose
 * bytes change, so that a rebuild with the same header recompiles nothing. */
/* <dest>/NAME.artifact: the artifact's path and a newline, for `moxc
 * deploy` and mox_install_kernels (the fingerprint is known only after the
 * build). Rewritten only when it changes. */
static bool write_record(const moxc_plan *plan, const char *artifact, const char *dest, FILE *diag)
{
    moxc_buf nb = {0}, tb = {0};
    moxc_buf_printf(&nb, "%s.artifact", plan->name);
    char *name = moxc_buf_finish(&nb);
    char *record = name ? moxc_path_join(dest, name) : NULL;
    moxc_buf_printf(&tb, "%s\n", artifact);
    size_t len = tb.len;
    char *text = moxc_buf_finish(&tb);
    bool ok = record && text && moxc_write_if_changed(record, text, len);
    if (!ok)
        fprintf(diag, "moxc: cannot write %s: %s\n", record ? record : "the artifact record", strerror(errno));
    free(text);
    free(record);
    free(name);
    return ok;
}

static bool copy_bindings(const moxc_plan *plan, const char *artifact, const char *dest, FILE *diag)
{
    if (!moxc_mkdir_p(dest)) {
        fprintf(diag, "moxc: cannot create %s: %s\n", dest, strerror(errno));
        return false;
    }
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
        moxc_buf nb = {0};
        moxc_buf_printf(&nb, "%s.%s", plan->name, k ? "c" : "h");
        char *name = moxc_buf_finish(&nb);
        char *from = name ? moxc_path_join(artifact, name) : NULL;
        char *to = name ? moxc_path_join(dest, name) : NULL;
        char *data = NULL;
        size_t size = 0;
        ok = from && to && moxc_read_file(from, &data, &size) && moxc_write_if_changed(to, data, size);
        if (!ok)
            fprintf(diag, "moxc: cannot copy %s to %s: %s\n", from ? from : "bindings", dest, strerror(errno));
        free(data);
        free(name);
        free(from);
        free(to);
    }
    return ok && write_record(plan, artifact, dest, diag);
}

/* Makefile syntax: spaces, '#' and '$' escaped as make and ninja read them. */
static void put_dep_path(moxc_buf *b, const char *path)
{
    for (const char *p = path; *p; ++p) {
        if (*p == ' ' || *p == '#' || *p == '\\')
            moxc_buf_put(b, "\\");
        if (*p == '$')
            moxc_buf_put(b, "$");
        moxc_buf_write(b, p, 1);
    }
}

/* One prerequisite, unless already listed: the sources and the dialect
 * headers are also among the files the front end read. */
static bool put_dep_once(moxc_buf *b, moxc_strv *seen, const char *path)
{
    for (size_t i = 0; i < seen->count; ++i)
        if (strcmp(seen->items[i], path) == 0)
            return true;
    if (!moxc_strv_push(seen, path))
        return false;
    moxc_buf_put(b, " \\\n  ");
    put_dep_path(b, path);
    return true;
}

static bool write_depfile(const moxc_plan *plan, const char *path, const char *target, FILE *diag)
{
    moxc_buf b = {0};
    moxc_strv seen = {0};
    put_dep_path(&b, target);
    moxc_buf_put(&b, ":");
    bool ok = true;
    for (size_t i = 0; ok && i < plan->module->edit_count; ++i)
        ok = put_dep_once(&b, &seen, plan->module->edits[i].path);
    for (size_t i = 0; ok && i < plan->module->dependency_count; ++i)
        ok = put_dep_once(&b, &seen, plan->module->dependencies[i]);
    for (size_t i = 0; ok && i < plan->dialect_headers.count; ++i)
        ok = put_dep_once(&b, &seen, plan->dialect_headers.items[i]);
    moxc_strv_free(&seen);
    moxc_buf_put(&b, "\n");
    size_t len = b.len;
    char *text = moxc_buf_finish(&b);
    ok = ok && text && moxc_write_if_changed(path, text, len);
    if (!ok)
        fprintf(diag, "moxc: cannot write the depfile %s\n", path);
    free(text);
    return ok;
}

int moxc_cmd_build(const moxc_options *o)
{
    moxc_plan plan;
    char *out_dir = NULL, *artifact = NULL;
    int rc = 1;
    if (!moxc_plan_parse(o, &plan, stderr) || !moxc_plan_fingerprint(&plan, stderr))
        goto done;
    out_dir = moxc_abs_path(o->out_dir);
    artifact = out_dir ? moxc_cache_obtain(&plan, out_dir, stdout, stderr) : NULL;
    if (!artifact)
        goto done;
    if (o->bindings_dir && !copy_bindings(&plan, artifact, o->bindings_dir, stderr))
        goto done;
    if (o->depfile && !write_depfile(&plan, o->depfile, o->depfile_target ? o->depfile_target : o->depfile,
                                     stderr))
        goto done;
    rc = 0;
done:
    free(out_dir);
    free(artifact);
    moxc_plan_free(&plan);
    return rc;
}
