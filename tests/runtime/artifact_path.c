/* artifact_path.c - the artifact lookup order (src/core/artifact_path.c,
 * docs/moxc.md "Where the runtime finds an artifact"): the environment
 * variable, the override, deployed copies named by fingerprint next to the
 * file holding the descriptor and in its prefix's lib/, the recorded build
 * directory, $MOX_ARTIFACT_ROOT. Deployed folders are made next to this
 * program (and the test library) under a fingerprint unique to the run and
 * removed afterwards. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/artifact_path.h"

const mox_module_desc *artifact_lib_desc(const char *recorded);

typedef struct paths {
    char fp[64];              /* the fingerprint of this run */
    char tmp[PATH_MAX];       /* scratch: the "build tree" */
    char recorded[PATH_MAX];  /* <tmp>/cache/<fp>, the recorded directory */
    char beside[PATH_MAX];    /* <this program's dir>/mox-artifacts/<fp> */
    char prefix[PATH_MAX];    /* <this program's dir>/../lib/mox-artifacts/<fp> */
} paths;

static paths P;
static mox_module_desc desc = {"pathmod", "{}", "", NULL, "MOX_ARTIFACT_PATHMOD", 0, NULL};

/* snprintf that must not truncate. */
#define FMT(buf, ...) assert_true(snprintf(buf, sizeof buf, __VA_ARGS__) < (int)sizeof buf)

static void mkdirs(const char *path)
{
    char buf[PATH_MAX];
    FMT(buf, "%s", path);
    for (char *p = buf + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(buf, 0755);
        *p = '/';
    }
    assert_true(mkdir(buf, 0755) == 0 || access(buf, F_OK) == 0);
}

static void rm_up(const char *path, int levels) /* rmdir path and empty parents */
{
    char buf[PATH_MAX];
    FMT(buf, "%s", path);
    for (int i = 0; i < levels; ++i) {
        rmdir(buf);
        char *slash = strrchr(buf, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
}

static void expect_locate(const mox_module_desc *d, const char *override, const char *want)
{
    char *got = mox__artifact_locate(d, override);
    assert_non_null(got);
    assert_string_equal(got, want);
    mox__free(got);
}

static int setup(void **state)
{
    (void)state;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    *strrchr(self, '/') = '\0';
    FMT(P.fp, "test-fingerprint-%ld", (long)getpid());
    FMT(P.tmp, "%s/mox-artifact-path-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(P.tmp));
    FMT(P.recorded, "%s/cache/%s", P.tmp, P.fp);
    FMT(P.beside, "%s/mox-artifacts/%s", self, P.fp);
    FMT(P.prefix, "%s/../lib/mox-artifacts/%s", self, P.fp);
    desc.artifact_dir = P.recorded;
    unsetenv("MOX_ARTIFACT_PATHMOD");
    unsetenv("MOX_ARTIFACT_ROOT");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_up(P.beside, 2);
    rm_up(P.prefix, 3);
    rm_up(P.recorded, 3);
    return 0;
}

static void build_tree_then_root(void **state)
{
    (void)state;
    expect_locate(&desc, NULL, P.recorded); /* nothing exists: the recorded one (load reports it) */
    setenv("MOX_ARTIFACT_ROOT", "/moved/cache", 1);
    char moved[PATH_MAX];
    FMT(moved, "/moved/cache/%s", P.fp);
    expect_locate(&desc, NULL, moved);
    mkdirs(P.recorded); /* an existing build tree wins over the root */
    expect_locate(&desc, NULL, P.recorded);
    unsetenv("MOX_ARTIFACT_ROOT");
}

static void deployed_copies_come_before_the_build_tree(void **state)
{
    (void)state;
    mkdirs(P.recorded);
    mkdirs(P.prefix);
    expect_locate(&desc, NULL, P.prefix);
    mkdirs(P.beside);
    expect_locate(&desc, NULL, P.beside);
    /* Another program's fingerprint is not ours. */
    char other_recorded[PATH_MAX];
    FMT(other_recorded, "%s/cache/other-%s", P.tmp, P.fp);
    mox_module_desc other = desc;
    other.artifact_dir = other_recorded;
    expect_locate(&other, NULL, other_recorded);
    /* A trailing '/' in the recorded directory does not change the fingerprint. */
    char slashed[PATH_MAX];
    FMT(slashed, "%s//", P.recorded);
    other.artifact_dir = slashed;
    expect_locate(&other, NULL, P.beside);
}

static void explicit_choices_come_first(void **state)
{
    (void)state;
    mkdirs(P.beside);
    expect_locate(&desc, "/chosen/by/override", "/chosen/by/override");
    setenv("MOX_ARTIFACT_PATHMOD", "/chosen/by/env", 1);
    expect_locate(&desc, "/chosen/by/override", "/chosen/by/env");
    setenv("MOX_ARTIFACT_PATHMOD", "", 1); /* empty: as if unset */
    expect_locate(&desc, NULL, P.beside);
    unsetenv("MOX_ARTIFACT_PATHMOD");
}

/* Bindings in a shared library: deployed next to the library, not next to
 * the program that loaded it. */
static void next_to_the_shared_library(void **state)
{
    (void)state;
    const mox_module_desc *lib = artifact_lib_desc(P.recorded);
    char lib_beside[PATH_MAX];
    FMT(lib_beside, "%s/mox-artifacts/%s", ARTIFACT_LIB_DIR, P.fp);
    mkdirs(P.beside); /* next to the program: not the library's */
    expect_locate(lib, NULL, P.recorded);
    mkdirs(lib_beside);
    char *got = mox__artifact_locate(lib, NULL);
    char want[PATH_MAX];
    assert_non_null(realpath(ARTIFACT_LIB_DIR, want));
    strncat(want, "/mox-artifacts/", sizeof want - strlen(want) - 1);
    strncat(want, P.fp, sizeof want - strlen(want) - 1);
    assert_string_equal(got, want);
    mox__free(got);
    rm_up(lib_beside, 2);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(build_tree_then_root),
        T(deployed_copies_come_before_the_build_tree),
        T(explicit_choices_come_first),
        T(next_to_the_shared_library),
    };
    return cmocka_run_group_tests_name("runtime_artifact_path", tests, NULL, NULL);
}
