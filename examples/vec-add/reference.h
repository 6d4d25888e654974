/* reference.h - plain-C reference for the vec-add example: the inputs the
 * host uploads and the result the kernel must reproduce bit for bit. */
#ifndef VEC_ADD_REFERENCE_H
#define VEC_ADD_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* Value written past n before a launch; the kernel must leave it alone. */
#define VEC_ADD_SENTINEL (-8192.0f)

/* a[i] = (i % 1024) * 0.25f, b[i] = (i % 511) * -0.5f for i < n. */
void vec_add_inputs(float *a, float *b, size_t n);
/* out[i] = a[i] + b[i] for i < n, in f32 (no contraction to worry about). */
void vec_add_reference(const float *a, const float *b, float *out, size_t n);

#endif
