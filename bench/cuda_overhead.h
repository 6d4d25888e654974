/* cuda_overhead.h - what the files of bench/cuda_overhead share: the
 * program's clock, median and JSON writer (cuda_overhead.c), the mox side's
 * two-stage sequence and buffers (cuda_overhead_mox.c), and the four
 * sections, each measuring mox and raw CUDA and printing its table rows
 * and JSON keys (A and B: cuda_overhead_launch.c; C and D:
 * cuda_overhead_throughput.c). */
#ifndef MOX_BENCH_CUDA_OVERHEAD_H
#define MOX_BENCH_CUDA_OVERHEAD_H

#include <stdint.h>

#include <mox/mox.h>

#include "cuda_raw.h"

/* ---- cuda_overhead.c ---- */

/* CLOCK_MONOTONIC, microseconds. */
double ovh_now_us(void);
/* This process's user + system CPU time, microseconds. */
double ovh_cpu_us(void);
/* Sorts v and returns its median. */
double ovh_median(double *v, int n);
/* Adds "key": v to the JSON object being written. */
void ovh_json_num(const char *key, double v);

/* ---- cuda_overhead_mox.c: the mox side ---- */

/* out = (in * 4 + 3) + 1 over n floats, through tmp: the two stages. */
typedef struct ovh_two_stage {
    mox_device *dev;
    mox_buffer *in, *tmp, *out;
    uint32_t n;
} ovh_two_stage;

/* Submits `count` two-stage sequences keeping up to `window` in flight. */
void ovh_mox_pipelined(ovh_two_stage *t, int count, int window);
/* Exits 1 unless the first 4096 elements of out are in's through both stages. */
void ovh_check_two_stage(mox_buffer *in, mox_buffer *out, uint32_t n);
/* n floats (i % 1024) * 0.25 + 1, and n zeros. */
mox_buffer *ovh_make_input(mox_device *dev, uint32_t n);
mox_buffer *ovh_make_zero(mox_device *dev, uint32_t n);
/* A device with other backend settings (read by the backend at open). */
mox_device *ovh_open_variant(const char *var, const char *value);

/* ---- the sections ---- */

/* The raw side's n = 256 two-stage buffers, their stage arguments and the
 * replayed graph of both stages: made by section A, whose first stage B's
 * raw round trips launch again, freed at the end by main. */
typedef struct ovh_small {
    CUdeviceptr in, tmp, out;
    stage_args s1, s2;
    CUgraph graph;
    CUgraphExec exec;
} ovh_small;

/* E. mox_buffer_fill against cuMemsetD32Async (cuda_overhead_fill.c). */
void ovh_section_e(mox_device *dev, raw *r);
/* A. us per dispatch of pipelined two-stage sequences at n = 256 (fills *sm). */
void ovh_section_a(mox_device *dev, raw *r, ovh_small *sm);
/* B. one launch + wait round trip, and the CPU of an idle open device. */
void ovh_section_b(mox_device *dev, raw *r, ovh_small *sm);
void ovh_small_free(ovh_small *sm);
/* C. throughput of the two-stage pipeline at n = 2^28. */
void ovh_section_c(mox_device *dev, raw *r);
/* D. 8 independent dispatches in one sequence vs the same 8 serialised. */
void ovh_section_d(mox_device *dev, raw *r);
/* F. pipelined batches of an upload and the two stages over it
 * (cuda_overhead_upload.c). */
void ovh_section_f(mox_device *dev, raw *r);

#endif
