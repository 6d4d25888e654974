/* reference.c - the matmul example's CPU references, written to add in
 * exactly the kernels' order so that results compare bit for bit. */
#include <math.h>

#include "reference.h"

void dot_inputs(float *a, float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)((long)((i * 7u) % 37u) - 18) / 7.0f;
        b[i] = (float)(i % 101u) / 13.0f + 0.3f;
    }
}

void dot_reference_partials(const float *a, const float *b, size_t n, float *partials)
{
    size_t warps = (n + DOT_BLOCK - 1) / DOT_BLOCK * DOT_WARPS_PER_BLOCK;
    for (size_t w = 0; w < warps; w++) {
        float lane[DOT_WARP], next[DOT_WARP];
        for (size_t l = 0; l < DOT_WARP; l++) {
            size_t i = w * DOT_WARP + l;
            lane[l] = i < n ? a[i] * b[i] : 0.0f;
        }
        for (size_t offset = DOT_WARP / 2; offset > 0; offset /= 2) {
            for (size_t l = 0; l < DOT_WARP; l++)
                next[l] = lane[l] + lane[l ^ offset];
            for (size_t l = 0; l < DOT_WARP; l++)
                lane[l] = next[l];
        }
        partials[w] = lane[0];
    }
}

float dot_sum_partials(const float *partials, size_t count)
{
    float total = 0.0f;
    for (size_t i = 0; i < count; i++)
        total = total + partials[i];
    return total;
}

void matmul_inputs_f32(float *a, float *b, size_t rows, size_t cols, size_t inner)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < inner; k++)
            a[r * inner + k] = (float)((long)((r * 31u + k * 17u) % 1000u) - 500) / 97.0f;
    for (size_t k = 0; k < inner; k++)
        for (size_t c = 0; c < cols; c++)
            b[k * cols + c] = (float)((long)((k * 13u + c * 29u + 7u) % 999u) - 499) / 89.0f;
}

void matmul_reference_f32(const float *a, const float *b, float *c, size_t rows, size_t cols,
                          size_t inner)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t col = 0; col < cols; col++) {
            float acc = 0.0f;
            for (size_t k = 0; k < inner; k++)
                acc = acc + a[r * inner + k] * b[k * cols + col];
            c[r * cols + col] = acc;
        }
}

float f16_bits_to_f32(uint16_t bits)
{
    int exponent = (bits >> 10) & 0x1f;
    int mantissa = bits & 0x3ff;
    float magnitude;
    if (exponent == 0)
        magnitude = ldexpf((float)mantissa, -24);
    else if (exponent == 31)
        magnitude = mantissa ? NAN : INFINITY;
    else
        magnitude = ldexpf((float)(mantissa | 0x400), exponent - 25);
    return (bits & 0x8000) ? -magnitude : magnitude;
}

static uint16_t f16_input(uint32_t seed)
{
    uint32_t h = seed * 2654435761u;
    h ^= h >> 15;
    uint16_t sign = (uint16_t)((h & 1u) << 15);
    uint16_t mantissa = (uint16_t)((h >> 3) & 0x3ffu);
    switch ((h >> 13) % 61u) {
    case 0:
        return sign; /* a signed zero */
    case 1:
        return (uint16_t)(sign | mantissa); /* a subnormal (or zero) */
    default:
        return (uint16_t)(sign | (uint16_t)((12u + (h >> 20) % 5u) << 10) | mantissa);
    }
}

void matmul_inputs_f16(uint16_t *a, uint16_t *b, size_t rows, size_t cols, size_t inner)
{
    for (size_t i = 0; i < rows * inner; i++)
        a[i] = f16_input((uint32_t)(2 * i + 1));
    for (size_t i = 0; i < inner * cols; i++)
        b[i] = f16_input((uint32_t)(2 * i + 2) ^ 0x5bd1e995u);
}

void matmul_reference_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows,
                          size_t cols, size_t inner)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t col = 0; col < cols; col++) {
            float acc = 0.0f;
            for (size_t k = 0; k < inner; k++)
                acc = acc + f16_bits_to_f32(a[r * inner + k]) * f16_bits_to_f32(b[k * cols + col]);
            c[r * cols + col] = acc;
        }
}

size_t matmul_f16_check_bound(const uint16_t *a, const uint16_t *b, const float *c, size_t rows,
                              size_t cols, size_t inner, double *worst)
{
    const double u = ldexp(1.0, -24);
    const double gamma = u * (double)inner / (1.0 - u * (double)inner);
    *worst = 0.0;
    for (size_t r = 0; r < rows; r++)
        for (size_t col = 0; col < cols; col++) {
            double exact = 0.0, magnitude = 0.0;
            for (size_t k = 0; k < inner; k++) {
                double p = (double)f16_bits_to_f32(a[r * inner + k]) *
                           (double)f16_bits_to_f32(b[k * cols + col]);
                exact += p;
                magnitude += fabs(p);
            }
            double bound = 2e-6 + gamma * magnitude;
            double err = fabs((double)c[r * cols + col] - exact);
            if (err / bound > *worst)
                *worst = err / bound;
            if (!(err <= bound))
                return r * cols + col;
        }
    return rows * cols;
}
