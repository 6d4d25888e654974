/* tests/cuda/sim_device.c - the simulated driver's devices, contexts,
 * memory (allocations, synchronous and stream-ordered copies and sets) and
 * module entry points, and its error names. Peers are sim_peer.c. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_driver.h"

/* Device allocations and the context that made them (g_lock). */
typedef struct sim_alloc {
    struct sim_alloc *next;
    const unsigned char *base;
    size_t size;
    CUcontext ctx;
} sim_alloc;
static sim_alloc *g_allocs;
/* Pinned host allocations (cuMemHostAlloc; g_lock): what a kernel may read
 * of host memory, as on a GPU with unified addressing. */
static sim_alloc *g_host_allocs;

CUcontext sim_mem_ctx(const void *p)
{
    const unsigned char *c = p;
    for (sim_alloc *a = g_allocs; a; a = a->next)
        if (c >= a->base && c < a->base + a->size)
            return a->ctx;
    return NULL;
}

bool sim_host_pinned(const void *p, size_t n)
{
    const unsigned char *c = p;
    bool ok = false;
    pthread_mutex_lock(&g_lock);
    for (sim_alloc *a = g_host_allocs; a && !ok; a = a->next)
        ok = c >= a->base && c + n <= a->base + a->size;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

static void track_in(sim_alloc **list, void *m, size_t bytes, CUcontext ctx)
{
    sim_alloc *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    a->base = m;
    a->size = bytes ? bytes : 1;
    a->ctx = ctx;
    pthread_mutex_lock(&g_lock);
    a->next = *list;
    *list = a;
    pthread_mutex_unlock(&g_lock);
}

static void track_alloc(void *m, size_t bytes)
{
    track_in(&g_allocs, m, bytes, t_current);
}

static void untrack_in(sim_alloc **list, const void *m)
{
    pthread_mutex_lock(&g_lock);
    for (sim_alloc **p = list; *p; p = &(*p)->next)
        if ((*p)->base == m) {
            sim_alloc *a = *p;
            *p = a->next;
            free(a);
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

static void untrack_alloc(const void *m)
{
    untrack_in(&g_allocs, m);
}

bool sim_valid_ctx(CUcontext c)
{
    return c >= &g_ctx[0] && c < &g_ctx[sim_device_count()];
}

/* ---- the API ---- */

EXPORT CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorName(CUresult error, const char **str)
{
    switch (error) {
    case CUDA_SUCCESS: *str = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *str = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY: *str = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *str = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_READY: *str = "CUDA_ERROR_NOT_READY"; return CUDA_SUCCESS;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *str = "CUDA_ERROR_ILLEGAL_ADDRESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *str = "CUDA_ERROR_NO_DEVICE"; return CUDA_SUCCESS;
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: *str = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; return CUDA_SUCCESS;
    default: *str = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str)
{
    *str = error == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered"
                                               : "simulated driver error";
    return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int flags);
CUresult cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }

EXPORT CUresult cuDriverGetVersion(int *v);
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

EXPORT CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetCount(int *count) { *count = sim_device_count(); return CUDA_SUCCESS; }

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal);
CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal < 0 || ordinal >= sim_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (dev == 0)
        snprintf(name, (size_t)len, "Simulated CUDA device");
    else
        snprintf(name, (size_t)len, "Simulated CUDA device %d", dev);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev)
{
    (void)dev;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *pi = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *pi = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *pi = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *pi = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 4; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    default: *pi = 1; break;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    (void)dev;
    *bytes = (size_t)1 << 32;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    if (dev < 0 || dev >= sim_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    /* As seen on an H200 (driver 580): a faulted primary context survives
     * its last release and retain fails until cuDevicePrimaryCtxReset. */
    CUresult r = g_ctx[dev].sticky;
    if (r == CUDA_SUCCESS)
        g_ctx[dev].refs++;
    pthread_mutex_unlock(&g_lock);
    *ctx = r == CUDA_SUCCESS ? &g_ctx[dev] : NULL;
    return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    pthread_mutex_lock(&g_lock);
    g_ctx[dev].refs--;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    pthread_mutex_lock(&g_lock);
    g_ctx[dev].sticky = CUDA_SUCCESS;
    memset(g_ctx[dev].peer, 0, sizeof g_ctx[dev].peer);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (ctx != NULL && !sim_valid_ctx(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    t_current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx);
CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = t_current;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    STICKY();
    void *m = malloc(bytes ? bytes : 1);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(m, 0xa5, bytes); /* device memory is not zeroed */
    track_alloc(m, bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s);
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s)
{
    (void)s;
    return cuMemAlloc_v2(p, bytes);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFree_v2(CUdeviceptr p)
{
    /* After a fault the call fails, but the memory goes with the context. */
    untrack_alloc((void *)(uintptr_t)p);
    free((void *)(uintptr_t)p);
    STICKY();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s);
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    untrack_alloc((void *)(uintptr_t)p);
    op *o = sim_op_new(OP_FREE);
    o->dst = (void *)(uintptr_t)p; /* freed when the stream gets there */
    return sim_submit(s, o);
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags);
CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    STICKY();
    *pp = malloc(bytes ? bytes : 1);
    if (!*pp)
        return CUDA_ERROR_OUT_OF_MEMORY;
    track_in(&g_host_allocs, *pp, bytes, NULL);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeHost(void *p);
CUresult cuMemFreeHost(void *p)
{
    untrack_in(&g_host_allocs, p);
    free(p);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    (void)flags;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    STICKY();
    memcpy((void *)(uintptr_t)dst, src, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    STICKY();
    /* Like the legacy stream: no ordering with non-blocking streams. Copy
     * under the lock so TSan sees the simulated device's writes ordered. */
    pthread_mutex_lock(&g_lock);
    memcpy(dst, (const void *)(uintptr_t)src, n);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

CUresult sim_copy_async(void *dst, const void *src, size_t n, CUstream s)
{
    op *o = sim_op_new(OP_COPY);
    o->dst = dst;
    o->src = src;
    o->n = n;
    return sim_submit(s, o);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return sim_copy_async((void *)(uintptr_t)dst, src, n, s);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return sim_copy_async(dst, (const void *)(uintptr_t)src, n, s);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return sim_copy_async((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, s);
}

/* A memset of n values of `kind` (OP_SET8/16/32) on stream s. */
static CUresult sim_memset(op_kind kind, CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
    op *o = sim_op_new(kind);
    o->dst = (void *)(uintptr_t)dst;
    o->value = v;
    o->n = n;
    return sim_submit(s, o);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    return sim_memset(OP_SET8, dst, v, n, s);
}

EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s);
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s)
{
    return sim_memset(OP_SET16, dst, v, n, s);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s);
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
    return sim_memset(OP_SET32, dst, v, n, s);
}

struct CUmod_st {
    int dummy;
};

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image);
CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    STICKY();
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    /* MOX_SIM_PTX=refuse: a driver too old for the PTX's version (text
     * PTX starts with a comment; fatbins are binary). */
    const char *ptx = getenv("MOX_SIM_PTX");
    if (ptx && strcmp(ptx, "refuse") == 0 && strncmp((const char *)image, "//", 2) == 0)
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    *m = calloc(1, sizeof **m);
    return *m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* The module's mox__grid_wait_entries marker (mox/kernel_cuda.h): 2, as in
 * sm_90 code of the current header; MOX_SIM_GRID_WAIT=1 makes it read 1
 * (a module whose entries without the gate check lack the wait), =0 read 0
 * (code for older GPUs), =absent leaves it out (a module built before it). */
static const unsigned int sim_grid_wait_markers[3] = {MOX__GRID_WAIT_NONE, MOX__GRID_WAIT_GATED,
                                                      MOX__GRID_WAIT_ALL};

EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name)
{
    const char *v = getenv("MOX_SIM_GRID_WAIT");
    if (!m || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(name, "mox__grid_wait_entries") != 0 || (v && strcmp(v, "absent") == 0))
        return CUDA_ERROR_NOT_FOUND;
    const unsigned int *marker = &sim_grid_wait_markers[MOX__GRID_WAIT_ALL];
    if (v && strcmp(v, "0") == 0)
        marker = &sim_grid_wait_markers[MOX__GRID_WAIT_NONE];
    else if (v && strcmp(v, "1") == 0)
        marker = &sim_grid_wait_markers[MOX__GRID_WAIT_GATED];
    if (dptr)
        *dptr = (CUdeviceptr)(uintptr_t)marker;
    if (bytes)
        *bytes = sizeof *marker;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule m);
CUresult cuModuleUnload(CUmodule m)
{
    free(m);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name);
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    /* The entries checking one dependency (MOX_ENTRY_ONE_DEP_SUFFIX) run the
     * gated functions, which handle every form of the gate. */
    size_t len = strlen(name), tail = strlen(MOX_ENTRY_UNGATED_SUFFIX), tail1 = strlen(MOX_ENTRY_ONE_DEP_SUFFIX);
    bool ungated = len > tail && strcmp(name + len - tail, MOX_ENTRY_UNGATED_SUFFIX) == 0;
    bool one_dep = len > tail1 && strcmp(name + len - tail1, MOX_ENTRY_ONE_DEP_SUFFIX) == 0;
    size_t base = ungated ? len - tail : one_dep ? len - tail1 : len;
    for (size_t i = 0; i < sim_func_count; i++) {
        if (strlen(sim_funcs[i].name) == base && strncmp(sim_funcs[i].name, name, base) == 0) {
            *f = ungated ? &sim_ungated_funcs[i] : &sim_funcs[i];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attrib, int value);
CUresult cuFuncSetAttribute(CUfunction f, int attrib, int value)
{
    (void)attrib;
    (void)value;
    return sim_valid_func(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction f);
CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction f)
{
    if (!sim_valid_func(f))
        return CUDA_ERROR_INVALID_HANDLE;
    *pi = attrib == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}

