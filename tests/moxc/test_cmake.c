/* test_cmake.c - mox_add_kernels() in a consumer project
 * (tests/moxc/cmake_consumer) that finds the installed mox
 * (find_package(mox), the install.tree test's prefix), with Ninja and with
 * Makefiles: the first build runs moxc and compiles the bindings, and the
 * program runs the kernel on the CPU; a second build does nothing; a kernel
 * edit reruns moxc and recompiles the bindings source but not the host code
 * (the header did not change); a header edit reruns moxc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_support.h"

static char *run_ok(const char *const *argv)
{
    char *out = NULL;
    int rc = run_capture(argv, &out);
    if (rc != 0)
        fail_msg("%s %s failed (%d):\n%s", argv[0], argv[1], rc, out);
    return out;
}

static void copy_file(const char *from, const char *to)
{
    char *text = read_text(from);
    assert_non_null(text);
    write_text(to, text);
    free(text);
}

static void append(const char *path, const char *text)
{
    char *old = read_text(path);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s%s", old, text);
    char *joined = moxc_buf_finish(&b);
    write_text(path, joined);
    free(joined);
    free(old);
}

static char *build(const char *build_dir)
{
    const char *argv[] = {"cmake", "--build", build_dir, "--", "-j1", NULL};
    char *out = run_ok(argv);
    return out;
}

static void consumer(const char *generator)
{
    char *dir = test_mkdtemp("cmake");
    char *kernels = moxc_path_join(dir, "kernels"), *build_dir = moxc_path_join(dir, "build");
    assert_true(moxc_mkdir_p(kernels));
    char *demo = moxc_path_join(kernels, "demo.c"), *records = moxc_path_join(kernels, "records.h");
    char *demo_src = test_path("kernels/demo.c"), *records_src = test_path("kernels/records.h");
    copy_file(demo_src, demo);
    copy_file(records_src, records);
    char *project = test_path("cmake_consumer");
    moxc_buf b = {0};
    moxc_buf_printf(&b, "-DKERNELS=%s", kernels);
    char *kernels_arg = moxc_buf_finish(&b);
    const char *configure[] = {"cmake", "-S", project, "-B", build_dir, "-G", generator,
                               "-DCMAKE_PREFIX_PATH=" MOX_TEST_INSTALL_PREFIX, "-DCMAKE_C_COMPILER=" MOX_CC,
                               "-DMOX_NVCC=", kernels_arg, NULL};
    free(run_ok(configure));

    char *out = build(build_dir);
    assert_non_null(strstr(out, "moxc: building kernels of module demo"));
    /* DEFINES reached moxc's front end and the CPU compiler (defined.c
     * #errors without them and needs _GNU_SOURCE's M_PI) */
    assert_non_null(strstr(out, "moxc: building kernels of module defines_demo"));
    assert_non_null(strstr(out, "Built mox artifact"));
    assert_non_null(strstr(out, "use.c.o"));
    free(out);
    char *app = moxc_path_join(build_dir, "consumer_app");
    const char *run_app[] = {app, NULL};
    out = run_ok(run_app);
    assert_non_null(strstr(out, "consumer: demo_scale of 1000 floats verified on "));
    free(out);
    free(app);
    char *header = moxc_path_join(build_dir, "mox/demo/demo.h");
    assert_int_equal(access(header, R_OK), 0);

    out = build(build_dir);
    if (strstr(out, "building kernels") || strstr(out, "Building C object"))
        fail_msg("%s: the second build did work:\n%s", generator, out);
    free(out);

    /* A kernel edit: new artifact, new bindings source, same header. */
    append(demo, "\nstatic float unused_helper(float v)\n{\n    return v;\n}\n");
    out = build(build_dir);
    if (!strstr(out, "building kernels of module demo") || !strstr(out, "demo.c.o") || strstr(out, "use.c.o"))
        fail_msg("%s: a kernel edit should rebuild the bindings only:\n%s", generator, out);
    free(out);

    /* An included header's edit reruns moxc. */
    append(records, "/* edited */\n");
    out = build(build_dir);
    if (!strstr(out, "building kernels of module demo"))
        fail_msg("%s: a header edit did not rerun moxc:\n%s", generator, out);
    free(out);

    free(header);
    free(kernels_arg);
    free(project);
    free(demo_src);
    free(records_src);
    free(demo);
    free(records);
    free(kernels);
    free(build_dir);
    test_rmdir(dir);
}

static void test_ninja(void **state)
{
    (void)state;
    char *ninja = moxc_find_program("ninja");
    if (!ninja)
        skip();
    free(ninja);
    consumer("Ninja");
}

static void test_makefiles(void **state)
{
    (void)state;
    consumer("Unix Makefiles");
}

int main(void)
{
    setenv("MOX_BACKEND", "cpu", 1); /* the consumer's program, also on GPU machines */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ninja),
        cmocka_unit_test(test_makefiles),
    };
    return cmocka_run_group_tests_name("moxc_cmake", tests, NULL, NULL);
}
