/* runner_work.c - inputs and CPU results of the benchmark workloads (see
 * runner_work.h). The examples' own references give the reduction,
 * histogram, scan and particle results; the matrix product is computed
 * here in a cache-friendly loop order that keeps each element's k order,
 * so it matches the kernels bit for bit at sizes the examples' plain
 * triple loop would take minutes over. */
#include <stdlib.h>
#include <string.h>

#include "runner_work.h"

#include "examples/cooperation/reference.h"
#include "examples/matmul/reference.h"
#include "examples/particle-update/reference.h"
#include "examples/reduction/reference.h"

#ifdef _OPENMP
#define WORK_OMP(text) _Pragma(text)
#else
#define WORK_OMP(text)
#endif

uint64_t work_rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t seed_state(uint64_t seed, size_t chunk)
{
    /* A state per chunk keeps filling parallel and the values independent
     * of the thread count. */
    uint64_t s = (seed + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)chunk + 1) * 0xD1B54A32D192ED03ull;
    return s ? s : 1;
}

#define FILL_CHUNK 65536u

/* mantissa in [1, 2), exponent in [-8, 7], random sign */
static float rand_f32(uint64_t r)
{
    uint32_t bits = (uint32_t)(r >> 41) | ((uint32_t)(119 + (r & 15)) << 23) |
                    ((uint32_t)(r >> 4) & 1u) << 31;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void work_fill_f32(float *x, size_t n, uint64_t seed)
{
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    WORK_OMP("omp parallel for schedule(static)")
    for (size_t c = 0; c < chunks; c++) {
        uint64_t s = seed_state(seed, c);
        size_t end = (c + 1) * FILL_CHUNK < n ? (c + 1) * FILL_CHUNK : n;
        for (size_t i = c * FILL_CHUNK; i < end; i++)
            x[i] = rand_f32(work_rng_next(&s));
    }
}

void work_fill_u32(uint32_t *x, size_t n, uint64_t seed, uint32_t mask)
{
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    WORK_OMP("omp parallel for schedule(static)")
    for (size_t c = 0; c < chunks; c++) {
        uint64_t s = seed_state(seed, c);
        size_t end = (c + 1) * FILL_CHUNK < n ? (c + 1) * FILL_CHUNK : n;
        for (size_t i = c * FILL_CHUNK; i < end; i++)
            x[i] = (uint32_t)(work_rng_next(&s) >> 32) & mask;
    }
}

void work_fill_f16(uint16_t *x, size_t n, uint64_t seed)
{
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    WORK_OMP("omp parallel for schedule(static)")
    for (size_t c = 0; c < chunks; c++) {
        uint64_t s = seed_state(seed, c);
        size_t end = (c + 1) * FILL_CHUNK < n ? (c + 1) * FILL_CHUNK : n;
        for (size_t i = c * FILL_CHUNK; i < end; i++) {
            uint64_t r = work_rng_next(&s);
            /* exponent field 12..16: magnitudes [1/8, 4) */
            uint16_t exp = (uint16_t)(12 + (r >> 60) % 5);
            x[i] = (uint16_t)(((r >> 20) & 1u) << 15 | exp << 10 | ((r >> 30) & 0x3ffu));
        }
    }
}

void work_fill_particles(Particle *p, size_t n, uint64_t seed)
{
    memset(p, 0, n * sizeof *p);
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    WORK_OMP("omp parallel for schedule(static)")
    for (size_t c = 0; c < chunks; c++) {
        uint64_t s = seed_state(seed, c);
        size_t end = (c + 1) * FILL_CHUNK < n ? (c + 1) * FILL_CHUNK : n;
        for (size_t i = c * FILL_CHUNK; i < end; i++) {
            uint64_t r = work_rng_next(&s);
            p[i].tag = (uint8_t)((r & 7u) ? 1 + (r >> 3) % 200 : 0); /* 1 in 8 inactive */
            p[i].flags = (uint16_t)(65530u + (r >> 11) % 12);       /* wraps after a few */
            p[i].id = (uint32_t)i;
            for (int k = 0; k < 2; k++) {
                p[i].motion.position[k] = rand_f32(work_rng_next(&s));
                p[i].motion.velocity[k] = rand_f32(work_rng_next(&s));
            }
            for (int k = 0; k < 3; k++)
                p[i].color[k] = (uint8_t)(r >> (40 + 8 * k));
        }
    }
}

Config work_particle_config(void)
{
    Config c = {0.015625f, {0.25f, -9.8125f}};
    return c;
}

void work_vec_add(const float *a, const float *b, float *out, size_t n)
{
    WORK_OMP("omp parallel for simd schedule(static)")
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void work_reduce(const float *in, size_t n, float *out)
{
    reduction_reference(in, n, out);
}

void work_histogram(const uint32_t *values, size_t n, uint32_t bins[WORK_HIST_BINS])
{
    histogram_reference(values, n, bins);
}

void work_scan(const uint32_t *values, size_t n, uint32_t *prefix)
{
    exclusive_scan_reference(values, n, prefix);
}

void work_particles(const Particle *in, Particle *out, size_t n, Config config)
{
    size_t chunks = (n + FILL_CHUNK - 1) / FILL_CHUNK;
    WORK_OMP("omp parallel for schedule(static)")
    for (size_t c = 0; c < chunks; c++) {
        size_t first = c * FILL_CHUNK;
        size_t count = n - first < FILL_CHUNK ? n - first : FILL_CHUNK;
        particle_reference(in + first, out + first, count, config, 2);
    }
}

void work_matmul_f32(const float *a, const float *b, float *c, size_t rows, size_t cols,
                     size_t inner)
{
    WORK_OMP("omp parallel for schedule(dynamic, 4)")
    for (size_t r = 0; r < rows; r++) {
        float *crow = c + r * cols;
        for (size_t j = 0; j < cols; j++)
            crow[j] = 0.0f;
        /* k outermost per row: every element still sees k = 0, 1, 2, ... */
        for (size_t k = 0; k < inner; k++) {
            const float av = a[r * inner + k];
            const float *brow = b + k * cols;
            for (size_t j = 0; j < cols; j++)
                crow[j] = crow[j] + av * brow[j];
        }
    }
}

void work_matmul_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows, size_t cols,
                     size_t inner)
{
    /* The kernels widen each element exactly before multiplying. */
    float *fa = malloc(rows * inner * sizeof *fa), *fb = malloc(inner * cols * sizeof *fb);
    if (!fa || !fb) {
        free(fa);
        free(fb);
        matmul_reference_f16(a, b, c, rows, cols, inner);
        return;
    }
    for (size_t i = 0; i < rows * inner; i++)
        fa[i] = f16_bits_to_f32(a[i]);
    for (size_t i = 0; i < inner * cols; i++)
        fb[i] = f16_bits_to_f32(b[i]);
    work_matmul_f32(fa, fb, c, rows, cols, inner);
    free(fa);
    free(fb);
}

size_t work_first_diff32(const void *got, const void *want, size_t n)
{
    const uint32_t *g = got, *w = want;
    if (memcmp(g, w, n * sizeof *g) == 0)
        return n;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i])
            return i;
    return n;
}

size_t work_first_diff_particle(const Particle *got, const Particle *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!particle_equal(&got[i], &want[i]))
            return i;
    return n;
}
