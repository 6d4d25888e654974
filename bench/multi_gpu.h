/* multi_gpu.h - the two-GPU benchmark (bench/multi_gpu.c, the mox side and
 * the report; bench/multi_gpu_raw.c, the raw driver side). */
#ifndef MOX_BENCH_MULTI_GPU_H
#define MOX_BENCH_MULTI_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "cuda/cuda_api.h"

typedef struct mg_raw {
    const mox__cuda_api *cu;
    CUcontext ctx[2];
    CUstream stream[2];
    CUevent t0[2], t1[2];
    bool peer[2];        /* peer[to]: device `to` could enable access to the other */
} mg_raw;

/* Opens GPUs 0 and 1 through the driver table mox uses (dlopen'd), with
 * peer access enabled both ways where the driver allows. Exits 77 (after a
 * message) with fewer than two GPUs or no driver. */
void mg_raw_open(mg_raw *r);
void mg_raw_close(mg_raw *r);
/* `reps` cuMemcpyPeerAsync of `bytes` from GPU `from` into GPU `to`, on
 * `to`'s stream: GB/s by the stream's events and by host wall clock. */
void mg_raw_peer_copy(mg_raw *r, int from, int to, size_t bytes, int reps, double *dev_gbps,
                      double *wall_gbps);

double mg_now_s(void);

#endif
