/* test_cuda_entry.c - the generated CUDA entries on a real GPU, without the
 * runtime: loads the demo module's kernels.fatbin (built by moxc with nvcc
 * at build time)
 * through the driver API (dlopen'd, as the runtime does) and launches the
 * mox_entry_* functions directly: results, launch bounds, gating on a
 * failed dependency (checked at entry, or after the loads for kernels
 * whose check moxc defers), and mox_fail recording FAILED + code + host
 * flag.
 * Exits 77 (skip) without nvcc, libcuda.so.1 or a device. */
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/kernel_abi.h>

#include "test_support.h"

typedef unsigned long long cu_ptr;
typedef int cu_result;

static struct cuda {
    void *lib;
    cu_result (*init)(unsigned);
    cu_result (*device_count)(int *);
    cu_result (*device_get)(int *, int);
    cu_result (*primary_retain)(void **, int);
    cu_result (*primary_release)(int);
    cu_result (*ctx_set_current)(void *);
    cu_result (*module_load_data)(void **, const void *);
    cu_result (*module_unload)(void *);
    cu_result (*module_get_function)(void **, void *, const char *);
    cu_result (*mem_alloc)(cu_ptr *, size_t);
    cu_result (*mem_free)(cu_ptr);
    cu_result (*htod)(cu_ptr, const void *, size_t);
    cu_result (*dtoh)(void *, cu_ptr, size_t);
    cu_result (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
    cu_result (*synchronize)(void);
    int device;
    void *module;
} cu;

#define CU(call) assert_int_equal((call), 0)

static bool load_driver(void)
{
    cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib)
        return false;
    static const struct { const char *name; size_t offset; } syms[] = {
        {"cuInit", offsetof(struct cuda, init)},
        {"cuDeviceGetCount", offsetof(struct cuda, device_count)},
        {"cuDeviceGet", offsetof(struct cuda, device_get)},
        {"cuDevicePrimaryCtxRetain", offsetof(struct cuda, primary_retain)},
        {"cuDevicePrimaryCtxRelease_v2", offsetof(struct cuda, primary_release)},
        {"cuCtxSetCurrent", offsetof(struct cuda, ctx_set_current)},
        {"cuModuleLoadData", offsetof(struct cuda, module_load_data)},
        {"cuModuleUnload", offsetof(struct cuda, module_unload)},
        {"cuModuleGetFunction", offsetof(struct cuda, module_get_function)},
        {"cuMemAlloc_v2", offsetof(struct cuda, mem_alloc)},
        {"cuMemFree_v2", offsetof(struct cuda, mem_free)},
        {"cuMemcpyHtoD_v2", offsetof(struct cuda, htod)},
        {"cuMemcpyDtoH_v2", offsetof(struct cuda, dtoh)},
        {"cuLaunchKernel", offsetof(struct cuda, launch)},
        {"cuCtxSynchronize", offsetof(struct cuda, synchronize)},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; ++i) {
        void *fn = dlsym(cu.lib, syms[i].name);
        if (!fn)
            return false;
        /* Function pointers and void * have one representation on POSIX. */
        memcpy((char *)&cu + syms[i].offset, &fn, sizeof fn);
    }
    int count = 0;
    return cu.init(0) == 0 && cu.device_count(&count) == 0 && count > 0;
}

/* The demo module's artifact, built by moxc at build time (the test runs on
 * GPU machines that cannot run moxc itself: no libclang there). Its folder
 * under CUDA_ENTRY_ARTIFACTS is the one holding a manifest. */
static char *find_fatbin(void)
{
    DIR *dir = opendir(CUDA_ENTRY_ARTIFACTS);
    assert_non_null(dir);
    char *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        char *artifact = moxc_path_join(CUDA_ENTRY_ARTIFACTS, e->d_name);
        char *path = moxc_path_join(artifact, "kernels.fatbin");
        if (access(path, R_OK) == 0)
            found = path;
        else
            free(path);
        free(artifact);
    }
    closedir(dir);
    return found;
}

static int setup(void **state)
{
    (void)state;
    char *fatbin_path = find_fatbin();
    if (!fatbin_path) {
        print_message("no demo fatbin under %s (built without nvcc)\n", CUDA_ENTRY_ARTIFACTS);
        return -1;
    }
    char *fatbin;
    size_t size;
    assert_true(moxc_read_file(fatbin_path, &fatbin, &size));
    void *ctx;
    CU(cu.device_get(&cu.device, 0));
    CU(cu.primary_retain(&ctx, cu.device));
    CU(cu.ctx_set_current(ctx));
    CU(cu.module_load_data(&cu.module, fatbin));
    free(fatbin);
    free(fatbin_path);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    cu.module_unload(cu.module);
    cu.primary_release(cu.device);
    return 0;
}

static cu_ptr upload(const void *data, size_t size)
{
    cu_ptr p;
    CU(cu.mem_alloc(&p, size));
    CU(cu.htod(p, data, size));
    return p;
}

static void launch(const char *kernel, unsigned grid, unsigned bx, unsigned by, void **params)
{
    char name[64];
    snprintf(name, sizeof name, "mox_entry_%s", kernel);
    void *fn;
    CU(cu.module_get_function(&fn, cu.module, name));
    CU(cu.launch(fn, grid, 1, 1, bx, by, 1, 0, NULL, params, NULL));
    CU(cu.synchronize());
}

static mox_gate gate(cu_ptr status, cu_ptr deps, cu_ptr flag, uint32_t self, uint32_t dep_count)
{
    mox_gate g;
    memset(&g, 0, sizeof g);
    g.status = (uint32_t *)(uintptr_t)status;
    g.deps = (const uint32_t *)(uintptr_t)deps;
    g.host_flag = (uint32_t *)(uintptr_t)flag;
    g.self = self;
    g.dep_count = dep_count;
    return g;
}

static void test_scale_and_gating(void **state)
{
    (void)state;
    float input[512], output[512];
    for (int i = 0; i < 512; ++i)
        input[i] = (float)i * 0.37f - 11.0f;
    memset(output, 0, sizeof output);
    cu_ptr in = upload(input, sizeof input), out = upload(output, sizeof output);
    uint32_t n = 300;
    mox_gate ungated = gate(0, 0, 0, 0, 0);
    void *params[] = {&ungated, &in, &out, &n};
    launch("scale", 2, 256, 1, params);
    float result[512];
    CU(cu.dtoh(result, out, sizeof result));
    for (int i = 0; i < 512; ++i) {
        float expected = i < 300 ? input[i] * 2.0f + 1.0f : 0.0f;
        assert_memory_equal(&result[i], &expected, sizeof expected);
    }

    /* Dispatch 1 depends on dispatch 0, which failed: it must not run and
     * must mark itself GATED. */
    CU(cu.htod(out, output, sizeof output));
    uint32_t words[4] = {MOX_DISPATCH_FAILED, 5, 0, 0}, dep = 0;
    cu_ptr status = upload(words, sizeof words), deps = upload(&dep, sizeof dep);
    mox_gate gated = gate(status, deps, 0, 1, 1);
    void *gated_params[] = {&gated, &in, &out, &n};
    launch("scale", 2, 256, 1, gated_params);
    CU(cu.dtoh(result, out, sizeof result));
    for (int i = 0; i < 512; ++i)
        assert_true(result[i] == 0.0f);
    CU(cu.dtoh(words, status, sizeof words));
    assert_int_equal(words[2], MOX_DISPATCH_GATED);
    assert_int_equal(words[0], MOX_DISPATCH_FAILED);
    cu.mem_free(in);
    cu.mem_free(out);
    cu.mem_free(status);
    cu.mem_free(deps);
}

static mox_gate inline_gate(cu_ptr status, uint32_t self, uint32_t dep_count, const uint32_t *deps)
{
    mox_gate g = gate(status, 0, 0, self, dep_count);
    for (uint32_t i = 0; i < dep_count; ++i)
        g.inline_deps[i] = deps[i];
    return g;
}

/* scale and tile check the gate after their loads (moxc's deferred gate
 * check: `moxc inspect --emit gate` says so for kernels/demo.c). With a
 * failed or gated dependency in any of the gate's forms they must still
 * store nothing and mark themselves GATED; with OK dependencies, or none,
 * they run normally. */
static void test_deferred_gate(void **state)
{
    (void)state;
    float input[512], output[512], result[512];
    for (int i = 0; i < 512; ++i)
        input[i] = (float)i * 0.5f + 3.0f;
    for (int i = 0; i < 512; ++i)
        output[i] = -7.0f;
    cu_ptr in = upload(input, sizeof input), out = upload(output, sizeof output);
    uint32_t n = 400;
    /* slots: 0 OK, 1 FAILED, 2 GATED, 3..7 the launches below */
    uint32_t words[16] = {MOX_DISPATCH_OK, 0, MOX_DISPATCH_FAILED, 9, MOX_DISPATCH_GATED, 0};
    cu_ptr status = upload(words, sizeof words);
    const struct {
        uint32_t deps[4];
        uint32_t count;
        bool bad;
    } cases[] = {
        {{1}, 1, true},          /* one inline dependency, failed */
        {{0, 2}, 2, true},       /* several inline, one gated */
        {{0}, 1, false},         /* one inline, OK */
        {{0, 0, 0, 0}, 4, false} /* four inline, all OK */
    };
    for (uint32_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        CU(cu.htod(out, output, sizeof output));
        mox_gate g = inline_gate(status, 3 + c, cases[c].count, cases[c].deps);
        void *params[] = {&g, &in, &out, &n};
        launch("scale", 2, 256, 1, params);
        CU(cu.dtoh(result, out, sizeof result));
        for (int i = 0; i < 512; ++i) {
            float expected = !cases[c].bad && i < 400 ? input[i] * 2.0f + 1.0f : -7.0f;
            assert_memory_equal(&result[i], &expected, sizeof expected);
        }
        CU(cu.dtoh(words, status, sizeof words));
        assert_int_equal(words[2 * (3 + c)], cases[c].bad ? MOX_DISPATCH_GATED : MOX_DISPATCH_OK);
    }
    assert_int_equal(words[2], MOX_DISPATCH_FAILED); /* a dependency's own state is left alone */

    /* n = 0: no thread reaches a store, so nothing is stored. The check at
     * entry marks the dispatch GATED; in the deferred copy no guard asks
     * the gate, and the deferred entries (their kernels carry
     * MOX_KFEAT_GATE_DEFERRED) ask nothing at their end either: the word
     * stays OK, and the runtime derives the GATED state from the
     * dependency (docs/cuda-backend.md, "Deferred dispatches";
     * tests/cuda/test_cuda_defer.c through the runtime's backend). */
    {
        uint32_t zero = 0, failed = 1;
        CU(cu.htod(out, output, sizeof output));
        mox_gate g0 = inline_gate(status, 7, 1, &failed);
        void *params0[] = {&g0, &in, &out, &zero};
        launch("scale", 2, 256, 1, params0);
        CU(cu.dtoh(result, out, sizeof result));
        assert_memory_equal(result, output, sizeof output);
        CU(cu.dtoh(words, status, sizeof words));
        assert_int_equal(words[14], CUDA_ENTRY_DEFERRED ? MOX_DISPATCH_OK : MOX_DISPATCH_GATED);
    }

    /* tile (shared memory, barriers) behind a failed dependency in a list */
    float sums[2] = {-1.0f, -2.0f};
    cu_ptr s = upload(sums, sizeof sums);
    uint32_t dep = 1;
    cu_ptr deps = upload(&dep, sizeof dep);
    int8_t bias = 4;
    mox_gate g = gate(status, deps, 0, 6, 1);
    void *params[] = {&g, &in, &s, &bias};
    launch("tile", 2, 16, 16, params);
    float after[2];
    CU(cu.dtoh(after, s, sizeof after));
    assert_true(after[0] == -1.0f && after[1] == -2.0f);
    CU(cu.dtoh(words, status, sizeof words));
    assert_int_equal(words[12], MOX_DISPATCH_GATED);
    /* the same launch with the dependency OK writes both sums */
    dep = 0;
    CU(cu.htod(deps, &dep, sizeof dep));
    g = gate(status, deps, 0, 6, 1);
    launch("tile", 2, 16, 16, params);
    CU(cu.dtoh(after, s, sizeof after));
    for (int b = 0; b < 2; ++b) {
        float total = (float)bias;
        for (int k = 0; k < 256; ++k)
            total = total + input[b * 256 + k];
        assert_memory_equal(&after[b], &total, sizeof total);
    }
    cu.mem_free(in);
    cu.mem_free(out);
    cu.mem_free(s);
    cu.mem_free(deps);
    cu.mem_free(status);
}

/* scale's entry checking one dependency (MOX_ENTRY_ONE_DEP_SUFFIX), which
 * the runtime launches for gates of exactly one inline dependency: behind
 * a failed or gated dependency it stores nothing and marks GATED, behind an
 * OK one it runs. A kernel whose check is deferred has no such entry (its
 * gated entries serve every gated launch). */
static void test_one_dependency_entry(void **state)
{
    (void)state;
    void *fn = NULL;
    int found = cu.module_get_function(&fn, cu.module, "mox_entry_scale" MOX_ENTRY_ONE_DEP_SUFFIX) == 0;
#if CUDA_ENTRY_DEFERRED
    assert_false(found);
#else
    assert_true(found);
    float input[512], output[512], result[512];
    for (int i = 0; i < 512; ++i)
        input[i] = (float)i - 100.0f;
    for (int i = 0; i < 512; ++i)
        output[i] = -3.0f;
    cu_ptr in = upload(input, sizeof input), out = upload(output, sizeof output);
    uint32_t n = 450;
    /* slots: 0 OK, 1 FAILED, 2 GATED, 3.. the launches */
    uint32_t words[12] = {MOX_DISPATCH_OK, 0, MOX_DISPATCH_FAILED, 7, MOX_DISPATCH_GATED, 0};
    cu_ptr status = upload(words, sizeof words);
    for (uint32_t dep = 0; dep < 3; ++dep) {
        CU(cu.htod(out, output, sizeof output));
        mox_gate g = gate(status, 0, 0, 3 + dep, 1);
        g.inline_deps[0] = dep;
        void *params[] = {&g, &in, &out, &n};
        CU(cu.launch(fn, 2, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
        CU(cu.synchronize());
        CU(cu.dtoh(result, out, sizeof result));
        for (int i = 0; i < 512; ++i) {
            float expected = dep == 0 && i < 450 ? input[i] * 2.0f + 1.0f : -3.0f;
            assert_memory_equal(&result[i], &expected, sizeof expected);
        }
        CU(cu.dtoh(words, status, sizeof words));
        assert_int_equal(words[2 * (3 + dep)], dep == 0 ? MOX_DISPATCH_OK : MOX_DISPATCH_GATED);
    }
    assert_int_equal(words[2], MOX_DISPATCH_FAILED);
    cu.mem_free(in);
    cu.mem_free(out);
    cu.mem_free(status);
#endif
}

static void test_fail_records(void **state)
{
    (void)state;
    struct particle { float px, py, vx, vy, mass; uint32_t id; } particles[4] = {
        {0, 0, 1, 2, 1, 0}, {1, 1, 1, 1, 1, 1}, {5, 5, 1, 1, -1, 2}, {9, 9, 9, 9, 9, 3}};
    struct config { float dt; uint32_t count; uint16_t steps; uint8_t flags[2]; } config = {0.5f, 3, 0, {0, 0}};
    uint16_t gain = 0x4000; /* 2.0 */
    uint32_t zero[2] = {0, 0}, counter = 0, flag = 0;
    cu_ptr p = upload(particles, sizeof particles), c = upload(&counter, sizeof counter);
    cu_ptr status = upload(zero, sizeof zero), host_flag = upload(&flag, sizeof flag);
    mox_gate g = gate(status, 0, host_flag, 0, 0);
    void *params[] = {&g, &p, &config, &gain, &c};
    launch("integrate", 1, 4, 1, params);
    CU(cu.dtoh(particles, p, sizeof particles));
    CU(cu.dtoh(&counter, c, sizeof counter));
    CU(cu.dtoh(zero, status, sizeof zero));
    CU(cu.dtoh(&flag, host_flag, sizeof flag));
    assert_true(particles[0].px == 1.0f && particles[0].py == 2.0f);
    assert_true(particles[1].px == 2.0f && particles[1].py == 2.0f);
    assert_true(particles[2].px == 5.0f);
    assert_true(particles[3].px == 9.0f);
    assert_int_equal(counter, 2);
    assert_int_equal(zero[0], MOX_DISPATCH_FAILED);
    assert_int_equal(zero[1], 7);
    assert_int_equal(flag, 1);
    cu.mem_free(p);
    cu.mem_free(c);
    cu.mem_free(status);
    cu.mem_free(host_flag);
}

static void test_shared_and_barrier(void **state)
{
    (void)state;
    float values[512], sums[2] = {0, 0};
    for (int i = 0; i < 512; ++i)
        values[i] = 1.0f / (float)(i + 1);
    cu_ptr v = upload(values, sizeof values), s = upload(sums, sizeof sums);
    int8_t bias = -3;
    mox_gate g = gate(0, 0, 0, 0, 0);
    void *params[] = {&g, &v, &s, &bias};
    launch("tile", 2, 16, 16, params);
    CU(cu.dtoh(sums, s, sizeof sums));
    for (int b = 0; b < 2; ++b) {
        float total = (float)bias;
        for (int k = 0; k < 256; ++k)
            total = total + values[b * 256 + k];
        assert_memory_equal(&sums[b], &total, sizeof total);
    }
    cu.mem_free(v);
    cu.mem_free(s);
}

int main(void)
{
    if (!test_nvcc() || !load_driver()) {
        fprintf(stderr, "skipped: needs nvcc, libcuda.so.1 and a CUDA device\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_and_gating),
        cmocka_unit_test(test_deferred_gate),
        cmocka_unit_test(test_one_dependency_entry),
        cmocka_unit_test(test_fail_records),
        cmocka_unit_test(test_shared_and_barrier),
    };
    return cmocka_run_group_tests_name("moxc_cuda_entry", tests, setup, teardown);
}
