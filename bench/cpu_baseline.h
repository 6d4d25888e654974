/* cpu_baseline.h - the CPU suite's baselines: the workloads as plain C
 * loops (built with -O3, and OpenMP where the build has it), computing the
 * same results as the kernels so they are verified the same way. */
#ifndef MOX_BENCH_CPU_BASELINE_H
#define MOX_BENCH_CPU_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "particle.h"

/* "c-omp" when built with OpenMP, else "c". */
const char *cpu_baseline_name(void);
/* Threads the following calls use (OpenMP); ignored without OpenMP. */
void cpu_baseline_threads(uint32_t threads);

void cpu_vec_add(const float *a, const float *b, float *out, size_t n);
void cpu_reduce(const float *in, size_t n, float *out);
void cpu_histogram(const uint32_t *values, size_t n, uint32_t bins[16]);
void cpu_scan(const uint32_t *values, size_t n, uint32_t *prefix);
void cpu_particles(const Particle *in, Particle *out, size_t n, Config config);
void cpu_matmul(const float *a, const float *b, float *c, size_t rows, size_t cols, size_t inner);
/* Returns 0, or -1 when out of memory (the widened copies). */
int cpu_matmul_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows, size_t cols,
                   size_t inner);

#endif
