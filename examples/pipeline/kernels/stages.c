/* stages.c - the pipeline's kernels (module "stages"): two fixed-block
 * first stages and a block-agnostic second stage. */
#include "affine.h"

MOX_KERNEL MOX_BLOCK(128, 1, 1) void scale_128(const float *input, float *output, uint32_t n)
{
    uint32_t i = global_index();
    affine a = {2.0f, 3.0f};
    if (i < n)
        output[i] = affine_apply(a, input[i]);
}

MOX_KERNEL MOX_BLOCK(256, 1, 1) void scale_256(const float *input, float *output, uint32_t n)
{
    uint32_t i = global_index();
    affine a = {4.0f, 3.0f};
    if (i < n)
        output[i] = affine_apply(a, input[i]);
}

MOX_KERNEL void finish(const float *input, float *output, uint32_t n)
{
    uint32_t i = global_index();
    affine a = {5.0f, 7.0f};
    if (i < n)
        output[i] = affine_apply(a, input[i]);
}
