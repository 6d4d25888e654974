/* runner_fakecuda_kernels.c - the stand-in driver's share of the
 * kernel-quality suite (see runner_fakecuda.c): vec_add, reduce,
 * histogram, block_scan, add_offsets, particle_update, matmul, matmul_f16
 * and the spin kernel computed in C in the kernels' order of operations,
 * each aborting on a launch geometry the real kernel would compute wrongly
 * with. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "particle.h"
#include "runner_fakecuda.h"

#define PTR(T, i) (*(T *const *)p[i])
#define U32(i) (*(const uint32_t *)p[i])

/* Aborts on a geometry the real kernels would compute wrongly with. */
static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fakecuda: bad launch: %s\n", what);
        abort();
    }
}

static void k_vec_add(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    expect((uint64_t)gx * bx >= n && gy == 1 && by == 1, "vec_add grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(float, 2)[i] = PTR(const float, 0)[i] + PTR(const float, 1)[i];
}

static void k_reduce(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "reduce grid");
    for (unsigned b = 0; b < gx; b++) {
        float tile[256];
        for (unsigned t = 0; t < 256; t++)
            tile[t] = b * 256 + t < n ? PTR(const float, 0)[b * 256 + t] : 0.0f;
        for (unsigned s = 128; s > 0; s /= 2)
            for (unsigned t = 0; t < s; t++)
                tile[t] = tile[t] + tile[t + s];
        PTR(float, 1)[b] = tile[0];
    }
}

static void k_histogram(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "histogram grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(uint32_t, 1)[PTR(const uint32_t, 0)[i] & 15u]++;
}

static void k_block_scan(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "block_scan grid");
    for (unsigned b = 0; b < gx; b++) {
        uint32_t run = 0;
        for (unsigned t = 0; t < 256; t++) {
            uint32_t i = b * 256 + t, v = i < n ? PTR(const uint32_t, 0)[i] : 0u;
            if (i < n)
                PTR(uint32_t, 1)[i] = run;
            run += v;
        }
        PTR(uint32_t, 2)[b] = run;
    }
}

static void k_add_offsets(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(2);
    expect(bx == 256 && by == 1 && gy == 1 && (uint64_t)gx * 256 >= n, "add_offsets grid");
    for (uint32_t i = 0; i < n; i++)
        PTR(uint32_t, 0)[i] += PTR(const uint32_t, 1)[i / 256];
}

static void k_particle_update(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    uint32_t n = U32(3);
    Config c = *(const Config *)p[2];
    expect(bx == 64 && by == 1 && gy == 1 && (uint64_t)gx * 64 >= n, "particle_update grid");
    for (uint32_t i = 0; i < n; i++) {
        Particle q = PTR(const Particle, 0)[i];
        if (q.tag != 0) {
            for (int s = 0; s < 2; s++)
                for (int a = 0; a < 2; a++) {
                    q.motion.velocity[a] = q.motion.velocity[a] + c.acceleration[a] * c.dt;
                    q.motion.position[a] = q.motion.position[a] + q.motion.velocity[a] * c.dt;
                }
            q.flags = (uint16_t)(q.flags + 2);
            q.color[1] = q.color[0];
        }
        PTR(Particle, 1)[i] = q;
    }
}

static float half_bits(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e ? ldexpf((float)(1024 + m), e - 25) : ldexpf((float)m, -24);
    return h >> 15 ? -v : v;
}

static void matmul_any(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by, int f16)
{
    uint32_t rows = U32(3), cols = U32(4), inner = U32(5);
    expect(bx == 16 && by == 16 && (uint64_t)gx * 16 >= cols && (uint64_t)gy * 16 >= rows, "matmul grid");
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            float acc = 0.0f;
            for (uint32_t k = 0; k < inner; k++) {
                float a = f16 ? half_bits(PTR(const uint16_t, 0)[r * inner + k]) : PTR(const float, 0)[r * inner + k];
                float b = f16 ? half_bits(PTR(const uint16_t, 1)[k * cols + c]) : PTR(const float, 1)[k * cols + c];
                acc = acc + a * b;
            }
            PTR(float, 2)[r * cols + c] = acc;
        }
}

static void k_matmul(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    matmul_any(p, gx, gy, bx, by, 0);
}

static void k_matmul_f16(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    matmul_any(p, gx, gy, bx, by, 1);
}

static void k_spin(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by)
{
    expect(gx == 1 && gy == 1 && bx == 1 && by == 1 && *(const unsigned long long *)p[0] > 0, "spin");
}

static const struct {
    const char *name;
    fake_kernel run;
} g_kernels[] = {
    {"spin", k_spin},
    {"vec_add", k_vec_add},       {"reduce", k_reduce},
    {"histogram", k_histogram},   {"block_scan", k_block_scan},
    {"add_offsets", k_add_offsets}, {"particle_update", k_particle_update},
    {"matmul", k_matmul},         {"matmul_f16", k_matmul_f16},
};

fake_kernel fake_quality_kernel(const char *base)
{
    for (size_t k = 0; k < sizeof g_kernels / sizeof *g_kernels; k++)
        if (strcmp(base, g_kernels[k].name) == 0)
            return g_kernels[k].run;
    return NULL;
}

void fake_quality_break(fake_kernel run, void **params)
{
    if (run == k_vec_add)
        *(uint32_t *)(void *)&(*(float *const *)params[2])[0] ^= 1u;
}
