/* reference.h - plain-C references for the matmul example: the dot
 * product's warp-butterfly partials, the f32 and f16 matrix products in the
 * kernels' order, an f64 product with its error bound, and binary16 helpers
 * for the host. */
#ifndef MATMUL_REFERENCE_H
#define MATMUL_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#define DOT_BLOCK 256u
#define DOT_WARP 32u
#define DOT_WARPS_PER_BLOCK (DOT_BLOCK / DOT_WARP)

void dot_inputs(float *a, float *b, size_t n);
/* One partial per warp of the padded grid (ceil(n/256) * 8 of them), each
 * summed in mox_warp_sum_f32's order: xor butterfly with offsets 16..1,
 * every lane adding its partner's value to its own; lane 0's result. */
void dot_reference_partials(const float *a, const float *b, size_t n, float *partials);
/* The partials added left to right, as the host does. */
float dot_sum_partials(const float *partials, size_t count);

/* Row-major a (rows x inner) and b (inner x cols). */
void matmul_inputs_f32(float *a, float *b, size_t rows, size_t cols, size_t inner);
/* c[r][c] = sum over k in increasing order, in f32, starting from +0. */
void matmul_reference_f32(const float *a, const float *b, float *c, size_t rows, size_t cols,
                          size_t inner);

/* binary16 bits to f32, exactly. */
float f16_bits_to_f32(uint16_t bits);
/* Finite binary16 inputs: normals of magnitude ~[1/8, 4), some subnormals
 * and signed zeros. */
void matmul_inputs_f16(uint16_t *a, uint16_t *b, size_t rows, size_t cols, size_t inner);
void matmul_reference_f16(const uint16_t *a, const uint16_t *b, float *c, size_t rows,
                          size_t cols, size_t inner);
/* Checks c against the f64 product: |c - exact| <= 2e-6 + gamma * sum|a*b|
 * with gamma = u*k / (1 - u*k), u = 2^-24, k = inner. Returns the index of
 * the first element outside the bound, or rows*cols when all are inside;
 * *worst gets the largest ratio err / bound seen. */
size_t matmul_f16_check_bound(const uint16_t *a, const uint16_t *b, const float *c, size_t rows,
                              size_t cols, size_t inner, double *worst);

#endif
