/* test_deploy.c - `moxc deploy`: the NAME.artifact record that `build
 * --bindings-dir` writes, copying a verified artifact to DIR/<fingerprint>
 * (by record or by directory), a second deploy that finds it there, a
 * damaged copy that is replaced, and every error: usage, a missing or empty
 * record, a folder that is no artifact, a tampered source (nothing copied). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "manifest.h"
#include "test_support.h"

typedef struct fixture {
    char *dir;      /* scratch */
    char *artifact; /* the demo module's artifact */
    char *record;   /* <dir>/gen/demo.artifact */
    char *dest;     /* <dir>/deployed */
} fixture;

#define MOXC_RUN(out, ...) run_program(MOXC_EXECUTABLE, out, (const char *const[]){__VA_ARGS__, NULL})
#define EXPECT_RUN(rc, needle, ...) expect_program(MOXC_EXECUTABLE, rc, needle, (const char *const[]){__VA_ARGS__, NULL})

static char *joined(const char *a, const char *b)
{
    moxc_buf buf = {0};
    moxc_buf_printf(&buf, "%s%s", a, b);
    char *text = moxc_buf_finish(&buf);
    assert_non_null(text);
    return text;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("deploy");
    char *out = moxc_path_join(f->dir, "cache"), *gen = moxc_path_join(f->dir, "gen");
    char *src = test_path("kernels/demo.c");
    char *text = NULL;
    int rc = MOXC_RUN(&text, "build", "--name", "demo", "--out-dir", out, "--bindings-dir", gen, "--no-cuda",
                      "--cc", MOX_CC, src);
    if (rc != 0)
        fail_msg("moxc build failed:\n%s", text);
    const char *line = strstr(text, "Built mox artifact ");
    assert_non_null(line);
    line += strlen("Built mox artifact ");
    f->artifact = strndup(line, strcspn(line, "\n"));
    f->record = moxc_path_join(gen, "demo.artifact");
    f->dest = moxc_path_join(f->dir, "deployed");
    free(text);
    free(src);
    free(gen);
    free(out);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_rmdir(f->dir);
    free(f->artifact);
    free(f->record);
    free(f->dest);
    free(f);
    return 0;
}

/* <dest>/<fingerprint of the fixture's artifact>. */
static char *deployed_dir(const fixture *f)
{
    const char *fp = strrchr(f->artifact, '/');
    assert_non_null(fp);
    return joined(f->dest, fp);
}

static void assert_valid_artifact(const char *dir)
{
    mox_manifest *m = NULL;
    mox_artifact_error err;
    if (!mox_manifest_load(dir, &m, &err) || !mox_manifest_verify_all(m, dir, &err))
        fail_msg("%s: %s", dir, err.message);
    assert_string_equal(m->module, "demo");
    mox_manifest_free(m);
}

/* Entries of `dir` other than "." and "..". */
static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_record_and_deploy(void **state)
{
    fixture *f = *state;
    char *record = read_text(f->record);
    char *want = joined(f->artifact, "\n");
    assert_string_equal(record, want);
    char *target = deployed_dir(f);
    char *out = NULL;
    int rc = MOXC_RUN(&out, "deploy", "--to", f->dest, f->record);
    char *line = joined("Deployed mox artifact ", target);
    expect_exit(rc, 0, out, line);
    assert_valid_artifact(target);
    assert_int_equal(entries(f->dest), 1); /* no staging folder left */

    /* Again, by directory: already there, nothing rewritten. */
    rc = MOXC_RUN(&out, "deploy", "--to", f->dest, f->artifact);
    expect_exit(rc, 0, out, "(already there)");
    free(line);
    free(target);
    free(want);
    free(record);
}

static void test_damaged_copy_is_replaced(void **state)
{
    fixture *f = *state;
    char *out = NULL;
    EXPECT_RUN(0, "Deployed mox artifact", "deploy", "--to", f->dest, f->record);
    char *target = deployed_dir(f);
    char *abi = moxc_path_join(target, "abi.json");
    write_text(abi, "{}");
    int rc = MOXC_RUN(&out, "deploy", "--to", f->dest, f->record);
    char *replacing = joined("moxc: replacing ", target);
    assert_non_null(strstr(out, replacing));
    expect_exit(rc, 0, out, "Deployed mox artifact");
    assert_valid_artifact(target);
    free(replacing);
    free(abi);
    free(target);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    EXPECT_RUN(2, "deploy: --to is required", "deploy", f->record);
    EXPECT_RUN(2, "deploy: no artifacts given", "deploy", "--to", f->dest);
    EXPECT_RUN(2, "deploy takes only --to (got --name)", "deploy", "--to", f->dest, "--name", "x", f->record);
    EXPECT_RUN(2, "--to is only for moxc deploy", "doctor", "--to", f->dest);

    char *missing = moxc_path_join(f->dir, "missing.artifact");
    EXPECT_RUN(1, "No such file or directory", "deploy", "--to", f->dest, missing);
    char *empty = moxc_path_join(f->dir, "empty.artifact");
    write_text(empty, "\n");
    EXPECT_RUN(1, "the file names no artifact directory", "deploy", "--to", f->dest, empty);
    EXPECT_RUN(1, "is not a valid mox artifact", "deploy", "--to", f->dest, f->dir);

    /* A tampered source: refused, nothing copied. */
    char *so = moxc_path_join(f->artifact, "kernels_cpu.so");
    write_text(so, "not the shared object");
    EXPECT_RUN(1, "is not a valid mox artifact", "deploy", "--to", f->dest, f->record);
    assert_int_equal(entries(f->dest), 0);
    free(so);
    free(empty);
    free(missing);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_record_and_deploy),
        T(test_damaged_copy_is_replaced),
        T(test_errors),
    };
    return cmocka_run_group_tests_name("moxc_deploy", tests, NULL, NULL);
}
