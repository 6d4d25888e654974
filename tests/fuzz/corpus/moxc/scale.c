/* scale.c - fixed block shapes (one through a macro), a helper, a file-scope
 * constant, <math.h> calls, and mox_fail. */
#include <mox/kernel.h>

#define WIDE 256
#define DECLARE_HELPER(name) static inline float name(float x) { return x * 2.0f; }

static const float offsets[2] = {3.0f, 1.0f};

DECLARE_HELPER(twice)

static float affine(float x, float k)
{
    return x * k + offsets[0];
}

MOX_KERNEL MOX_BLOCK(128, 1, 1)
void scale_128(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = affine(input[i], 2.0f);
}

MOX_KERNEL MOX_BLOCK(WIDE, 1, 1)
void scale_256(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    float k = 0.5; /* a double constant converted at compile time is fine */
    if (i < n)
        output[i] = affine(twice(input[i]), k) + sqrtf(fabsf(input[i])) + expf(0.0f);
}

MOX_KERNEL MOX_BLOCK(8, 4, 2)
void finish(float *data, uint32_t n, int32_t code)
{
    uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().z * 32u + mox_thread_idx().y * 8u +
                 mox_thread_idx().x;
    if (i >= n)
        return;
    if (isnan(data[i]) || isinf(data[i]))
        mox_fail((uint32_t)code);
    else
        data[i] = truncf(data[i]);
}
