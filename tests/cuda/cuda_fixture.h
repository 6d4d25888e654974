/* tests/cuda/cuda_fixture.h - helpers for the backend-only GPU tests: open
 * the device (exit 77 without one), load the test kernels, build batches,
 * submit and wait. */
#ifndef MOX_TESTS_CUDA_FIXTURE_H
#define MOX_TESTS_CUDA_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/cuda_internal.h"

#define FX_SKIP 77

typedef struct fx {
    mox__cuda_dev *dev;
    const mox__cuda_api *api;
    mox__cuda_module *mod;
    const mox__cuda_kernel *scale, *finish, *maybe_fail, *fault, *spin;
} fx;

/* Opens device 0 and loads tests/cuda/kernels.cu's fatbin. Exits 77 when
 * no device exists; aborts on any other failure. */
void fx_open(fx *f);
void fx_close(fx *f);

CUdeviceptr fx_alloc(fx *f, size_t bytes);
void fx_free(fx *f, CUdeviceptr p);
void fx_upload(fx *f, CUdeviceptr dst, const void *src, size_t bytes);
void fx_download(fx *f, void *dst, CUdeviceptr src, size_t bytes);

/* One dispatch under construction; build in place (it points into itself). */
typedef struct fx_disp {
    mox__cuda_dispatch d;
    const void *argp[8];
    uint32_t sizes[8];
    uint64_t store[8];
    uint32_t deps[8];
    mox__cuda_ext_dep ext[4];
} fx_disp;

void fx_set(fx_disp *x, const mox__cuda_kernel *k, uint32_t grid, uint32_t block);
void fx_ptr(fx_disp *x, CUdeviceptr p);
void fx_u32(fx_disp *x, uint32_t v);
void fx_dep(fx_disp *x, uint32_t dispatch);
void fx_ext(fx_disp *x, mox__cuda_sub *sub, uint32_t dispatch);

typedef struct fx_wait {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    mox_status status;
    uint32_t count;
    uint32_t states[64];
    uint32_t codes[64];
} fx_wait;

void fx_wait_init(fx_wait *w);
/* Blocks until the submission's completion was reported (with a 60 s guard
 * that fails the test rather than hanging). */
void fx_wait_for(fx_wait *w);

/* Submits disp[0..n) after `waits`; the completion goes to *w. Returns the
 * submit status; *sub (may be NULL) gets the caller's reference. */
mox_status fx_submit(fx *f, fx_disp *disp, uint32_t n, mox__cuda_sub **waits, uint32_t nwaits,
                     fx_wait *w, mox__cuda_sub **sub);

#endif
