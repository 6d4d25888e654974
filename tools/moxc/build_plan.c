/* build_plan.c - the plan of one module build: parse the sources with the
 * front end, read their texts, fix the compilers' command lines, and
 * compute the fingerprint: SHA-256 over a canonical description of every
 * input, so that the artifact directory <out-dir>/<fingerprint> changes
 * exactly when something that could change the artifact does. */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "sha256.h"

/* Environment variables the compilers read on their own, and moxc's
 * MOXC_GATE_DEFER (the generated CUDA code depends on it). */
static const char *const compiler_env[] = {
    "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN", "CPATH",
    "C_INCLUDE_PATH",     "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX", "MOXC_GATE_DEFER",
};

static bool abs_list(const moxc_strv *in, moxc_strv *out)
{
    for (size_t i = 0; i < in->count; ++i) {
        char *abs = moxc_abs_path(in->items[i]);
        bool ok = abs && moxc_strv_push(out, abs);
        free(abs);
        if (!ok)
            return false;
    }
    return true;
}

static int name_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the dialect headers under <mox_include>/mox, sorted by name. */
static bool list_dialect_headers(moxc_plan *plan, FILE *diag)
{
    char dir_path[PATH_MAX];
    snprintf(dir_path, sizeof dir_path, "%s/mox", plan->mox_include);
    DIR *dir = opendir(dir_path);
    if (!dir) {
        fprintf(diag, "moxc: cannot open the mox include directory %s\n", dir_path);
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        if (n > 2 && strcmp(e->d_name + n - 2, ".h") == 0)
            ok = moxc_strv_pushf(&plan->dialect_headers, "%s/%s", dir_path, e->d_name);
    }
    closedir(dir);
    if (!ok) {
        fprintf(diag, "moxc: out of memory\n");
        return false;
    }
    qsort(plan->dialect_headers.items, plan->dialect_headers.count, sizeof(char *), name_compare);
    return true;
}

bool moxc_plan_parse(const moxc_options *o, moxc_plan *plan, FILE *diag)
{
    *plan = (moxc_plan){.opts = o};
    moxc_strv sources = {0};
    bool ok = false;
    plan->name = strdup(o->name ? o->name : "module");
    moxc_buf what = {0};
    if (o->name)
        moxc_buf_printf(&what, "module %s", o->name);
    else
        moxc_buf_put(&what, "the kernels");
    plan->what = moxc_buf_finish(&what);
    plan->mox_include = o->mox_include ? moxc_abs_path(o->mox_include) : moxc_default_mox_include();
    if (!plan->name || !plan->what || !plan->mox_include || !abs_list(&o->includes, &plan->include_dirs) ||
        !abs_list(&o->sources, &sources)) {
        fprintf(diag, "moxc: out of memory\n");
        goto done;
    }
    moxc_parse_options po = {
        .sources = (const char *const *)sources.items,
        .source_count = sources.count,
        .include_dirs = (const char *const *)plan->include_dirs.items,
        .include_dir_count = plan->include_dirs.count,
        .defines = (const char *const *)o->defines.items,
        .define_count = o->defines.count,
        .mox_include_dir = plan->mox_include,
        .diagnostics = diag,
    };
    if (!list_dialect_headers(plan, diag))
        goto done;
    if (!moxc_parse(&po, &plan->module)) {
        fprintf(diag, "moxc: %s %s errors\n", plan->what, o->name ? "has" : "have");
        goto done;
    }
    if (!moxc_gen_check(plan->module, plan->name, diag))
        goto done;
    for (size_t k = 0; k < plan->module->abi->kernel_count; ++k) {
        const char *note = plan->module->kernels[k].cpu.note;
        moxc_cpu_executor e = moxc_cpu_executor_of(plan->module, k, true);
        if (note)
            fprintf(diag, "moxc: note: kernel '%s': the CPU %s, not as region loops: %s\n",
                    plan->module->abi->kernels[k].name,
                    e == MOXC_CPU_FIBERS ? "runs each of its threads on a fiber" : "calls it once per thread", note);
    }
    plan->texts = calloc(plan->module->edit_count + 1, sizeof *plan->texts);
    if (!plan->texts)
        goto done;
    for (size_t i = 0; i < plan->module->edit_count; ++i) {
        char *data;
        size_t size;
        if (!moxc_read_file(plan->module->edits[i].path, &data, &size)) {
            fprintf(diag, "moxc: cannot read %s\n", plan->module->edits[i].path);
            goto done;
        }
        plan->texts[i] = (moxc_source_text){plan->module->edits[i].path, data, size};
    }
    if (!moxc_gen_abi(plan->module, &plan->abi_json, plan->abi_sha256)) {
        fprintf(diag, "moxc: out of memory\n");
        goto done;
    }
    ok = true;
done:
    moxc_strv_free(&sources);
    return ok;
}

long moxc_arch_number(const char *arch)
{
    if (strncmp(arch, "sm_", 3) != 0)
        return -1;
    const char *p = arch + 3;
    long n = 0;
    if (*p < '1' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; ++p) {
        n = n * 10 + (*p - '0');
        if (n > 100000)
            return -1;
    }
    if (*p == 'a' || *p == 'f')
        ++p;
    return *p ? -1 : n;
}

static int arch_compare(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    long nx = moxc_arch_number(x), ny = moxc_arch_number(y);
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return strcmp(x, y);
}

static bool fix_archs(moxc_plan *plan, FILE *diag)
{
    const moxc_strv *given = &plan->opts->archs;
    for (size_t i = 0; i < given->count; ++i) {
        if (moxc_arch_number(given->items[i]) < 0) {
            fprintf(diag, "moxc: bad --cuda-arch '%s' (expected sm_XX, e.g. sm_90)\n", given->items[i]);
            return false;
        }
        bool seen = false;
        for (size_t j = 0; j < plan->archs.count; ++j)
            seen = seen || strcmp(plan->archs.items[j], given->items[i]) == 0;
        if (!seen && !moxc_strv_push(&plan->archs, given->items[i]))
            return false;
    }
    if (plan->archs.count == 0 && !moxc_strv_push(&plan->archs, "sm_90"))
        return false;
    qsort(plan->archs.items, plan->archs.count, sizeof *plan->archs.items, arch_compare);
    return true;
}

/* The length of the directory part of source path `path` ("/" for one
 * at the root). */
static size_t dir_length(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash == path ? 1 : (size_t)(slash - path);
}

static bool push_includes(const moxc_plan *plan, moxc_strv *flags, bool source_dirs)
{
    bool ok = moxc_strv_pushf(flags, "-I%s", plan->mox_include);
    /* nvcc sees the sources pasted into kernels_cuda.cu, so their own
     * directories stand in for the quoted-include lookup beside them (each
     * directory once, where its first source names it). */
    for (size_t i = 0; source_dirs && i < plan->module->edit_count && ok; ++i) {
        const char *path = plan->module->edits[i].path;
        size_t len = dir_length(path);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; ++j) {
            const char *other = plan->module->edits[j].path;
            seen = dir_length(other) == len && memcmp(other, path, len) == 0;
        }
        if (!seen)
            ok = moxc_strv_pushf(flags, "-I%.*s", (int)len, path);
    }
    for (size_t i = 0; i < plan->include_dirs.count && ok; ++i) {
        /* (a directory already there, e.g. the sources' own, is not repeated) */
        const char *dir = plan->include_dirs.items[i];
        bool seen = false;
        for (size_t j = 0; j < flags->count && !seen; ++j)
            seen = strncmp(flags->items[j], "-I", 2) == 0 && strcmp(flags->items[j] + 2, dir) == 0;
        if (!seen)
            ok = moxc_strv_pushf(flags, "-I%s", dir);
    }
    for (size_t i = 0; i < plan->opts->defines.count && ok; ++i)
        ok = moxc_strv_pushf(flags, "-D%s", plan->opts->defines.items[i]);
    return ok;
}

static bool make_flags(moxc_plan *plan)
{
    /* -fstack-clash-protection: a frame larger than a page is touched page
     * by page, so a kernel whose locals outgrow its fiber's stack stops at
     * the guard page below it instead of writing past it (src/cpu/fiber.c). */
    static const char *const cc_base[] = {"-std=c11", "-O3", "-fPIC", "-shared", "-ffp-contract=off",
                                          "-fno-fast-math", "-fvisibility=hidden", "-fstack-clash-protection"};
    static const char *const nvcc_base[] = {"-fatbin", "-x", "cu", "-std=c++17", "-O3", "-fmad=false",
                                            "-prec-div=true", "-prec-sqrt=true", "-ftz=false"};
    bool ok = true;
    for (size_t i = 0; i < sizeof cc_base / sizeof *cc_base && ok; ++i)
        ok = moxc_strv_push(&plan->cc_flags, cc_base[i]);
    ok = ok && push_includes(plan, &plan->cc_flags, false);
    for (size_t i = 0; i < plan->opts->cc_flags.count && ok; ++i)
        ok = moxc_strv_push(&plan->cc_flags, plan->opts->cc_flags.items[i]);
    if (!plan->tc.nvcc)
        return ok;
    for (size_t i = 0; i < sizeof nvcc_base / sizeof *nvcc_base && ok; ++i)
        ok = moxc_strv_push(&plan->nvcc_flags, nvcc_base[i]);
    for (size_t i = 0; i < plan->archs.count && ok; ++i) {
        const char *arch = plan->archs.items[i] + 3;
        ok = moxc_strv_push(&plan->nvcc_flags, "-gencode") &&
             moxc_strv_pushf(&plan->nvcc_flags, "arch=compute_%s,code=sm_%s", arch, arch);
    }
    /* PTX of the lowest arch lets newer GPUs JIT the kernels. */
    const char *lowest = plan->archs.items[0] + 3;
    ok = ok && moxc_strv_push(&plan->nvcc_flags, "-gencode") &&
         moxc_strv_pushf(&plan->nvcc_flags, "arch=compute_%s,code=compute_%s", lowest, lowest);
    return ok && push_includes(plan, &plan->nvcc_flags, true);
}

/* One input: "key <length>:<value>\n" - lengths keep the text unambiguous. */
static void field(moxc_buf *b, const char *key, const char *value)
{
    moxc_buf_printf(b, "%s %zu:%s\n", key, strlen(value), value);
}

static void field_list(moxc_buf *b, const char *key, const moxc_strv *v)
{
    moxc_buf_printf(b, "%s-count %zu\n", key, v->count);
    for (size_t i = 0; i < v->count; ++i)
        field(b, key, v->items[i]);
}

static bool field_file(moxc_buf *b, const char *key, const char *path, FILE *diag)
{
    char hex[65];
    if (!moxc_sha256_file(path, hex)) {
        fprintf(diag, "moxc: cannot read %s\n", path);
        return false;
    }
    field(b, key, path);
    field(b, "sha256", hex);
    return true;
}

bool moxc_plan_fingerprint(moxc_plan *plan, FILE *diag)
{
    const moxc_options *o = plan->opts;
    if (!moxc_toolchain_find(o, &plan->tc, diag))
        return false;
    if (!fix_archs(plan, diag))
        return false;
    if (!make_flags(plan)) {
        fprintf(diag, "moxc: out of memory\n");
        return false;
    }
    moxc_buf b = {0};
    bool ok = true;
    field(&b, "format", "moxc-fingerprint-1");
    field(&b, "moxc-version", MOXC_VERSION);
    /* The generators are part of the input: a rebuilt moxc of the same
     * version must not reuse artifacts of the old one. */
    ok = field_file(&b, "moxc-binary", "/proc/self/exe", diag) && ok;
    field(&b, "module", plan->name);
    field(&b, "abi-sha256", plan->abi_sha256);
    field(&b, "mox-include", plan->mox_include);
    moxc_buf_printf(&b, "dialect-header-count %zu\n", plan->dialect_headers.count);
    for (size_t i = 0; i < plan->dialect_headers.count && ok; ++i)
        ok = field_file(&b, "dialect-header", plan->dialect_headers.items[i], diag);
    moxc_buf_printf(&b, "source-count %zu\n", plan->module->edit_count);
    for (size_t i = 0; i < plan->module->edit_count && ok; ++i)
        ok = field_file(&b, "source", plan->module->edits[i].path, diag);
    moxc_buf_printf(&b, "dependency-count %zu\n", plan->module->dependency_count);
    for (size_t i = 0; i < plan->module->dependency_count && ok; ++i)
        ok = field_file(&b, "dependency", plan->module->dependencies[i], diag);
    field_list(&b, "include", &plan->include_dirs);
    field_list(&b, "define", &o->defines);
    field(&b, "cc", plan->tc.cc);
    field(&b, "cc-version", plan->tc.cc_version);
    field_list(&b, "cc-flag", &plan->cc_flags);
    field(&b, "nvcc", plan->tc.nvcc ? plan->tc.nvcc : "");
    field(&b, "nvcc-version", plan->tc.nvcc_version ? plan->tc.nvcc_version : "");
    field_list(&b, "nvcc-flag", &plan->nvcc_flags);
    if (plan->tc.nvcc)
        field_list(&b, "cuda-arch", &plan->archs);
    for (size_t i = 0; i < sizeof compiler_env / sizeof *compiler_env; ++i) {
        const char *value = getenv(compiler_env[i]);
        moxc_buf_printf(&b, "env %s %s\n", compiler_env[i], value ? "set" : "unset");
        if (value)
            field(&b, compiler_env[i], value);
    }
    size_t len = b.len;
    char *text = moxc_buf_finish(&b);
    if (!ok || !text || !mox_sha256_hex(text, len, plan->fingerprint)) {
        if (ok)
            fprintf(diag, "moxc: out of memory\n");
        free(text);
        return false;
    }
    free(text);
    return true;
}

void moxc_plan_free(moxc_plan *plan)
{
    if (plan->texts && plan->module)
        for (size_t i = 0; i < plan->module->edit_count; ++i)
            free((char *)(uintptr_t)plan->texts[i].data);
    free(plan->texts);
    if (plan->module)
        moxc_module_free(plan->module);
    free(plan->name);
    free(plan->what);
    free(plan->mox_include);
    moxc_strv_free(&plan->dialect_headers);
    free(plan->abi_json);
    moxc_strv_free(&plan->include_dirs);
    moxc_strv_free(&plan->archs);
    moxc_strv_free(&plan->nvcc_flags);
    moxc_strv_free(&plan->cc_flags);
    moxc_toolchain_free(&plan->tc);
    *plan = (moxc_plan){0};
}
