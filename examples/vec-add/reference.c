/* reference.c - the CPU reference of vec_add, written as plain C. */
#include "reference.h"

void vec_add_inputs(float *a, float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)(i % 1024) * 0.25f;
        b[i] = (float)(i % 511) * -0.5f;
    }
}

void vec_add_reference(const float *a, const float *b, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}
