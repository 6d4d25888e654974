/* runner_fakecuda.c - a stand-in CUDA driver (libmox_bench_fakecuda.so)
 * that lets the kernel-quality suite's host side run where there is no
 * GPU: MOX_CUDA_LIBRARY points the runner's driver table at it. Device
 * memory is host memory, every call is synchronous, events read the host
 * clock, and the kernels the suite launches (ref_<k> and mox_entry_<k>)
 * are computed here in C from their launch geometry and parameters, with
 * the generated entries' gate honoured (the workloads suite's FDTD3d
 * kernels are in runner_fakecuda_ports.c). What it checks is the runner: the
 * parameter order and sizes it passes, the grids it picks, the scan plan,
 * the verification and the report. The timings it gives mean nothing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mox/kernel_abi.h>

#include "cuda/cuda_api.h"
#include "particle.h"

#define API __attribute__((visibility("default")))

typedef void (*fake_kernel)(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by);

struct CUfunc_st {
    char name[64];
    fake_kernel run;
    int gated;  /* a generated entry: params[0] is a mox_gate */
    int broken; /* MOX_FAKECUDA_BREAK=vec_add: out[0] gets one bit wrong */
};

struct CUevent_st {
    uint64_t ns;
};

/* The workloads suite's kernels (runner_fakecuda_ports.c). */
fake_kernel fake_port_kernel(const char *name, int *gated);

static int g_module;
static struct CUfunc_st g_funcs[32];
static int g_func_count;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define PTR(T, i) (*(T *const *)p[i])
#define U32(i) (*(const uint32_t *)p[i])

/* Aborts on a geometry the real kernels would compute wrongly with. */
static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fakecuda: bad launch: %s\n", what);
        abort();
    }
}

static void k_vec_add(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    expect((uint64_t)gx * bx >= n && gy == 1 && by == 1, "vec_add grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(float, 2)[i] = PTR(const float, 0)[i] + PTR(const float, 1)[i];
}

static void k_reduce(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "reduce grid");
    for (unsigned b = 0; b < gx; b++) {
        float tile[256];
        for (unsigned t = 0; t < 256; t++)
            tile[t] = b * 256 + t < n ? PTR(const float, 0)[b * 256 + t] : 0.0f;
        for (unsigned s = 128; s > 0; s /= 2)
            for (unsigned t = 0; t < s; t++)
                tile[t] = tile[t] + tile[t + s];
        PTR(float, 1)[b] = tile[0];
    }
}

static void k_histogram(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "histogram grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(uint32_t, 1)[PTR(const uint32_t, 0)[i] & 15u]++;
}

static void k_block_scan(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "block_scan grid");
    for (unsigned b = 0; b < gx; b++) {
        uint32_t run = 0;
        for (unsigned t = 0; t < 256; t++) {
            uint32_t i = b * 256 + t, v = i < n ? PTR(const uint32_t, 0)[i] : 0u;
            if (i < n)
                PTR(uint32_t, 1)[i] = run;
            run += v;
        }
        PTR(uint32_t, 2)[b] = run;
    }
}

static void k_add_offsets(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "add_offsets grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(uint32_t, 0)[i] += PTR(const uint32_t, 1)[i / 256];
}

static void k_particle_update(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    Config c = *(const Config *)p[2];
    expect(bx == 64 && by == 1 && gy == 1 && (uint64_t)gx * 64 >= n, "particle_update grid");
    for (uint32_t i = 0; i < n; i++) {
        Particle q = PTR(const Particle, 0)[i];
        if (q.tag != 0) {
            for (int s = 0; s < 2; s++)
                for (int a = 0; a < 2; a++) {
                    q.motion.velocity[a] = q.motion.velocity[a] + c.acceleration[a] * c.dt;
                    q.motion.position[a] = q.motion.position[a] + q.motion.velocity[a] * c.dt;
                }
            q.flags = (uint16_t)(q.flags + 2);
            q.color[1] = q.color[0];
        }
        PTR(Particle, 1)[i] = q;
    }
}

static float half_bits(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e ? ldexpf((float)(1024 + m), e - 25) : ldexpf((float)m, -24);
    return h >> 15 ? -v : v;
}

static void matmul_any(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by, int f16)
{
    uint32_t rows = U32(3), cols = U32(4), inner = U32(5);
    expect(bx == 16 && by == 16 && (uint64_t)gx * 16 >= cols && (uint64_t)gy * 16 >= rows, "matmul grid");
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            float acc = 0.0f;
            for (uint32_t k = 0; k < inner; k++) {
                float a = f16 ? half_bits(PTR(const uint16_t, 0)[r * inner + k]) : PTR(const float, 0)[r * inner + k];
                float b = f16 ? half_bits(PTR(const uint16_t, 1)[k * cols + c]) : PTR(const float, 1)[k * cols + c];
                acc = acc + a * b;
            }
            PTR(float, 2)[r * cols + c] = acc;
        }
}

static void k_matmul(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    matmul_any(p, gx, gy, bx, by, 0);
}

static void k_matmul_f16(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    matmul_any(p, gx, gy, bx, by, 1);
}

static void k_spin(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    expect(gx == 1 && gy == 1 && bx == 1 && by == 1 && *(const unsigned long long *)p[0] > 0, "spin");
}

static const struct {
    const char *name;
    fake_kernel run;
} g_kernels[] = {
    {"spin", k_spin},
    {"vec_add", k_vec_add},       {"reduce", k_reduce},
    {"histogram", k_histogram},   {"block_scan", k_block_scan},
    {"add_offsets", k_add_offsets}, {"particle_update", k_particle_update},
    {"matmul", k_matmul},         {"matmul_f16", k_matmul_f16},
};

/* ---- the driver API ----
 * Prototypes from the runtime's own table: a signature that drifts from
 * it fails to compile here. */
#define FAKE_PROTO(field, symbol, ret, params) API ret symbol params;
MOX__CUDA_SYMBOLS(FAKE_PROTO)
#undef FAKE_PROTO

API CUresult cuGetErrorName(CUresult e, const char **s)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "FAKE_ERROR_%d", e);
    *s = buf;
    return CUDA_SUCCESS;
}
API CUresult cuGetErrorString(CUresult e, const char **s) { return cuGetErrorName(e, s); }
API CUresult cuInit(unsigned int f) { (void)f; return CUDA_SUCCESS; }
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
API CUresult cuDeviceGetCount(int *c) { *c = 1; return CUDA_SUCCESS; }
API CUresult cuDeviceGet(CUdevice *d, int o) { *d = o; return CUDA_SUCCESS; }
API CUresult cuDeviceGetName(char *n, int len, CUdevice d)
{
    (void)d;
    snprintf(n, (size_t)len, "fake CUDA device (bench/runner_fakecuda.c)");
    return CUDA_SUCCESS;
}
API CUresult cuDeviceGetAttribute(int *v, int a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 2 : 1000;
    return CUDA_SUCCESS;
}
API CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { (void)d; *b = (size_t)1 << 32; return CUDA_SUCCESS; }
static struct CUctx_st { int unused; } g_ctx;
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = &g_ctx; return CUDA_SUCCESS; }
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
API CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
API CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }
API CUresult cuCtxGetCurrent(CUcontext *c) { *c = &g_ctx; return CUDA_SUCCESS; }
API CUresult cuCtxEnablePeerAccess(CUcontext p, unsigned int f) { (void)p; (void)f; return CUDA_ERROR_NOT_SUPPORTED; }
API CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { memset(u, 0, sizeof *u); u->bytes[15] = (char)d; return CUDA_SUCCESS; }
API CUresult cuDeviceCanAccessPeer(int *c, CUdevice d, CUdevice p) { (void)d; (void)p; *c = 0; return CUDA_SUCCESS; }
API CUresult cuDeviceGetP2PAttribute(int *v, int a, CUdevice s, CUdevice d) { (void)a; (void)s; (void)d; *v = 0; return CUDA_SUCCESS; }
API CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t b)
{
    void *m = malloc(b);
    if (m) /* Fresh device memory holds no particular value. */
        memset(m, 0xa5, b);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
API CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t b, CUstream s) { (void)s; return cuMemAlloc_v2(p, b); }
API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { (void)s; return cuMemFree_v2(p); }
API CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
{
    (void)dc; (void)sc; (void)st;
    memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
API CUresult cuMemHostAlloc(void **p, size_t b, unsigned int f) { (void)f; *p = malloc(b); return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
API CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int f) { (void)f; *d = (CUdeviceptr)(uintptr_t)p; return CUDA_SUCCESS; }
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return CUDA_SUCCESS; }
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (const void *)(uintptr_t)s, n); return CUDA_SUCCESS; }
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st) { (void)st; return cuMemcpyHtoD_v2(d, s, n); }
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpyDtoH_v2(d, s, n); }
API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { (void)s; memset((void *)(uintptr_t)d, v, n); return CUDA_SUCCESS; }
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    (void)s;
    uint32_t *w = (uint32_t *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++)
        w[i] = v;
    return CUDA_SUCCESS;
}
API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    if (!image)
        return CUDA_ERROR_INVALID_IMAGE;
    *m = (CUmodule)&g_module;
    return CUDA_SUCCESS;
}
API CUresult cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (int i = 0; i < g_func_count; i++)
        if (strcmp(g_funcs[i].name, name) == 0) {
            *f = &g_funcs[i];
            return CUDA_SUCCESS;
        }
    for (size_t k = 0; k < sizeof g_kernels / sizeof *g_kernels; k++) {
        int gated = strncmp(name, "mox_entry_", 10) == 0;
        const char *base = gated ? name + 10 : strncmp(name, "ref_", 4) == 0 ? name + 4 : NULL;
        if (base && strcmp(base, g_kernels[k].name) == 0 && g_func_count < 32) {
            struct CUfunc_st *fn = &g_funcs[g_func_count++];
            snprintf(fn->name, sizeof fn->name, "%s", name);
            fn->run = g_kernels[k].run;
            fn->gated = gated;
            /* The test that the runner catches a wrong result breaks the
             * generated vec_add (only that one: see cuLaunchKernel). */
            const char *brk = getenv("MOX_FAKECUDA_BREAK");
            fn->broken = gated && brk && strcmp(brk, base) == 0;
            *f = fn;
            return CUDA_SUCCESS;
        }
    }
    int gated = 0;
    fake_kernel port = fake_port_kernel(name, &gated);
    if (port && g_func_count < 32) {
        struct CUfunc_st *fn = &g_funcs[g_func_count++];
        snprintf(fn->name, sizeof fn->name, "%s", name);
        fn->run = port;
        fn->gated = gated;
        *f = fn;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
}
API CUresult cuFuncGetAttribute(int *v, int a, CUfunction f) { (void)a; (void)f; *v = 0; return CUDA_SUCCESS; }
API CUresult cuFuncSetAttribute(CUfunction f, int a, int v) { (void)f; (void)a; (void)v; return CUDA_SUCCESS; }
API CUresult cuStreamCreate(CUstream *s, unsigned int f) { (void)f; *s = NULL; return CUDA_SUCCESS; }
API CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return CUDA_SUCCESS; }
API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { (void)s; (void)e; (void)f; return CUDA_SUCCESS; }
API CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
API CUresult cuEventCreate(CUevent *e, unsigned int f)
{
    (void)f;
    *e = calloc(1, sizeof **e);
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
API CUresult cuEventDestroy_v2(CUevent e) { free(e); return CUDA_SUCCESS; }
API CUresult cuEventRecord(CUevent e, CUstream s) { (void)s; e->ns = now_ns(); return CUDA_SUCCESS; }
API CUresult cuEventQuery(CUevent e) { (void)e; return CUDA_SUCCESS; }
API CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
API CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    *ms = (float)((double)(b->ns - a->ns) / 1e6);
    return CUDA_SUCCESS;
}
API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params,
                            void **extra)
{
    (void)s;
    if (!f || !params || extra || gz != 1 || bz != 1 || shared != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (f->gated) {
        const mox_gate *g = params[0];
        if (g->status) {
            for (uint32_t i = 0; i < g->dep_count; i++)
                if (g->status[2 * mox_gate_dep(g, i)] != MOX_DISPATCH_OK) {
                    g->status[2 * g->self] = MOX_DISPATCH_GATED;
                    return CUDA_SUCCESS;
                }
        }
        params++;
    }
    f->run(params, gx, gy, bx, by);
    if (f->broken && f->run == k_vec_add)
        *(uint32_t *)(void *)&(*(float *const *)params[2])[0] ^= 1u;
    return CUDA_SUCCESS;
}
/* Graphs: a chain of kernel launches, enough for the workloads suite's raw
 * replayed graph (runner_workloads_rawgraph.c), whose nodes follow each
 * other in order. Unlike CUDA, the fake keeps the caller's parameter array
 * and reads it at each launch: the suite keeps it alive and unchanged. */
struct CUgraph_st {
    int count;
    struct fake_node {
        CUDA_KERNEL_NODE_PARAMS_v1 p;
    } nodes[64];
};
API CUresult cuGraphCreate(CUgraph *g, unsigned int f)
{
    (void)f;
    *g = calloc(1, sizeof **g);
    return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
API CUresult cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }
API CUresult cuGraphAddKernelNode(CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
                                  const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    (void)d;
    if (g->count == 64 || nd > 1)
        return CUDA_ERROR_NOT_SUPPORTED; /* a chain of up to 64 launches */
    g->nodes[g->count].p = *p;
    *n = (CUgraphNode)(uintptr_t)(g->count + 1);
    g->count++;
    return CUDA_SUCCESS;
}
API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    (void)f;
    *e = (CUgraphExec)g;
    return CUDA_SUCCESS;
}
API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    (void)e; (void)n; (void)p;
    return CUDA_ERROR_NOT_SUPPORTED;
}
API CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    const struct CUgraph_st *g = (const struct CUgraph_st *)(void *)e;
    for (int i = 0; i < g->count; i++) {
        const CUDA_KERNEL_NODE_PARAMS_v1 *p = &g->nodes[i].p;
        CUresult r = cuLaunchKernel(p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                                    p->blockDimY, p->blockDimZ, p->sharedMemBytes, s, p->kernelParams,
                                    p->extra);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}
API CUresult cuGraphExecDestroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
