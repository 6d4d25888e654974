/* cpu_baseline.c - plain C versions of the benchmark workloads (see
 * cpu_baseline.h): what a C programmer would write for a multicore CPU,
 * in the kernels' arithmetic order where floats are involved, so results
 * compare bit for bit. Built with -O3 (and -fopenmp when available), and
 * on x86-64 a second time with -march=x86-64-v3 -DCPU_BASELINE_SECOND
 * -DCPU_BASELINE_SUFFIX=_v3 (its loops only). */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define BASE_OMP(text) _Pragma(text)
#else
#define BASE_OMP(text)
#endif

#include "cpu_baseline.h"

#ifndef CPU_BASELINE_SECOND /* the default build also holds the shared parts */
const char *cpu_baseline_name(void)
{
#ifdef _OPENMP
    return "c-omp";
#else
    return "c";
#endif
}

void cpu_baseline_threads(uint32_t threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads ? (int)threads : 1);
#else
    (void)threads;
#endif
}

/* The x86-64-v3 build, when the bench has one (a weak reference: NULL
 * without it). */
extern const cpu_baseline_ops cpu_baseline_ops_default_v3 __attribute__((weak));

const cpu_baseline_ops *cpu_baseline_get(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (&cpu_baseline_ops_default_v3 != NULL && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        return &cpu_baseline_ops_default_v3;
#endif
    return &cpu_baseline_ops_default;
}
#endif

static void cpu_vec_add(const float *a, const float *b, float *out, size_t n)
{
    BASE_OMP("omp parallel for simd schedule(static)")
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

static void cpu_reduce(const float *in, size_t n, float *out)
{
    size_t blocks = (n + 255) / 256;
    BASE_OMP("omp parallel for schedule(static)")
    for (size_t b = 0; b < blocks; b++) {
        float tile[256];
        size_t first = b * 256;
        for (size_t t = 0; t < 256; t++)
            tile[t] = first + t < n ? in[first + t] : 0.0f;
        /* The kernel's tree: strides 128, 64, ..., 1. */
        for (size_t stride = 128; stride > 0; stride /= 2)
            for (size_t t = 0; t < stride; t++)
                tile[t] = tile[t] + tile[t + stride];
        out[b] = tile[0];
    }
}

static void cpu_histogram(const uint32_t *values, size_t n, uint32_t bins[16])
{
    memset(bins, 0, 16 * sizeof *bins);
    BASE_OMP("omp parallel")
    {
        uint32_t local[16] = {0};
        BASE_OMP("omp for schedule(static) nowait")
        for (size_t i = 0; i < n; i++)
            local[values[i] & 15u]++;
        for (int b = 0; b < 16; b++) {
            BASE_OMP("omp atomic")
            bins[b] += local[b];
        }
    }
}

static void cpu_scan(const uint32_t *values, size_t n, uint32_t *prefix)
{
#ifdef _OPENMP
    /* Two passes: each thread sums its chunk, the chunk offsets are
     * scanned, then each thread scans its chunk from its offset. */
    int max_threads = omp_get_max_threads();
    uint32_t *offsets = calloc((size_t)max_threads + 1, sizeof *offsets);
    if (offsets) {
        BASE_OMP("omp parallel")
        {
            int t = omp_get_thread_num(), threads = omp_get_num_threads();
            size_t first = n * (size_t)t / (size_t)threads, end = n * (size_t)(t + 1) / (size_t)threads;
            uint32_t sum = 0;
            for (size_t i = first; i < end; i++)
                sum += values[i];
            offsets[t + 1] = sum;
            BASE_OMP("omp barrier")
            BASE_OMP("omp single")
            for (int k = 1; k <= threads; k++)
                offsets[k] += offsets[k - 1];
            uint32_t run = offsets[t];
            for (size_t i = first; i < end; i++) {
                prefix[i] = run;
                run += values[i];
            }
        }
        free(offsets);
        return;
    }
#endif
    uint32_t run = 0;
    for (size_t i = 0; i < n; i++) {
        prefix[i] = run;
        run += values[i];
    }
}

static void advance(Particle *p, Config config, uint32_t steps)
{
    if (p->tag == 0)
        return;
    for (uint32_t s = 0; s < steps; s++) {
        for (uint32_t axis = 0; axis < 2; axis++) {
            p->motion.velocity[axis] = p->motion.velocity[axis] + config.acceleration[axis] * config.dt;
            p->motion.position[axis] = p->motion.position[axis] + p->motion.velocity[axis] * config.dt;
        }
    }
    p->flags = (uint16_t)(p->flags + steps);
    p->color[1] = p->color[0];
}

static void cpu_particles(const Particle *in, Particle *out, size_t n, Config config)
{
    BASE_OMP("omp parallel for schedule(static)")
    for (size_t i = 0; i < n; i++) {
        Particle p = in[i];
        advance(&p, config, 2);
        out[i] = p;
    }
}

static void cpu_matmul(const float *a, const float *b, float *c, size_t rows, size_t cols, size_t inner)
{
    BASE_OMP("omp parallel for schedule(static)")
    for (size_t r = 0; r < rows; r++) {
        float *crow = c + r * cols;
        for (size_t j = 0; j < cols; j++)
            crow[j] = 0.0f;
        /* k outer, j inner: vectorises over j, and each element still
         * accumulates in k order (no contraction). */
        for (size_t k = 0; k < inner; k++) {
            const float av = a[r * inner + k];
            const float *brow = b + k * cols;
            for (size_t j = 0; j < cols; j++)
                crow[j] = crow[j] + av * brow[j];
        }
    }
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13;
    } else if (exp != 0) {
        bits = sign | (exp + 112) << 23 | man << 13;
    } else if (man == 0) {
        bits = sign;
    } else {
        /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3ffu) << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static int cpu_matmul_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows, size_t cols,
                   size_t inner)
{
    float *fa = malloc(rows * inner * sizeof *fa), *fb = malloc(inner * cols * sizeof *fb);
    if (!fa || !fb) {
        free(fa);
        free(fb);
        return -1;
    }
    BASE_OMP("omp parallel for schedule(static)")
    for (size_t i = 0; i < rows * inner; i++)
        fa[i] = half_to_float(a[i]);
    BASE_OMP("omp parallel for schedule(static)")
    for (size_t i = 0; i < inner * cols; i++)
        fb[i] = half_to_float(b[i]);
    cpu_matmul(fa, fb, c, rows, cols, inner);
    free(fa);
    free(fb);
    return 0;
}

const cpu_baseline_ops CPU_BASELINE_OPS = {
#ifdef CPU_BASELINE_SECOND
    "x86-64-v3",
#else
    "default",
#endif
    cpu_vec_add, cpu_reduce, cpu_histogram, cpu_scan, cpu_particles, cpu_matmul, cpu_matmul_f16,
};
