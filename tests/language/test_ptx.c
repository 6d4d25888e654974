/* test_ptx.c - the CUDA code of the dialect's constructs: compiles the
 * artifact's kernels_cuda.cu to PTX with the artifact's own nvcc flags and
 * checks that each kernel moves its vectors with single
 * ld/st.global[.nc].v2/.v4 instructions, as CUDA's float2/float4 do,
 * reads its tables from the parameter bank, and that the entries without
 * the gate check have none. Needs
 * nvcc (exit 77 without it, or when the module was built without CUDA);
 * no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lang_support.h"
#include "manifest.h" /* src/artifact */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    if (text)
        text[n] = '\0';
    fclose(f);
    return text;
}

/* The PTX of the artifact in `dir`, compiled with its nvcc flags (-fatbin
 * and -gencode pairs replaced by -ptx -arch=compute_90); NULL to skip. */
static char *artifact_ptx(const char *dir, const char *out)
{
    mox_manifest *m = NULL;
    mox_artifact_error err;
    if (!mox_manifest_load(dir, &m, &err))
        fail_msg("manifest of %s: %s", dir, err.message);
    if (!m->files[MOX_FILE_CUDA_TU].present || !m->nvcc_version[0]) {
        mox_manifest_free(m);
        return NULL;
    }
    const char *argv[64];
    size_t n = 0;
    argv[n++] = MOX_NVCC_PATH;
    for (size_t i = 0; i < m->nvcc_flag_count && n < 56; i++) {
        if (strcmp(m->nvcc_flags[i], "-gencode") == 0) {
            i++;
            continue;
        }
        argv[n++] = strcmp(m->nvcc_flags[i], "-fatbin") == 0 ? "-ptx" : m->nvcc_flags[i];
    }
    char tu[4096];
    snprintf(tu, sizeof tu, "%s/%s", dir, m->files[MOX_FILE_CUDA_TU].path);
    argv[n++] = "-arch=compute_90";
    argv[n++] = tu;
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    mox_manifest_free(m);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("nvcc -ptx of %s failed (status %d)", tu, status);
    return slurp(out);
}

/* The body of `.entry mox_entry_<kernel>` up to the next entry. */
static char *entry_body(const char *ptx, const char *kernel)
{
    char head[128];
    snprintf(head, sizeof head, ".entry mox_entry_%s(", kernel);
    const char *at = strstr(ptx, head);
    if (!at)
        fail_msg("no entry for %s in the PTX", kernel);
    const char *end = strstr(at + 1, ".entry ");
    size_t len = end ? (size_t)(end - at) : strlen(at);
    char *body = malloc(len + 1);
    memcpy(body, at, len);
    body[len] = '\0';
    return body;
}

/* Whether some instruction of `body` starts with `op` (e.g. "ld.global")
 * and, after an optional ".nc", continues with `shape` (".v4.f32"). */
static bool has_access(const char *body, const char *op, const char *shape)
{
    size_t oplen = strlen(op);
    for (const char *p = strstr(body, op); p; p = strstr(p + 1, op)) {
        const char *rest = p + oplen;
        if (strncmp(rest, ".nc", 3) == 0)
            rest += 3;
        if (strncmp(rest, shape, strlen(shape)) == 0)
            return true;
    }
    return false;
}

static void expect(const char *ptx, const char *kernel, const char *op, const char *shape)
{
    char *body = entry_body(ptx, kernel);
    if (!has_access(body, op, shape))
        fail_msg("kernel %s: no %s%s in its PTX:\n%s", kernel, op, shape, body);
    free(body);
}

static void test_vector_accesses(void **state)
{
    const char *ptx = *state;
    expect(ptx, "scale4", "ld.global", ".v4.f32");
    expect(ptx, "scale4", "st.global", ".v4.f32");
    expect(ptx, "swap2", "ld.global", ".v2.f32");
    expect(ptx, "swap2", "st.global", ".v2.f32");
    expect(ptx, "add_u4", "ld.global", ".v4.u32");
    expect(ptx, "add_u4", "st.global", ".v4.u32");
    expect(ptx, "mix", "ld.global", ".v2.u32");
    expect(ptx, "mix", "st.global", ".v4.u32");
    /* Body.pos (a float4 member) and the 16-aligned Tagged.w. */
    expect(ptx, "integrate", "ld.global", ".v4.f32");
    expect(ptx, "integrate", "st.global", ".v4");
}

/* MOX_TABLE parameters are read from the parameter (constant) bank, at
 * uniform and at varying indices. */
static void test_table_reads(void **state)
{
    const char *ptx = *state;
    expect(ptx, "stencil9", "ld.param", ".f32");
    expect(ptx, "lookup", "ld.param", ".u32");
    expect(ptx, "lookup", "ld.param", ".f32"); /* Body.mass of the record table */
}

static bool has_text(const char *ptx, const char *kernel, const char *text)
{
    char *body = entry_body(ptx, kernel);
    bool yes = strstr(body, text) != NULL;
    free(body);
    return yes;
}

/* Kernels with read buffers have a __noalias entry, whose read-only loads
 * take the read-only path; the default entry (which the runtime runs when
 * a written buffer is also another argument) never does. */
static void test_noalias_entries(void **state)
{
    const char *ptx = *state;
    static const struct {
        const char *kernel, *load;
    } cases[] = {{"stencil9", "ld.global.nc.f32"}, {"scale4", "ld.global.nc.v4.f32"},
                 {"add_u4", "ld.global.nc.v4.u32"}, {"sum4", "ld.global.nc.v4.u32"},
                 {"step_twice", "ld.global.nc.f32"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char noalias[96];
        snprintf(noalias, sizeof noalias, "%s__noalias", cases[i].kernel);
        if (!has_text(ptx, noalias, cases[i].load))
            fail_msg("entry %s has no %s", noalias, cases[i].load);
        if (has_text(ptx, cases[i].kernel, cases[i].load))
            fail_msg("the default entry of %s loads through %s", cases[i].kernel, cases[i].load);
    }
    /* no read buffer, no second entry */
    assert_null(strstr(ptx, ".entry mox_entry_inc_u32__noalias("));
}

/* Every kernel has entries without the gate check (__ungated, and
 * __ungated__noalias where a no-alias entry exists), which the runtime
 * runs where no failure can reach a launch: no read of a status word and
 * no call of the gate's rare path, but, like the gated entries, the
 * grid-dependency wait (compute_90); the no-alias one still loads through
 * the read-only path. */
static void test_ungated_entries(void **state)
{
    const char *ptx = *state;
    static const struct {
        const char *kernel, *load;
    } cases[] = {{"stencil9", "ld.global.nc.f32"}, {"scale4", "ld.global.nc.v4.f32"},
                 {"inc_u32", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[96];
        if (!has_text(ptx, cases[i].kernel, "griddepcontrol.wait"))
            fail_msg("the gated entry of %s does not wait for the grid's dependencies", cases[i].kernel);
        if (!has_text(ptx, cases[i].kernel, "ld.global.nc.u32")) /* its one inline dependency's status */
            fail_msg("the gated entry of %s reads no status word", cases[i].kernel);
        for (int noalias = 0; noalias <= (cases[i].load != NULL); noalias++) {
            snprintf(name, sizeof name, "%s__ungated%s", cases[i].kernel, noalias ? "__noalias" : "");
            if (has_text(ptx, name, "mox__gate_enter_rare") || has_text(ptx, name, "ld.global.nc.u32"))
                fail_msg("entry %s checks the gate", name);
            if (!has_text(ptx, name, "griddepcontrol.wait"))
                fail_msg("entry %s does not wait for the grid's dependencies", name);
            if (noalias && !has_text(ptx, name, cases[i].load))
                fail_msg("entry %s has no %s", name, cases[i].load);
        }
    }
    assert_null(strstr(ptx, ".entry mox_entry_inc_u32__ungated__noalias("));
}

int main(void)
{
    if (!MOX_NVCC_PATH[0]) {
        printf("no nvcc: skipping\n");
        return LANG_SKIP;
    }
    char out[] = "/tmp/mox-lang-ptx-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
        return 1;
    close(fd);
    char *ptx = artifact_ptx(lang_module.artifact_dir, out);
    unlink(out);
    if (!ptx) {
        printf("module built without CUDA: skipping\n");
        return LANG_SKIP;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_vector_accesses, ptx),
        cmocka_unit_test_prestate(test_table_reads, ptx),
        cmocka_unit_test_prestate(test_noalias_entries, ptx),
        cmocka_unit_test_prestate(test_ungated_entries, ptx),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(ptx);
    return rc;
}
