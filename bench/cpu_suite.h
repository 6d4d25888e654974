/* cpu_suite.h - what the files of the CPU suite (suite "cpu" of
 * mox_bench: the CPU backend against plain C, cpu_suite.c) share: the
 * workloads, their host data and plain C runs (cpu_suite_work.c), and
 * their buffers and runs on a mox CPU device (cpu_suite_mox.c). */
#ifndef MOX_BENCH_CPU_SUITE_H
#define MOX_BENCH_CPU_SUITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mox/mox.h>

#include "particle.h"

enum { W_VEC, W_RED, W_HIST, W_SCAN, W_PART, W_MM, W_MM16, W_COUNT };
extern const char *const cpu_work_names[W_COUNT];

/* Input sets a workload alternates between; scan levels at most. */
#define CPU_SUITE_SETS 2
#define CPU_SUITE_LEVELS 8

/* A workload on the host: inputs and expected results per set, the
 * buffer a run's output is read back into (or the plain C run writes). */
typedef struct cpu_work {
    int kind;
    size_t n;         /* elements; matrices: dim */
    size_t in_bytes[2], out_bytes;
    void *in[CPU_SUITE_SETS][2];
    void *expect[CPU_SUITE_SETS];
    void *host_out;
    Config config;
} cpu_work;

/* The same workload's buffers on a mox CPU device. */
typedef struct cpu_dev {
    mox_device *dev;
    mox_buffer *in[CPU_SUITE_SETS][2], *out[CPU_SUITE_SETS];
    mox_buffer *totals[CPU_SUITE_LEVELS], *prefix[CPU_SUITE_LEVELS];
    size_t level_n[CPU_SUITE_LEVELS];
    uint32_t levels;
    uint32_t set; /* the set a recorded scan works on */
} cpu_dev;

/* ---- cpu_suite_work.c: the host side ---- */

/* Sizes, inputs and expected results of kind at smoke or full size; false
 * when out of memory (then nothing is left allocated). */
bool cpu_work_make(cpu_work *w, int kind, bool smoke);
void cpu_work_free(cpu_work *w);
/* The plain C loops (cpu_baseline.h) over set s into host_out; false when
 * out of memory. */
bool cpu_work_run_c(const cpu_work *w, uint32_t s);
/* Compares host_out with the set's expected result, then poisons host_out. */
bool cpu_work_check(const cpu_work *w, uint32_t s, char *why, size_t why_len);
/* The case's params text, bytes moved and operations per run. */
void cpu_work_params(const cpu_work *w, char *out, size_t size, double *bytes, double *flops);

/* ---- cpu_suite_mox.c: the mox side ---- */

/* Creates w's buffers (and a scan's level buffers) on d->dev. */
mox_status cpu_dev_make(cpu_dev *d, const cpu_work *w);
/* Releases them, keeping d->dev. */
void cpu_dev_free(cpu_dev *d);
/* Before a run: histogram bins start at zero, other outputs poisoned. */
mox_status cpu_dev_reset(const cpu_work *w, cpu_dev *d, uint32_t s);
/* One run over set s through the generated bindings, constructed and waited. */
mox_status cpu_dev_run(const cpu_work *w, cpu_dev *d, uint32_t s);

#endif
