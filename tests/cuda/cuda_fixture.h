/* tests/cuda/cuda_fixture.h - helpers for the backend-only GPU tests: open
 * the backend through its vtable (exit 77 without a GPU), load the test
 * kernels, build core-shaped submissions by hand, submit, wait. */
#ifndef MOX_TESTS_CUDA_FIXTURE_H
#define MOX_TESTS_CUDA_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/cuda_internal.h"
#include "test_glue.h"

#define FX_SKIP 77
#define FX_MAX_D 24

/* FX_DEFER_FINISH and FX_DEFER_ASKS: FX_FINISH with the deferred gate
 * check, with MOX_KFEAT_GATE_DEFERRED and without it (kernels.cu). */
enum { FX_SCALE = 0, FX_FINISH, FX_MAYBE_FAIL, FX_FAULT, FX_SPIN, FX_DEFER_FINISH, FX_DEFER_ASKS, FX_KERNELS };

typedef struct fx {
    mox__backend *backend;
    mox__cuda_dev *dev;
    const mox__cuda_api *api;
    mox__backend_info info;
    mox__cuda_module *mod;
    /* the queues' semaphores, as the core keeps them */
    mox__semaphore sems[MOX__CUDA_STREAMS];
    uint64_t values[MOX__CUDA_STREAMS];
    uint32_t next_queue;
} fx;

/* Opens the CUDA backend and loads tests/cuda/kernels.cu's fatbin. Exits 77
 * when no device exists; aborts on any other failure. */
void fx_open(fx *f);
void fx_close(fx *f);
/* The error of opening the CUDA backend with `var` set to `value` (NULL
 * when it opened; it is closed again). Exits 77 when no device exists. */
mox_error *fx_open_error(const char *var, const char *value);

CUdeviceptr fx_alloc(fx *f, size_t bytes);
void fx_free(fx *f, CUdeviceptr p);
void fx_put(fx *f, CUdeviceptr dst, const void *src, size_t bytes);
void fx_get(fx *f, void *dst, CUdeviceptr src, size_t bytes);

typedef struct fx_sub *fx_sub_ptr;

/* A submission as the core builds it, with its own completion record. */
typedef struct fx_sub {
    mox__submission pub;               /* first: the completion hook casts back */
    _Alignas(64) unsigned char be[sizeof(mox__cuda_sub)];
    mox__dispatch disp[FX_MAX_D];
    _Alignas(64) unsigned char dbe[FX_MAX_D][64]; /* each dispatch's d->be */
    mox__dispatch *dptr[FX_MAX_D];
    void *params[FX_MAX_D][8];
    _Alignas(16) uint64_t store[FX_MAX_D][8];
    mox__fill_operands fill[FX_MAX_D]; /* a fill's operands (hal.h) */
    mox__copy_operands copy[FX_MAX_D]; /* a lent upload's operands (hal.h) */
    uint32_t preds[64], succs[64];
    uint32_t npreds;
    mox__gate gates[16];
    uint32_t ngates;
    fx_sub_ptr after[8];               /* earlier submissions it runs after */
    uint32_t nafter;
    mox__sem_point points[8];          /* the wait list made from them */
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    mox_status status;
    char message[512];
} fx_sub;

void fx_sub_init(fx_sub *s);
/* `s` as one dispatch of FX_SPIN (one block of 32) that runs for about
 * `cycles` clock cycles (2 000 000 per millisecond at about 2 GHz; the
 * simulated driver sleeps as long) and then sets flags[slot] to 1. */
void fx_spin_sub(fx_sub *s, fx *f, CUdeviceptr flags, uint32_t slot, uint32_t cycles);
/* CLOCK_MONOTONIC in ns (the backend's clock). */
uint64_t fx_now_ns(void);
/* Appends a kernel dispatch (1-D); returns its index. */
uint32_t fx_kernel(fx_sub *s, fx *f, uint32_t kernel, uint32_t grid, uint32_t block);
/* Arguments / edges / gates of the last dispatch. */
void fx_ptr(fx_sub *s, CUdeviceptr p);
void fx_u32(fx_sub *s, uint32_t v);
void fx_pred(fx_sub *s, uint32_t from);
void fx_gate(fx_sub *s, fx_sub *earlier, uint32_t dispatch);
/* A fresh submission: finish(a -> b), gated on `writer`'s dispatch 0,
 * then finish(b -> c) after it (one block of 32 threads each). */
void fx_gated_reader(fx_sub *s, fx *f, fx_sub *writer, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c);
/* Appends a transfer dispatch; returns its index. */
/* Appends a FILL of `bytes` at buf + offset with the `size`-byte pattern,
 * its operands laid out as the core lays them (mox__fill_operands_set). */
uint32_t fx_fill(fx_sub *s, CUdeviceptr buf, uint64_t offset, uint64_t bytes, const void *pattern,
                 uint32_t size);
uint32_t fx_transfer(fx_sub *s, mox__cmd_kind kind, CUdeviceptr buf, uint64_t offset,
                     uint64_t bytes, void *host);
/* Appends an UPLOAD of `bytes` from `src` as mox_buffer_upload makes one
 * on CUDA: the bytes copied into pinned memory the backend lends (HAL
 * host_alloc), the copy's operands laid out (hal.h, "Uploads from
 * device-readable host memory"). Returns that memory, for the caller to
 * give back (mox__cuda_host_return) once the submission completed. */
void *fx_upload_lent(fx_sub *s, fx *f, CUdeviceptr buf, uint64_t offset, uint64_t bytes,
                     const void *src);
/* `s` runs after `earlier` (an earlier submission still in flight). */
void fx_after(fx_sub *s, fx_sub *earlier);
/* Hands the submission to the backend as the core would (call in order):
 * the queue of the latest earlier submission it runs after, else round
 * robin; a wait point per other queue; the next value of its queue. */
void fx_submit(fx *f, fx_sub *s);
/* Blocks until completion (aborts after 60 s rather than hang). */
void fx_wait(fx_sub *s);
uint32_t fx_state(const fx_sub *s, uint32_t i);
uint32_t fx_code(const fx_sub *s, uint32_t i);

#endif
