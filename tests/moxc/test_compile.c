/* test_compile.c - the generated code compiles and works: the bindings as
 * strict C11 (-Werror) and the header as C++17; mox's public headers alone
 * as C11 and C++17; kernels_cpu.c as moxc compiles it, loaded with dlopen
 * and run through mox_cpu_module()'s table; kernels_cuda.cu with nvcc when
 * it is there. */
#include <dirent.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <mox/kernel_abi.h>

#include "test_support.h"

#define STRICT_C "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes", \
                 "-Wmissing-prototypes", "-Wconversion"

typedef struct fixture {
    char *dir;
    moxc_module *module;
    char sha[65];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("compile");
    f->module = demo_module();
    char *json;
    assert_true(moxc_gen_abi(f->module, &json, f->sha));
    free(json);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_rmdir(f->dir);
    demo_module_free(f->module);
    free(f);
    return 0;
}

static char *in_dir(const fixture *f, const char *name)
{
    char *p = moxc_path_join(f->dir, name);
    assert_non_null(p);
    return p;
}

static void write_in(const fixture *f, const char *name, const char *text)
{
    char *p = in_dir(f, name);
    write_text(p, text);
    free(p);
}

static void expect_compiles(const char *const *argv)
{
    char *out = NULL;
    int rc = run_capture(argv, &out);
    if (rc != 0)
        fail_msg("%s failed (%d):\n%s", argv[0], rc, out);
    free(out);
}

static void test_bindings_compile(void **state)
{
    fixture *f = *state;
    char *h = moxc_gen_bindings_h(f->module, "demo");
    char *c = moxc_gen_bindings_c(f->module, "demo", "/artifacts/demo");
    write_in(f, "demo.h", h);
    write_in(f, "demo.c", c);
    write_in(f, "only_header.c", "#include \"demo.h\"\n");
    /* C++ (pedantic): the MOX_ARG_* macros, options initialised as install.md says */
    write_in(f, "only_header.cpp",
             "#include \"demo.h\"\n"
             "static mox_arg second(mox_buffer *b, const float *v) {\n"
             "    mox_arg a[2] = {MOX_ARG_READ(b), MOX_ARG_VALUE(v, &mox_type_f32)};\n"
             "    return a[1];\n"
             "}\n"
             "int main() {\n"
             "    mox_device_options o{};\n"
             "    o.backend = MOX_BACKEND_CPU;\n"
             "    float v = 1.0f;\n"
             "    return demo_module.kernel_count == 4 && second(nullptr, &v).value == &v && o.cpu_threads == 0 ? 0 : 1;\n"
             "}\n");
    char *src = in_dir(f, "demo.c"), *obj = in_dir(f, "demo.o");
    char *hc = in_dir(f, "only_header.c"), *hcpp = in_dir(f, "only_header.cpp");
    const char *c11[] = {MOX_CC, STRICT_C, "-I" MOX_INCLUDE_DIR, "-c", src, "-o", obj, NULL};
    expect_compiles(c11);
    const char *header_c[] = {MOX_CC, STRICT_C, "-I" MOX_INCLUDE_DIR, "-fsyntax-only", hc, NULL};
    expect_compiles(header_c);
    const char *header_cpp[] = {MOX_CXX, "-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                                "-I" MOX_INCLUDE_DIR, "-fsyntax-only", hcpp, NULL};
    expect_compiles(header_cpp);
    free(src);
    free(obj);
    free(hc);
    free(hcpp);
    free(h);
    free(c);
}

/* A layout that disagrees with the header must stop the compile. */
static void test_static_asserts_fire(void **state)
{
    fixture *f = *state;
    char *c = moxc_gen_bindings_c(f->module, "demo", "/artifacts/demo");
    char *h = moxc_gen_bindings_h(f->module, "demo");
    char *bad = replace_all(c, "offsetof(Particle, mass) == 16", "offsetof(Particle, mass) == 20");
    assert_string_not_equal(bad, c);
    write_in(f, "demo.h", h);
    write_in(f, "bad.c", bad);
    char *src = in_dir(f, "bad.c");
    const char *argv[] = {MOX_CC, "-std=c11", "-I" MOX_INCLUDE_DIR, "-fsyntax-only", src, NULL};
    char *out = NULL;
    assert_int_not_equal(run_capture(argv, &out), 0);
    assert_non_null(strstr(out, "record Particle: offset of mass differs from the kernel ABI"));
    free(out);
    free(src);
    free(bad);
    free(c);
    free(h);
}

/* Every public header compiles alone, as C11 and as C++17. kernel_cpu*.h and
 * kernel_cuda*.h are parts of kernel.h and refuse to be included alone. */
static void test_public_headers(void **state)
{
    fixture *f = *state;
    DIR *dir = opendir(MOX_INCLUDE_DIR "/mox");
    assert_non_null(dir);
    struct dirent *e;
    size_t checked = 0;
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".h") != 0 || strncmp(e->d_name, "kernel_cpu", 10) == 0 ||
            strncmp(e->d_name, "kernel_cuda", 11) == 0)
            continue;
        moxc_buf b = {0};
        moxc_buf_printf(&b, "#include <mox/%s>\n", e->d_name);
        char *text = moxc_buf_finish(&b);
        write_in(f, "header.c", text);
        write_in(f, "header.cpp", text);
        char *c = in_dir(f, "header.c"), *cpp = in_dir(f, "header.cpp");
        const char *as_c[] = {MOX_CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I" MOX_INCLUDE_DIR,
                              "-fsyntax-only", c, NULL};
        const char *as_cpp[] = {MOX_CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I" MOX_INCLUDE_DIR,
                                "-fsyntax-only", cpp, NULL};
        print_message("checking mox/%s\n", e->d_name);
        expect_compiles(as_c);
        expect_compiles(as_cpp);
        free(c);
        free(cpp);
        free(text);
        ++checked;
    }
    closedir(dir);
    assert_true(checked >= 10);
}

/* What the runtime's executor gives kernel code: only fail is needed by
 * the kernels run here. */
static uint32_t fail_code;
static unsigned fail_count;
static void record_fail(void *dispatch, uint32_t code)
{
    (void)dispatch;
    if (fail_count++ == 0)
        fail_code = code;
}

static void *load_cpu_module(const fixture *f, const mox_cpu_module_entry **entry)
{
    char *cpu = moxc_gen_cpu(f->module, f->sha);
    write_in(f, "kernels_cpu.c", cpu);
    char *src = in_dir(f, "kernels_cpu.c"), *so = in_dir(f, "kernels_cpu.so");
    /* moxc's flags, plus warnings as errors: generated code must be clean. */
    const char *argv[] = {MOX_CC, "-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math",
                          "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror", "-I" MOX_INCLUDE_DIR, "-o", so, src,
                          "-lm", NULL};
    expect_compiles(argv);
    void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail_msg("dlopen: %s", dlerror());
    const mox_cpu_module_entry *(*get)(void) = (const mox_cpu_module_entry *(*)(void))dlsym(lib, MOX_CPU_MODULE_SYMBOL);
    assert_non_null(get);
    *entry = get();
    free(src);
    free(so);
    free(cpu);
    return lib;
}

static void test_cpu_module_table(void **state)
{
    fixture *f = *state;
    const mox_cpu_module_entry *entry;
    void *lib = load_cpu_module(f, &entry);
    assert_int_equal(entry->interface_version, MOX_CPU_INTERFACE_VERSION);
    assert_int_equal(entry->kernel_count, 4);
    assert_string_equal(entry->abi_sha256, f->sha);
    static const char *const names[] = {"scale", "integrate", "tile", "noop"};
    /* The hand-built module has no CPU plans: the barrier kernel runs on
     * fibers, the others call the kernel once per thread. */
    static const uint32_t executors[] = {MOX_CPU_EXEC_THREAD_CALLS, MOX_CPU_EXEC_THREAD_CALLS, MOX_CPU_EXEC_FIBERS,
                                         MOX_CPU_EXEC_THREAD_CALLS};
    for (uint32_t i = 0; i < 4; ++i) {
        assert_string_equal(entry->kernels[i].name, names[i]);
        assert_non_null(entry->kernels[i].thread_fn);
        assert_int_equal(entry->kernels[i].executor, executors[i]);
        if (executors[i] == MOX_CPU_EXEC_FIBERS)
            assert_null(entry->kernels[i].group_fn);
        else
            assert_non_null(entry->kernels[i].group_fn);
        assert_int_equal(entry->kernels[i].features, f->module->abi->kernels[i].features);
    }
    assert_non_null(entry->lane_slot);
    assert_non_null(entry->lane_slot());
    /* -fvisibility=hidden: only the module entry point is exported. */
    assert_null(dlsym(lib, "mox__thread_scale"));
    assert_null(dlsym(lib, "scale"));
    dlclose(lib);
}

static void test_cpu_kernels_run(void **state)
{
    fixture *f = *state;
    const mox_cpu_module_entry *entry;
    void *lib = load_cpu_module(f, &entry);
    mox_cpu_services svc = {NULL, NULL, record_fail};
    mox_cpu_lane lane = {.block_dim = {256, 1, 1}, .grid_dim = {2, 1, 1}, .svc = &svc};

    /* scale over a 2-block grid, 300 elements: output = 2 * input + 1. */
    float input[512], output[512];
    for (int i = 0; i < 512; ++i) {
        input[i] = (float)i * 0.5f;
        output[i] = -1.0f;
    }
    void *in_ptr = input, *out_ptr = output;
    _Alignas(16) uint32_t n = 300;
    void *args[] = {&in_ptr, &out_ptr, &n};
    mox_cpu_group group = {.block_dim = lane.block_dim, .grid_dim = lane.grid_dim, .lane = &lane};
    *entry->lane_slot() = &lane;
    for (uint32_t b = 0; b < 2; ++b) {
        group.block_idx = lane.block_idx = (mox_kdim3){b, 0, 0};
        entry->kernels[0].group_fn(args, &group);
    }
    for (int i = 0; i < 512; ++i)
        assert_true(output[i] == (i < 300 ? (float)i * 0.5f * 2.0f + 1.0f : -1.0f));
    assert_ptr_equal(*entry->lane_slot(), &lane);
    assert_int_equal(lane.linear, 255);

    /* integrate: records by pointer and by value, an f16 value, an atomic
     * counter, mox_fail from one thread. The thread function runs one
     * thread with the lane the runtime installed. */
    struct particle { float px, py, vx, vy, mass; uint32_t id; } particles[4] = {
        {0, 0, 1, 2, 1, 0}, {1, 1, 1, 1, 1, 1}, {5, 5, 1, 1, -1, 2}, {9, 9, 9, 9, 9, 3}};
    _Alignas(16) unsigned char config[12] = {0};
    float dt = 0.5f;
    uint32_t count = 3;
    memcpy(config, &dt, 4);
    memcpy(config + 4, &count, 4);
    _Alignas(16) uint16_t gain = 0x4000; /* 2.0 */
    uint32_t counter = 0;
    void *particles_ptr = particles, *counter_ptr = &counter;
    void *iargs[] = {&particles_ptr, config, &gain, &counter_ptr};
    mox_cpu_lane one = {.block_dim = {4, 1, 1}, .grid_dim = {1, 1, 1}, .svc = &svc};
    *entry->lane_slot() = &one;
    for (uint32_t t = 0; t < 4; ++t) {
        one.thread_idx = (mox_kdim3){t, 0, 0};
        one.linear = t;
        entry->kernels[1].thread_fn(iargs);
    }
    assert_true(particles[0].px == 1.0f && particles[0].py == 2.0f);
    assert_true(particles[1].px == 2.0f && particles[1].py == 2.0f);
    assert_true(particles[2].px == 5.0f); /* failed before moving */
    assert_true(particles[3].px == 9.0f); /* i >= count */
    assert_int_equal(counter, 2);
    assert_int_equal(fail_count, 1);
    assert_int_equal(fail_code, 7);

    /* noop has no arguments at all. */
    *entry->lane_slot() = &lane;
    entry->kernels[3].group_fn(NULL, &group);
    entry->kernels[3].thread_fn(NULL);
    dlclose(lib);
}

static void test_cuda_tu_compiles(void **state)
{
    fixture *f = *state;
    const char *nvcc = test_nvcc();
    if (!nvcc)
        skip();
    moxc_source_text text = demo_source_text(f->module);
    char *cu = moxc_gen_cuda(f->module, &text, 1);
    free((char *)(uintptr_t)text.data);
    write_in(f, "kernels_cuda.cu", cu);
    char *src = in_dir(f, "kernels_cuda.cu"), *out = in_dir(f, "kernels.fatbin");
    char *kernels_dir = test_path("kernels");
    moxc_buf b = {0};
    moxc_buf_printf(&b, "-I%s", kernels_dir);
    char *inc = moxc_buf_finish(&b);
    const char *argv[] = {nvcc, "-fatbin", "-x", "cu", "-std=c++17", "-O3", "-fmad=false", "-prec-div=true",
                          "-prec-sqrt=true", "-ftz=false", "-gencode", "arch=compute_90,code=sm_90",
                          "-I" MOX_INCLUDE_DIR, inc, "-o", out, src, NULL};
    expect_compiles(argv);
    assert_int_equal(access(out, R_OK), 0);
    free(inc);
    free(kernels_dir);
    free(src);
    free(out);
    free(cu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bindings_compile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_static_asserts_fire, setup, teardown),
        cmocka_unit_test_setup_teardown(test_public_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_module_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_kernels_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda_tu_compiles, setup, teardown),
    };
    return cmocka_run_group_tests_name("moxc_compile", tests, NULL, NULL);
}
