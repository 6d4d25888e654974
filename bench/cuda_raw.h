/* cuda_raw.h - the raw-CUDA side of bench/cuda_overhead: the same
 * kernels (module "cudabench") loaded from the same fatbin through the
 * backend's dlopen'd driver table, launched with the gate off. */
#ifndef MOX_BENCH_CUDA_RAW_H
#define MOX_BENCH_CUDA_RAW_H

#include <stdio.h>
#include <stdlib.h>

#include <mox/kernel_abi.h>

#include "cuda/cuda_api.h"

extern const mox__cuda_api *cu;

#define CHECK_CU(x)                                                                                \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                             \
                    mox__cuda_error_name(cu, r_));                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct raw {
    CUcontext ctx;
    CUmodule mod;
    CUfunction scale, finish, busy;
    CUstream stream;
    CUstream side[8];
    CUevent t0, t1;
} raw;

/* Loads the driver (exits 77 without one) and the cudabench fatbin that the
 * generated bindings point at (or $MOX_ARTIFACT_CUDABENCH, or
 * $MOX_ARTIFACT_ROOT/<its basename>). */
void raw_open(raw *r, const char *artifact_dir);

/* Kernel parameters of a two-buffer stage: gate (off unless set), in, out, n. */
typedef struct stage_args {
    mox_gate gate;
    CUdeviceptr in, out;
    uint32_t n;
    void *p[4];
} stage_args;

void stage_args_init(stage_args *a, CUdeviceptr in, CUdeviceptr out, uint32_t n);
/* ceil(n / 256) blocks of 256 threads on `s`. */
void raw_launch(CUfunction f, uint32_t n, CUstream s, stage_args *a);
/* Milliseconds between r->t0 and r->t1 (waits for t1). */
float raw_elapsed_ms(raw *r);

#endif
