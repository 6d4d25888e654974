/* runner_gpu_workload_state.h - the state every kernel-quality workload
 * (runner_gpu_cases.c) keeps, and its life: buffers and expected results
 * per input set, made, poisoned, verified word by word and freed
 * (runner_gpu_workload_state.c). */
#ifndef MOX_BENCH_RUNNER_GPU_WORKLOAD_STATE_H
#define MOX_BENCH_RUNNER_GPU_WORKLOAD_STATE_H

#include "runner_gpu.h"
#include "runner_work.h"

#define GPU_MAX_BUFS 4
#define GPU_SCAN_LEVELS 8

/* One state type serves every workload: inputs and outputs per set, the
 * expected outputs per set, a host buffer to read back into. */
typedef struct gpu_wl_state {
    size_t n;                       /* elements (1-D workloads) */
    uint32_t rows, cols, inner;     /* matrix products */
    uint32_t sets;
    CUdeviceptr in[GPU_MAX_SETS][GPU_MAX_BUFS];
    CUdeviceptr out[GPU_MAX_SETS];
    size_t out_bytes;
    void *expect[GPU_MAX_SETS];
    void *host;
    gpu_kernel k[2];
    Config config;
    /* scan: level buffers above level 0 (shared by the sets) */
    uint32_t levels;
    size_t level_n[GPU_SCAN_LEVELS];
    CUdeviceptr totals[GPU_SCAN_LEVELS], prefix[GPU_SCAN_LEVELS];
} gpu_wl_state;

/* A state of `sets` input sets whose outputs are out_bytes each, with the
 * expected results and the read-back buffer allocated; NULL with g->err. */
gpu_wl_state *gpu_wl_new(gpu_ctx *g, uint32_t sets, size_t out_bytes);
/* Frees the device buffers and the host memory (state may be NULL). */
void gpu_wl_destroy(gpu_ctx *g, void *state);
/* Uploads one input and keeps it as in[set][slot]. */
bool gpu_wl_input(gpu_ctx *g, gpu_wl_state *w, uint32_t set, int slot, const void *data, size_t bytes);
/* Allocates the outputs of every set and poisons them. */
bool gpu_wl_outputs(gpu_ctx *g, gpu_wl_state *w);
/* Names the workload and hands it the state (freed by its destroy). */
void gpu_wl_fill(gpu_workload *out, const char *name, gpu_wl_state *w);
/* Appends a kernel's registers and local bytes (generated / reference) to the note. */
void gpu_wl_kernel_note(gpu_workload *out, const gpu_kernel *k, const char *what);
/* Reads the output of `set` back, compares it word by word with the
 * expected bits, and poisons it again for the set's next run. */
bool gpu_wl_verify_words(gpu_ctx *g, void *state, uint32_t set, char *why, size_t why_len);

#endif
