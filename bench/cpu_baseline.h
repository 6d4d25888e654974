/* cpu_baseline.h - the CPU suite's baselines: the workloads as plain C
 * loops (built with -O3, and OpenMP where the build has it), computing the
 * same results as the kernels so they are verified the same way. Like the
 * kernels' work-group functions they exist twice on x86-64: for the
 * baseline ISA and for x86-64-v3 (cpu_baseline.c compiled a second time
 * with -march=x86-64-v3 and CPU_BASELINE_SUFFIX=_v3), and the suite runs
 * the one the CPU can (cpu_baseline_get), so both sides of a comparison
 * use the same instructions. */
#ifndef MOX_BENCH_CPU_BASELINE_H
#define MOX_BENCH_CPU_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "particle.h"

/* "c-omp" when built with OpenMP, else "c". */
const char *cpu_baseline_name(void);
/* Threads the following calls use (OpenMP); ignored without OpenMP. */
void cpu_baseline_threads(uint32_t threads);

typedef struct cpu_baseline_ops {
    const char *isa; /* "x86-64-v3" or "default" */
    void (*vec_add)(const float *a, const float *b, float *out, size_t n);
    void (*reduce)(const float *in, size_t n, float *out);
    void (*histogram)(const uint32_t *values, size_t n, uint32_t bins[16]);
    void (*scan)(const uint32_t *values, size_t n, uint32_t *prefix);
    void (*particles)(const Particle *in, Particle *out, size_t n, Config config);
    void (*matmul)(const float *a, const float *b, float *c, size_t rows, size_t cols, size_t inner);
    /* Returns 0, or -1 when out of memory (the widened copies). */
    int (*matmul_f16)(const uint16_t *a, const uint16_t *b, float *c, size_t rows, size_t cols, size_t inner);
} cpu_baseline_ops;

/* The loops for this CPU: the x86-64-v3 build when there is one and the
 * CPU has AVX2, FMA and BMI2, else the default one. */
const cpu_baseline_ops *cpu_baseline_get(void);

#ifndef CPU_BASELINE_SUFFIX
#define CPU_BASELINE_SUFFIX
#endif
#define CPU_BASELINE_CAT2(a, b) a##b
#define CPU_BASELINE_CAT(a, b) CPU_BASELINE_CAT2(a, b)
/* cpu_baseline_ops_default / cpu_baseline_ops_v3 (cpu_baseline.c). */
#define CPU_BASELINE_OPS CPU_BASELINE_CAT(cpu_baseline_ops_, CPU_BASELINE_CAT(default, CPU_BASELINE_SUFFIX))
extern const cpu_baseline_ops cpu_baseline_ops_default;

#endif
