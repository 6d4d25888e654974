/* runner_work.h - the benchmark workloads' inputs and CPU results, shared
 * by the GPU suite (to verify every sample) and the CPU suite. Inputs are
 * random (seeded per input set, never zeros); results have the bits the
 * kernels produce (same operation order, no contraction). */
#ifndef MOX_BENCH_RUNNER_WORK_H
#define MOX_BENCH_RUNNER_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "particle.h" /* examples/particle-update/kernels */

#define WORK_BLOCK 256u     /* block size of the 1-D kernels */
#define WORK_HIST_BINS 16u

/* xorshift64*: cheap, reproducible from the seed. */
uint64_t work_rng_next(uint64_t *state);

/* Floats of varied magnitude and sign (|x| in about [2^-8, 2^8)). */
void work_fill_f32(float *x, size_t n, uint64_t seed);
/* u32 values masked with `mask`. */
void work_fill_u32(uint32_t *x, size_t n, uint64_t seed, uint32_t mask);
/* Finite binary16 values of magnitude about [1/8, 4), both signs. */
void work_fill_f16(uint16_t *x, size_t n, uint64_t seed);
/* Particles with random motion, some inactive (tag 0), flags near the u16
 * wrap, random colors; padding bytes zeroed. */
void work_fill_particles(Particle *p, size_t n, uint64_t seed);
Config work_particle_config(void);

/* Results (OpenMP-parallel where the order allows). */
void work_vec_add(const float *a, const float *b, float *out, size_t n);
/* One sum per 256-element block in the kernel's tree order. */
void work_reduce(const float *in, size_t n, float *out);
void work_histogram(const uint32_t *values, size_t n, uint32_t bins[WORK_HIST_BINS]);
void work_scan(const uint32_t *values, size_t n, uint32_t *prefix);
void work_particles(const Particle *in, Particle *out, size_t n, Config config);
/* c = a * b, each element summed over k in increasing order from +0. */
void work_matmul_f32(const float *a, const float *b, float *c, size_t rows, size_t cols,
                     size_t inner);
void work_matmul_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows, size_t cols,
                     size_t inner);

/* Index of the first element whose bits differ, or n when all match. */
size_t work_first_diff32(const void *got, const void *want, size_t n);
size_t work_first_diff_particle(const Particle *got, const Particle *want, size_t n);

/* Blocks of `block` threads covering n. */
static inline uint32_t work_blocks(size_t n, uint32_t block)
{
    return (uint32_t)((n + block - 1) / block);
}

#endif
