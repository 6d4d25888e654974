/* reference.h - plain-C reference for the reduction example. */
#ifndef REDUCTION_REFERENCE_H
#define REDUCTION_REFERENCE_H

#include <stddef.h>

#define REDUCTION_BLOCK 256u

/* Deterministic inputs with varied magnitudes and signs, so that the order
 * of the additions matters (a wrong order shows up as different bits). */
void reduction_inputs(float *input, size_t n);
/* output[b] = sum of input[256b .. 256b+255] (0 past n), added in the
 * kernel's tree order: strides 128, 64, ..., 1. */
void reduction_reference(const float *input, size_t n, float *output);

#endif
