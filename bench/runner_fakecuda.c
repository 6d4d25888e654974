/* runner_fakecuda.c - a stand-in CUDA driver (libmox_bench_fakecuda.so)
 * that lets the kernel-quality suite's host side run where there is no
 * GPU: MOX_CUDA_LIBRARY points the runner's driver table at it. Device
 * memory is host memory, every call is synchronous, events read the host
 * clock, and the kernels the suite launches (ref_<k> and mox_entry_<k>)
 * are computed in C from their launch geometry and parameters, with
 * the generated entries' gate honoured (the quality suite's kernels are
 * in runner_fakecuda_kernels.c, the workloads suite's FDTD3d kernels in
 * runner_fakecuda_ports.c). What it checks is the runner: the
 * parameter order and sizes it passes, the grids it picks, the scan plan,
 * the verification and the report. The timings it gives mean nothing. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mox/kernel_abi.h>

#include "cuda/cuda_api.h"
#include "runner_fakecuda.h"

struct CUfunc_st {
    char name[64];
    fake_kernel run;
    int gated;  /* a generated entry: params[0] is a mox_gate */
    int broken; /* MOX_FAKECUDA_BREAK=vec_add: out[0] gets one bit wrong */
};

struct CUevent_st {
    uint64_t ns;
};

static int g_module;
static struct CUfunc_st g_funcs[32];
static int g_func_count;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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
API CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
    (void)s;
    uint16_t *w = (uint16_t *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++)
        w[i] = v;
    return CUDA_SUCCESS;
}
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
    int entry = strncmp(name, "mox_entry_", 10) == 0;
    const char *base = entry ? name + 10 : strncmp(name, "ref_", 4) == 0 ? name + 4 : NULL;
    fake_kernel quality = base ? fake_quality_kernel(base) : NULL;
    if (quality && g_func_count < 32) {
        struct CUfunc_st *fn = &g_funcs[g_func_count++];
        snprintf(fn->name, sizeof fn->name, "%s", name);
        fn->run = quality;
        fn->gated = entry;
        /* The test that the runner catches a wrong result breaks the
         * generated vec_add (only that one: see fake_quality_break). */
        const char *brk = getenv("MOX_FAKECUDA_BREAK");
        fn->broken = entry && brk && strcmp(brk, base) == 0;
        *f = fn;
        return CUDA_SUCCESS;
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
    if (f->broken)
        fake_quality_break(f->run, params);
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
