/* reference.c - the CPU reference of the block reduction, in the kernel's
 * exact tree order. */
#include "reference.h"

void reduction_inputs(float *input, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float magnitude = (float)((i * 2654435761u) % 10007u) / 64.0f;
        float scale = (i % 3 == 0) ? 1.0f / 1024.0f : (i % 3 == 1 ? 1.0f : 1024.0f);
        input[i] = (i % 2 ? -magnitude : magnitude) * scale;
    }
}

void reduction_reference(const float *input, size_t n, float *output)
{
    size_t blocks = (n + REDUCTION_BLOCK - 1) / REDUCTION_BLOCK;
    for (size_t b = 0; b < blocks; b++) {
        float tile[REDUCTION_BLOCK];
        for (size_t t = 0; t < REDUCTION_BLOCK; t++) {
            size_t i = b * REDUCTION_BLOCK + t;
            tile[t] = i < n ? input[i] : 0.0f;
        }
        for (size_t stride = REDUCTION_BLOCK / 2; stride > 0; stride /= 2)
            for (size_t t = 0; t < stride; t++)
                tile[t] = tile[t] + tile[t + stride];
        output[b] = tile[0];
    }
}
