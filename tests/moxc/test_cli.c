/* test_cli.c - moxc's command line: --version, --help, usage errors (exit
 * 2), kernel errors and compiler failures (exit 1, messages), inspect's
 * emit kinds against the golden files, and doctor (also with tools that are
 * found but broken). */
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

#include "test_support.h"

#define MOXC MOXC_EXECUTABLE

static char *demo_c(void)
{
    return test_path("kernels/demo.c");
}

#define MOXC_RUN(out, ...) run_program(MOXC, out, (const char *const[]){__VA_ARGS__, NULL})
#define EXPECT_RUN(rc, needle, ...) expect_program(MOXC, rc, needle, (const char *const[]){__VA_ARGS__, NULL})

static void test_version_and_help(void **state)
{
    (void)state;
    char *out;
    int rc = MOXC_RUN(&out, "--version");
    assert_int_equal(rc, 0);
    assert_string_equal(out, "moxc " MOXC_VERSION_TEXT "\n");
    free(out);
    rc = MOXC_RUN(&out, "--help");
    expect_exit(rc, 0, out, "usage: moxc build --name NAME --out-dir DIR");
    rc = MOXC_RUN(&out, "help");
    expect_exit(rc, 0, out, "--cuda-arch sm_XX");
}

static void test_usage_errors(void **state)
{
    (void)state;
    char *src = demo_c();
    expect_program(MOXC, 2, "no command given", (const char *const[]){NULL});
    EXPECT_RUN(2, "unknown command 'frobnicate'", "frobnicate");
    EXPECT_RUN(2, "takes no arguments", "--version", "extra");
    EXPECT_RUN(2, "--name is required", "build", "--out-dir", "/tmp/x", src);
    EXPECT_RUN(2, "--out-dir is required", "build", "--name", "demo", src);
    EXPECT_RUN(2, "no kernel sources", "build", "--name", "demo", "--out-dir", "/tmp/x");
    EXPECT_RUN(2, "--name given more than once", "build", "--name", "a", "--name", "b", "--out-dir", "/tmp/x", src);
    EXPECT_RUN(2, "unknown option '--frob'", "build", "--name", "demo", "--out-dir", "/tmp/x", "--frob", src);
    EXPECT_RUN(2, "--out-dir needs a value", "build", "--name", "demo", "--out-dir");
    EXPECT_RUN(2, "--name needs a non-empty value", "build", "--name=", "--out-dir", "/tmp/x", src);
    EXPECT_RUN(2, "--emit is only for moxc inspect", "build", "--name", "demo", "--out-dir", "/tmp/x", "--emit", "abi", src);
    EXPECT_RUN(2, "--depfile-target needs --depfile", "build", "--name", "demo", "--out-dir", "/tmp/x", "--depfile-target", "t", src);
    EXPECT_RUN(2, "--emit is required", "inspect", src);
    EXPECT_RUN(2, "unknown --emit kind 'llvm'", "inspect", "--emit", "llvm", src);
    EXPECT_RUN(2, "needs --name and --out-dir", "inspect", "--emit", "bindings", src);
    /* An invalid --name is bad usage, before any source is read. */
    EXPECT_RUN(2, "moxc: --name '9bad' is not a C identifier", "build", "--name", "9bad", "--out-dir", "/tmp/x", src);
    EXPECT_RUN(2, "--name 'a-b' is not a C identifier", "inspect", "--emit", "abi", "--name", "a-b", "/nonexistent.c");
    char long_name[202];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    EXPECT_RUN(2, "(of at most 200 characters)", "build", "--name", long_name, "--out-dir", "/tmp/x", src);
    long_name[200] = '\0';
    EXPECT_RUN(2, "--out-dir is required", "build", "--name", long_name, src);
    EXPECT_RUN(2, "doctor takes no sources", "doctor", src);
    EXPECT_RUN(2, "doctor does not take -I", "doctor", "-I", "/tmp");
    free(src);
}

static void test_kernel_errors(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("cli-errors");
    char *bad = moxc_path_join(dir, "bad.c");
    write_text(bad, "#include <mox/kernel.h>\nMOX_KERNEL\nvoid bad(double *values)\n{\n    values[0] = 1.0;\n}\n");
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "bad", "--out-dir", dir, "--no-cuda", bad);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "bad.c:3:"));
    expect_exit(rc, 1, out, "moxc: module bad has errors");
    char *src = demo_c();
    /* Without --name the message does not name the default module. */
    rc = MOXC_RUN(&out, "inspect", "--emit", "abi", bad);
    assert_null(strstr(out, "module module"));
    expect_exit(rc, 1, out, "moxc: the kernels have errors\n");
    EXPECT_RUN(2, "bad --cuda-arch 'compute_90'", "build", "--name", "demo", "--out-dir", dir, "--cuda-arch", "compute_90", src);
    EXPECT_RUN(1, "nvcc '/nonexistent/nvcc' not found", "build", "--name", "demo", "--out-dir", dir, "--nvcc", "/nonexistent/nvcc", src);
    EXPECT_RUN(1, "C compiler '/nonexistent/cc' not found", "build", "--name", "demo", "--out-dir", dir, "--cc", "/nonexistent/cc", src);
    free(src);
    free(bad);
    test_rmdir(dir);
}

/* A compiler that answers --version and fails every compile. */
static char *fake_compiler(const char *dir, const char *name, const char *message)
{
    char *path = moxc_path_join(dir, name);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '%s 1.0 release 1.0'; exit 0; fi\n"
                        "echo '%s' >&2\nexit 3\n", name, message);
    char *script = moxc_buf_finish(&b);
    write_text(path, script);
    assert_int_equal(chmod(path, 0755), 0);
    free(script);
    return path;
}

static void test_compiler_failures(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("cli-compilers");
    char *fake_nvcc = fake_compiler(dir, "nvcc", "kernels_cuda.cu(12): error: the fake nvcc refuses");
    char *fake_cc = fake_compiler(dir, "cc", "kernels_cpu.c:7: error: the fake cc refuses");
    char *out_dir = moxc_path_join(dir, "out");
    char *src = demo_c();
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "demo", "--out-dir", out_dir, "--cc", MOX_CC, "--nvcc", fake_nvcc,
                      src);
    assert_non_null(strstr(out, "moxc: nvcc failed for module demo:\nkernels_cuda.cu(12): error: the fake nvcc refuses"));
    expect_exit(rc, 1, out, NULL);
    rc = MOXC_RUN(&out, "build", "--name", "demo", "--out-dir", out_dir, "--cc", fake_cc, "--no-cuda", src);
    expect_exit(rc, 1, out, "moxc: cc failed for module demo:\nkernels_cpu.c:7: error: the fake cc refuses");
    /* Failed builds publish nothing and leave no stage behind. */
    char *listing = NULL;
    const char *ls[] = {"/bin/ls", "-A", out_dir, NULL};
    assert_int_equal(run_capture(ls, &listing), 0);
    assert_string_equal(listing, ".lock\n");
    free(listing);
    free(src);
    free(out_dir);
    free(fake_nvcc);
    free(fake_cc);
    test_rmdir(dir);
}

/* nvcc's messages name the user's source and line (#line in the CUDA
 * unit): here designated initialisers out of order, C but not C++ (and
 * nothing moxc's own checks reject). */
static void test_nvcc_error_location(void **state)
{
    (void)state;
    const char *nvcc = test_nvcc();
    if (!nvcc)
        skip();
    char *dir = test_mkdtemp("cli-nvcc");
    char *src = moxc_path_join(dir, "cxx.c");
    write_text(src, "#include <mox/kernel.h>\n\nMOX_KERNEL\nvoid cxx(float *out)\n{\n"
                    "    mox_float2 v = {.y = 1.0f, .x = 2.0f};\n    out[0] = v.x - v.y;\n}\n");
    char *out_dir = moxc_path_join(dir, "out");
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "cxx", "--out-dir", out_dir, "--nvcc", nvcc, src);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s(6): error", src);
    char *where = moxc_buf_finish(&b);
    assert_non_null(strstr(out, "moxc: nvcc failed for module cxx:\n"));
    expect_exit(rc, 1, out, where);
    free(where);
    free(out_dir);
    free(src);
    test_rmdir(dir);
}

static void check_inspect(const char *emit, const char *golden)
{
    char *src = demo_c();
    char *out;
    int rc = MOXC_RUN(&out, "inspect", "--emit", emit, src);
    if (rc != 0)
        fail_msg("inspect --emit %s: exit %d\n%s", emit, rc, out);
    /* inspect prints exactly the text; abi.json itself has no newline. */
    if (strcmp(emit, "abi") == 0) {
        size_t n = strlen(out);
        assert_true(n > 0 && out[n - 1] == '\n');
        out[n - 1] = '\0';
    }
    check_golden(golden, out);
    free(out);
    free(src);
}

static void test_inspect_texts(void **state)
{
    (void)state;
    check_inspect("abi", "demo/abi.json");
    /* The front end defers the gate check of scale and tile (the
     * hand-built module of test_gen.c, demo/kernels_cuda.cu, has no
     * analysis: its text is what every kernel got before). */
    check_inspect("cuda", "demo/kernels_cuda.cu");
    check_inspect("cpu", "demo/kernels_cpu.c");
    char *dir = test_mkdtemp("cli-inspect");
    char *src = demo_c();
    char *out;
    int rc = MOXC_RUN(&out, "inspect", "--emit", "bindings", "--name", "demo", "--out-dir", dir, "--no-cuda", src);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "#ifndef MOX_GENERATED_DEMO_H"));
    assert_non_null(strstr(out, "\"MOX_ARTIFACT_DEMO\""));
    assert_non_null(strstr(out, dir));
    free(out);
    /* Nothing was built. */
    char *listing = NULL;
    const char *ls[] = {"/bin/ls", "-A", dir, NULL};
    assert_int_equal(run_capture(ls, &listing), 0);
    assert_string_equal(listing, "");
    free(listing);
    free(src);
    test_rmdir(dir);
}

static void test_inspect_disassembly(void **state)
{
    (void)state;
    char *src = demo_c();
    char *out;
    EXPECT_RUN(1, "needs nvcc", "inspect", "--emit", "sass", "--no-cuda", src);
    const char *nvcc = test_nvcc();
    if (!nvcc) {
        free(src); /* skip() does not return */
        skip();
    }
    char *cuobjdump = moxc_find_cuobjdump(nvcc);
    int rc = MOXC_RUN(&out, "inspect", "--emit", "ptx", "--nvcc", nvcc, src);
    if (!cuobjdump) {
        expect_exit(rc, 1, out, "needs cuobjdump");
    } else {
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "mox_entry_scale"));
        free(out);
        rc = MOXC_RUN(&out, "inspect", "--emit", "sass", "--nvcc", nvcc, src);
        expect_exit(rc, 0, out, "mox_entry_integrate");
    }
    free(cuobjdump);
    free(src);
}

/* cuobjdump is looked up next to nvcc, then in PATH; an nvcc named without
 * a directory (or a bogus name) has no directory to look in. */
static void test_find_cuobjdump(void **state)
{
    (void)state;
    char *in_path = moxc_find_program("cuobjdump");
    const char *names[] = {"nvcc", "MOX_NVCC-NOTFOUND", ""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        char *found = moxc_find_cuobjdump(names[i]);
        if (in_path)
            assert_string_equal(found, in_path);
        else
            assert_null(found);
        free(found);
    }
    char *dir = test_mkdtemp("cli-cuobjdump");
    char *fake = moxc_path_join(dir, "cuobjdump");
    write_text(fake, "#!/bin/sh\nexit 0\n");
    assert_int_equal(chmod(fake, 0755), 0);
    char *nvcc = moxc_path_join(dir, "nvcc");
    char *found = moxc_find_cuobjdump(nvcc);
    assert_non_null(found);
    assert_string_equal(found, fake);
    free(found);
    free(nvcc);
    free(fake);
    free(in_path);
    test_rmdir(dir);
}

static void test_doctor(void **state)
{
    (void)state;
    char *out;
    int rc = MOXC_RUN(&out, "doctor", "--cc", MOX_CC);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "[ok] C compiler: " MOX_CC));
    assert_non_null(strstr(out, "[ok] libclang: "));
    /* Where moxc is, and the headers next to it (the build tree mirrors an
     * install: <build>/bin/moxc, <build>/include). */
    char *self = realpath(MOXC, NULL);
    assert_non_null(self);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "[ok] moxc: %s\n", self);
    char *self_line = moxc_buf_finish(&b);
    assert_non_null(strstr(out, self_line));
    assert_non_null(strstr(out, "[ok] mox headers: "));
    assert_non_null(strstr(out, "/mox/kernel.h (the include directory next to moxc's bin directory)\n"));
    free(self_line);
    free(self);
    assert_non_null(strstr(out, "libcuda.so.1"));
    assert_non_null(strstr(out, "mode: "));
    if (test_nvcc())
        assert_non_null(strstr(out, "[ok] nvcc: "));
    free(out);
    rc = MOXC_RUN(&out, "doctor", "--no-cuda");
    assert_non_null(strstr(out, "[skipped] CUDA checks"));
    expect_exit(rc, 0, out, "mode: CPU-only: kernels build and run on the CPU backend");
    rc = MOXC_RUN(&out, "doctor", "--cc", "/nonexistent/cc");
    assert_non_null(strstr(out, "[missing] C compiler: /nonexistent/cc\n      hint: "));
    expect_exit(rc, 1, out, "moxc cannot build kernels here");
    rc = MOXC_RUN(&out, "doctor", "--no-cuda", "--mox-include", "/nonexistent");
    assert_non_null(strstr(out, "[missing] mox headers: /nonexistent/mox/kernel.h (--mox-include)\n      hint: "));
    expect_exit(rc, 1, out, "moxc cannot build kernels here");
    /* A --nvcc that is not there fails doctor, as it fails build. */
    rc = MOXC_RUN(&out, "doctor", "--nvcc", "/nonexistent/nvcc");
    assert_non_null(strstr(out, "[missing] nvcc: /nonexistent/nvcc\n      hint: the --nvcc path does not exist: "
                                "correct it"));
    assert_non_null(strstr(out, "moxc build with this --nvcc fails\n"));
    assert_null(strstr(out, "install the CUDA 13 toolkit"));
    assert_null(strstr(out, "mode: "));
    expect_exit(rc, 1, out, "moxc cannot build kernels here");
    /* A directory is there but is no nvcc. */
    rc = MOXC_RUN(&out, "doctor", "--nvcc", "/tmp");
    assert_non_null(strstr(out, "[missing] nvcc: /tmp\n      hint: the --nvcc path is not an executable file"));
    expect_exit(rc, 1, out, "moxc cannot build kernels here");
}

/* An nvcc (or C compiler) that is found but whose --version fails - a
 * wrapper whose target is gone - is reported as broken, and doctor fails as
 * build does, instead of calling it missing and promising a CPU-only build. */
static void test_doctor_broken_tools(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("cli-doctor");
    char *nvcc = moxc_path_join(dir, "nvcc");
    write_text(nvcc, "#!/bin/sh\necho \"$0: 2: exec: /gone/cuda/bin/nvcc: not found\" >&2\nexit 127\n");
    assert_int_equal(chmod(nvcc, 0755), 0);
    char *src = demo_c();
    char *out_dir = moxc_path_join(dir, "out");
    char *out;
    int rc = MOXC_RUN(&out, "build", "--name", "demo", "--out-dir", out_dir, "--cc", MOX_CC, "--nvcc", nvcc, src);
    expect_exit(rc, 1, out, "moxc: nvcc --version failed (");
    rc = MOXC_RUN(&out, "doctor", "--cc", MOX_CC, "--nvcc", nvcc);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "[broken] nvcc: %s: nvcc --version failed: %s: 2: exec: /gone/cuda/bin/nvcc: not found "
                        "(exit status 127)\n      hint: moxc build stops at this nvcc", nvcc, nvcc);
    char *line = moxc_buf_finish(&b);
    if (!strstr(out, line))
        fail_msg("doctor's output lacks\n%s\n---\n%s", line, out);
    assert_null(strstr(out, "mode: "));
    expect_exit(rc, 1, out, "moxc cannot build kernels here: install or repair what is missing or broken above");
    free(line);
    /* The same wrapper as the C compiler. */
    rc = MOXC_RUN(&out, "doctor", "--no-cuda", "--cc", nvcc);
    assert_non_null(strstr(out, "[broken] C compiler: "));
    expect_exit(rc, 1, out, "the C compiler --version failed: ");
    free(out_dir);
    free(src);
    free(nvcc);
    test_rmdir(dir);
}

int main(void)
{
    /* The demo goldens are test_gen's too, whose hand-built module has no
     * gate analysis: this moxc keeps every gate check at entry. The default
     * deferred entries are pinned by golden/features and golden/gate. */
    setenv("MOXC_GATE_DEFER", "0", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_kernel_errors),
        cmocka_unit_test(test_compiler_failures),
        cmocka_unit_test(test_nvcc_error_location),
        cmocka_unit_test(test_inspect_texts),
        cmocka_unit_test(test_inspect_disassembly),
        cmocka_unit_test(test_find_cuobjdump),
        cmocka_unit_test(test_doctor),
        cmocka_unit_test(test_doctor_broken_tools),
    };
    return cmocka_run_group_tests_name("moxc_cli", tests, NULL, NULL);
}
