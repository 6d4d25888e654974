/* runner_gpu.c - the kernel-quality suite: opens the CUDA device through
 * the driver API, loads the moxc-generated module from its verified
 * artifact and the hand-written reference fatbins, measures the device's
 * copy bandwidth and reads its FP32 peak, then times each workload's three
 * variants (reference, generated as mox runs it where no failure can reach
 * the launch, generated with a gate) with events,
 * interleaved and rotating input sets, verifying every run. The driver
 * calls it and the workloads make are in runner_gpu_calls.c, the modules'
 * loading in runner_gpu_artifacts.c, the workloads in runner_gpu_cases.c. */
#include <stdio.h>
#include <string.h>

#include "runner_gpu.h"

static int attr(gpu_ctx *g, int which)
{
    int v = 0;
    if (g->cu->cuDeviceGetAttribute(&v, which, g->device) != CUDA_SUCCESS)
        return 0;
    return v;
}

/* Attributes not in the runtime's table (plain cuda.h values). */
enum { ATTR_CLOCK_RATE = 13, ATTR_MEMORY_CLOCK_RATE = 36, ATTR_BUS_WIDTH = 37, ATTR_L2_SIZE = 38 };

static void device_facts(gpu_ctx *g)
{
    bench_kvs *d = &g->report->device;
    char name[256] = "";
    g->cu->cuDeviceGetName(name, sizeof name, g->device);
    bench_kv_str(d, "backend", "cuda");
    bench_kv_str(d, "name", name);
    bench_kv_num(d, "driver_version", g->cu->driver_version);
    int major = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int minor = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", major, minor);
    bench_kv_str(d, "compute_capability", cc);
    int sms = attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    int clock_khz = attr(g, ATTR_CLOCK_RATE);
    bench_kv_num(d, "multiprocessors", sms);
    bench_kv_num(d, "clock_khz", clock_khz);
    bench_kv_num(d, "l2_bytes", attr(g, ATTR_L2_SIZE));
    size_t total = 0;
    g->cu->cuDeviceTotalMem(&total, g->device);
    bench_kv_num(d, "memory_bytes", (double)total);
    int mem_khz = attr(g, ATTR_MEMORY_CLOCK_RATE), bus = attr(g, ATTR_BUS_WIDTH);
    /* Double data rate: two transfers per memory clock. A lead, not a
     * ceiling: the measured copy bandwidth is the one results are held to. */
    bench_kv_num(d, "dram_spec_gbps", 2.0 * mem_khz * 1e3 * (bus / 8.0) / 1e9);
    /* 128 FP32 lanes per multiprocessor on sm_80+ (sm_90 included); an FMA
     * counts 2. The kernels are built with -fmad=false, so a multiply and
     * an add are two instructions: half that rate is their ceiling. */
    double peak = (double)sms * 128.0 * 2.0 * clock_khz * 1e3 / 1e9;
    bench_kv_num(d, "fp32_peak_gflops", peak);
    bench_kv_num(d, "fp32_peak_nofma_gflops", peak / 2);
}

/* cuMemcpyDtoD of a large buffer (bytes read + bytes written): the
 * bandwidth the memory-bound cases are compared with. */
static void copy_bandwidth(gpu_ctx *g)
{
    bench_report *r = g->report;
    if (!bench_wants(r, "device", "copy-dtod"))
        return;
    size_t bytes = r->config.smoke ? (size_t)16 << 20 : (size_t)1 << 30;
    bench_case *c = bench_case_add(r, "device", "copy-dtod", "cuMemcpyDtoDAsync", "us");
    snprintf(c->params, sizeof c->params, "bytes=%zu", bytes);
    snprintf(c->note, sizeof c->note, "one device-to-device copy; bytes = read + written");
    c->bytes = 2.0 * (double)bytes;
    CUdeviceptr src = 0, dst = 0;
    bool ok = gpu_alloc(g, &src, bytes) && gpu_alloc(g, &dst, bytes) &&
              gpu_fill32(g, src, 0x3f9e0651u, bytes);
    for (uint32_t i = 0; ok && i < r->config.warmup + r->config.samples; i++) {
        float ms = 0;
        ok = gpu_check(g, g->cu->cuEventRecord(g->start, NULL), "cuEventRecord") &&
             gpu_check(g, g->cu->cuMemcpyDtoDAsync(dst, src, bytes, NULL), "cuMemcpyDtoDAsync") &&
             gpu_check(g, g->cu->cuEventRecord(g->stop, NULL), "cuEventRecord") &&
             gpu_check(g, g->cu->cuEventSynchronize(g->stop), "cuEventSynchronize") &&
             gpu_check(g, g->cu->cuEventElapsedTime(&ms, g->start, g->stop), "cuEventElapsedTime");
        if (ok && i >= r->config.warmup)
            bench_case_sample(c, (double)ms * 1e3);
    }
    if (!ok)
        bench_case_fail(r, c, "%s", g->err);
    gpu_free(g, &src);
    gpu_free(g, &dst);
    bench_stats s;
    if (bench_stats_of(c, &s) && s.median > 0)
        bench_kv_num(&r->device, "copy_gbps", c->bytes / (s.median * 1e-6) / 1e9);
}

/* About 100 us at the H200's 1.98 GHz: longer than the host needs to
 * enqueue a workload's launches (scan has 7). */
#define SPIN_CYCLES 200000ull

static bool timed_run(gpu_ctx *g, gpu_workload *w, int variant, uint32_t set, double *us)
{
    float ms = 0;
    if (w->reset && !w->reset(g, w->state, set))
        return false;
    unsigned long long cycles = SPIN_CYCLES;
    void *spin_params[] = {&cycles};
    bool ok = gpu_check(g, g->cu->cuLaunchKernel(g->spin, 1, 1, 1, 1, 1, 1, 0, NULL, spin_params, NULL),
                        "cuLaunchKernel (ref_spin)") &&
              gpu_check(g, g->cu->cuEventRecord(g->start, NULL), "cuEventRecord") &&
              w->launch(g, w->state, variant, set) &&
              gpu_check(g, g->cu->cuEventRecord(g->stop, NULL), "cuEventRecord") &&
              gpu_check(g, g->cu->cuEventSynchronize(g->stop), "cuEventSynchronize") &&
              gpu_check(g, g->cu->cuEventElapsedTime(&ms, g->start, g->stop), "cuEventElapsedTime");
    *us = (double)ms * 1e3;
    return ok;
}

static void run_workload(gpu_ctx *g, const char *name, gpu_workload_make make)
{
    bench_report *r = g->report;
    if (g->dead || !bench_wants(r, "quality", name))
        return;
    bench_case *cases[GPU_VARIANTS];
    for (int v = 0; v < GPU_VARIANTS; v++) {
        cases[v] = bench_case_add(r, "quality", name, gpu_variant_names[v], "us");
        if (v != GPU_REF)
            snprintf(cases[v]->baseline, sizeof cases[v]->baseline, "ref");
    }
    gpu_workload w;
    memset(&w, 0, sizeof w);
    if (!make(g, r->config.smoke, &w)) {
        for (int v = 0; v < GPU_VARIANTS; v++)
            bench_case_fail(r, cases[v], "setup: %s", g->err);
        return;
    }
    bool failed[GPU_VARIANTS] = {false};
    for (int v = 0; v < GPU_VARIANTS; v++) {
        bench_case *c = cases[v];
        snprintf(c->params, sizeof c->params, "%s", w.params);
        snprintf(c->note, sizeof c->note, "%s", w.note);
        c->bytes = w.bytes;
        c->flops = w.flops;
    }
    /* Variants interleave, their order rotating each round, and every run
     * takes the next input set, so no variant always follows another or
     * finds its inputs in L2. */
    uint32_t rounds = r->config.warmup + r->config.samples, k = 0;
    for (uint32_t round = 0; round < rounds && !g->dead; round++) {
        for (int j = 0; j < GPU_VARIANTS; j++) {
            int v = (int)((round + (uint32_t)j) % GPU_VARIANTS);
            uint32_t set = k++ % w.sets;
            if (failed[v])
                continue;
            double us = 0;
            char why[256] = "";
            if (!timed_run(g, &w, v, set, &us)) {
                bench_case_fail(r, cases[v], "run: %s", g->err);
                failed[v] = true;
            } else if (!w.verify(g, w.state, set, why, sizeof why)) {
                bench_case_fail(r, cases[v], "verification (round %u, set %u): %s", round, set,
                                why[0] ? why : g->err);
                cases[v]->verified = 0;
                failed[v] = true;
            } else if (round >= r->config.warmup) {
                bench_case_sample(cases[v], us);
            }
            if (g->dead)
                break;
        }
    }
    for (int v = 0; v < GPU_VARIANTS; v++)
        if (!failed[v] && cases[v]->count > 0)
            cases[v]->verified = 1;
    w.destroy(g, w.state);
}

static bool open_gpu(gpu_ctx *g)
{
    const char *why = NULL;
    g->cu = mox__cuda_api_get(&why);
    if (!g->cu) {
        snprintf(g->err, sizeof g->err, "%s", why ? why : "no CUDA driver");
        return false;
    }
    int count = 0;
    if (!gpu_check(g, g->cu->cuDeviceGetCount(&count), "cuDeviceGetCount"))
        return false;
    if (count < 1) {
        snprintf(g->err, sizeof g->err, "no CUDA device");
        return false;
    }
    return gpu_check(g, g->cu->cuDeviceGet(&g->device, 0), "cuDeviceGet") &&
           gpu_check(g, g->cu->cuDevicePrimaryCtxRetain(&g->ctx, g->device), "cuDevicePrimaryCtxRetain") &&
           gpu_check(g, g->cu->cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent");
}

static void close_gpu(gpu_ctx *g)
{
    if (!g->ctx)
        return;
    g->cu->cuCtxSynchronize();
    gpu_free(g, &g->gate_status);
    if (g->start)
        g->cu->cuEventDestroy(g->start);
    if (g->stop)
        g->cu->cuEventDestroy(g->stop);
    if (g->gen)
        g->cu->cuModuleUnload(g->gen);
    for (size_t i = 0; i < g->ref_count; i++)
        g->cu->cuModuleUnload(g->ref[i]);
    g->cu->cuDevicePrimaryCtxRelease(g->device);
}

bool bench_suite_quality(bench_report *r)
{
    gpu_ctx g;
    memset(&g, 0, sizeof g);
    g.report = r;
    if (!open_gpu(&g)) {
        fprintf(stderr, "mox_bench: quality suite skipped: %s\n", g.err);
        close_gpu(&g);
        return false;
    }
    device_facts(&g);
    static const struct {
        const char *name;
        gpu_workload_make make;
    } workloads[] = {
        {"vec-add", gpu_make_vec_add},       {"reduction", gpu_make_reduce},
        {"histogram", gpu_make_histogram},   {"scan", gpu_make_scan},
        {"particle-update", gpu_make_particles}, {"matmul-f32", gpu_make_matmul},
        {"matmul-f16", gpu_make_matmul_f16},
    };
    uint32_t zero_words[128] = {0};
    bool ok = gpu_check(&g, g.cu->cuEventCreate(&g.start, CU_EVENT_DEFAULT), "cuEventCreate") &&
              gpu_check(&g, g.cu->cuEventCreate(&g.stop, CU_EVENT_DEFAULT), "cuEventCreate") &&
              gpu_alloc(&g, &g.gate_status, sizeof zero_words) &&
              gpu_upload(&g, g.gate_status, zero_words, sizeof zero_words);
    if (ok)
        copy_bandwidth(&g);
    ok = ok && gpu_load_generated(&g) && gpu_load_references(&g);
    for (size_t i = 0; ok && i < g.ref_count && !g.spin; i++)
        if (g.cu->cuModuleGetFunction(&g.spin, g.ref[i], "ref_spin") != CUDA_SUCCESS)
            g.spin = NULL;
    if (ok && !g.spin) {
        snprintf(g.err, sizeof g.err, "no ref_spin kernel in the reference fatbins");
        ok = false;
    }
    if (!ok) {
        bench_case *c = bench_case_add(r, "quality", "setup", "-", "us");
        bench_case_fail(r, c, "%s", g.err);
    }
    for (size_t i = 0; ok && i < sizeof workloads / sizeof *workloads; i++)
        run_workload(&g, workloads[i].name, workloads[i].make);
    close_gpu(&g);
    return true;
}
