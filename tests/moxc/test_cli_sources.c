/* test_cli_sources.c - moxc builds whose sources the front end and the CPU
 * compiler must see alike: feature-test macros (defined in a source: an
 * error at the define; given with -D: both see them), and a source the
 * front end accepts but the CPU compiler refuses (the compiler's error,
 * without the note about work-group functions, which would blame moxc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

#define MOXC MOXC_EXECUTABLE
#define MOXC_RUN(out, ...) run_program(MOXC, out, (const char *const[]){__VA_ARGS__, NULL})

static void test_feature_macro_in_source(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("cli-feature");
    char *src = moxc_path_join(dir, "gnu.c");
    write_text(src, "#define _GNU_SOURCE\n#include <mox/kernel.h>\n"
                    "MOX_KERNEL void k(float *o, float x) { o[0] = (float)M_PI * x; }\n");
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "gnu", "--out-dir", dir, "--no-cuda", src);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s:1:9: error: defining _GNU_SOURCE in a kernel source is not supported: the "
                                       "CPU translation unit includes <mox/kernel.h> before the kernel sources, where "
                        "it would come too late; pass it to moxc instead (-D_GNU_SOURCE; DEFINES "
                        "_GNU_SOURCE in mox_add_kernels)",
                    src);
    char *want = moxc_buf_finish(&b);
    expect_exit(rc, 1, out, want);
    free(want);
    /* Given to moxc, the macro reaches the front end and the CPU compiler. */
    write_text(src, "#include <mox/kernel.h>\n"
                    "MOX_KERNEL void k(float *o, float x) { o[0] = (float)M_PI * x; }\n");
    rc = MOXC_RUN(&out, "build", "--name", "gnu", "--out-dir", dir, "--no-cuda", "-D_GNU_SOURCE", src);
    expect_exit(rc, 0, out, NULL);
    rc = MOXC_RUN(&out, "inspect", "--emit", "abi", src);
    expect_exit(rc, 1, out, "use of undeclared identifier 'M_PI'");
    free(src);
    test_rmdir(dir);
}

/* The work-group functions do not compile because nothing does: no note
 * calling it a moxc bug, and the compiler's own error. */
static void test_cpu_compile_failure_without_note(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("cli-cpu-fail");
    char *src = moxc_path_join(dir, "front_only.c");
    write_text(src, "#include <mox/kernel.h>\n#ifndef __MOXC__\n#error only the front end reads this source\n#endif\n"
                    "MOX_KERNEL MOX_BLOCK(64, 1, 1) void k(float *o)\n{\n    MOX_SHARED(float, s, 64);\n"
                    "    s[mox_thread_idx().x] = 1.0f;\n    mox_barrier();\n    o[mox_thread_idx().x] = s[0];\n}\n");
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "front_only", "--out-dir", dir, "--no-cuda", "--cc", MOX_CC, src);
    assert_non_null(strstr(out, "only the front end reads this source"));
    assert_null(strstr(out, "moxc bug"));
    expect_exit(rc, 1, out, "moxc: cc failed for module front_only:");
    free(src);
    test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feature_macro_in_source),
        cmocka_unit_test(test_cpu_compile_failure_without_note),
    };
    return cmocka_run_group_tests_name("moxc_cli_sources", tests, NULL, NULL);
}
