/* multi_gpu_raw.c - the raw side of the two-GPU benchmark: peer copies
 * with cuMemcpyPeerAsync alone, through the same dlopen'd driver table as
 * mox (src/cuda/cuda_api.c), timed by events and by the host clock. */
#define _GNU_SOURCE
#include "multi_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                             \
                    mox__cuda_error_name(r->cu, r_));                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

double mg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mg_raw_open(mg_raw *r)
{
    const char *why = NULL;
    r->cu = mox__cuda_api_get(&why);
    if (!r->cu) {
        printf("skipped: no CUDA driver: %s\n", why);
        exit(77);
    }
    int n = 0;
    CHECK(r->cu->cuDeviceGetCount(&n));
    if (n < 2) {
        printf("skipped: %d CUDA device(s); the two-GPU benchmark needs two\n", n);
        exit(77);
    }
    for (int i = 0; i < 2; i++) {
        CUdevice d;
        CHECK(r->cu->cuDeviceGet(&d, i));
        CHECK(r->cu->cuDevicePrimaryCtxRetain(&r->ctx[i], d));
        CHECK(r->cu->cuCtxSetCurrent(r->ctx[i]));
        CHECK(r->cu->cuStreamCreate(&r->stream[i], CU_STREAM_NON_BLOCKING));
        CHECK(r->cu->cuEventCreate(&r->t0[i], CU_EVENT_DEFAULT));
        CHECK(r->cu->cuEventCreate(&r->t1[i], CU_EVENT_DEFAULT));
    }
    for (int i = 0; i < 2; i++) {
        CHECK(r->cu->cuCtxSetCurrent(r->ctx[i]));
        CUresult e = r->cu->cuCtxEnablePeerAccess(r->ctx[1 - i], 0);
        r->peer[i] = e == CUDA_SUCCESS || e == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    }
}

void mg_raw_close(mg_raw *r)
{
    for (int i = 0; i < 2; i++) {
        r->cu->cuCtxSetCurrent(r->ctx[i]);
        r->cu->cuEventDestroy(r->t0[i]);
        r->cu->cuEventDestroy(r->t1[i]);
        r->cu->cuStreamDestroy(r->stream[i]);
        CUdevice d;
        if (r->cu->cuDeviceGet(&d, i) == CUDA_SUCCESS)
            r->cu->cuDevicePrimaryCtxRelease(d);
    }
}

void mg_raw_peer_copy(mg_raw *r, int from, int to, size_t bytes, int reps, double *dev_gbps,
                      double *wall_gbps)
{
    CUdeviceptr src = 0, dst = 0;
    CHECK(r->cu->cuCtxSetCurrent(r->ctx[from]));
    CHECK(r->cu->cuMemAlloc(&src, bytes));
    CHECK(r->cu->cuMemsetD8Async(src, 1, bytes, r->stream[from]));
    CHECK(r->cu->cuStreamSynchronize(r->stream[from]));
    CHECK(r->cu->cuCtxSetCurrent(r->ctx[to]));
    CHECK(r->cu->cuMemAlloc(&dst, bytes));
    CUstream s = r->stream[to];
    /* one warm-up copy, then the timed ones back to back */
    CHECK(r->cu->cuMemcpyPeerAsync(dst, r->ctx[to], src, r->ctx[from], bytes, s));
    CHECK(r->cu->cuStreamSynchronize(s));
    double t = mg_now_s();
    CHECK(r->cu->cuEventRecord(r->t0[to], s));
    for (int k = 0; k < reps; k++)
        CHECK(r->cu->cuMemcpyPeerAsync(dst, r->ctx[to], src, r->ctx[from], bytes, s));
    CHECK(r->cu->cuEventRecord(r->t1[to], s));
    CHECK(r->cu->cuEventSynchronize(r->t1[to]));
    double wall = mg_now_s() - t;
    float ms = 0.0f;
    CHECK(r->cu->cuEventElapsedTime(&ms, r->t0[to], r->t1[to]));
    double total = (double)bytes * reps;
    *dev_gbps = ms > 0.0f ? total / (ms * 1e-3) / 1e9 : 0.0;
    *wall_gbps = wall > 0.0 ? total / wall / 1e9 : 0.0;
    CHECK(r->cu->cuMemFree(dst));
    CHECK(r->cu->cuCtxSetCurrent(r->ctx[from]));
    CHECK(r->cu->cuMemFree(src));
}
