/* overhead.c - kernels of the benchmark module "benchrt": the two stages of
 * the pipeline the peers also run (x*4+3, then x*5+7), and launches with
 * 1..16 buffer arguments that measure the runtime's per-argument cost
 * (dependency inference). All are tiny on purpose: what is timed is the
 * runtime around them. */
#include <mox/kernel.h>

MOX_KERNEL
void stage_a(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = input[i] * 4.0f + 3.0f;
}

MOX_KERNEL
void stage_b(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = input[i] * 5.0f + 7.0f;
}

/* argsK: K buffer arguments, K-1 read and one written. */
MOX_KERNEL
void args1(float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = 1.0f;
}

MOX_KERNEL
void args2(const float *a0, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a0[i];
}

MOX_KERNEL
void args4(const float *a0, const float *a1, const float *a2, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a0[i] + a1[i] + a2[i];
}

MOX_KERNEL
void args8(const float *a0, const float *a1, const float *a2, const float *a3, const float *a4,
           const float *a5, const float *a6, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i];
}

MOX_KERNEL
void args16(const float *a0, const float *a1, const float *a2, const float *a3, const float *a4,
            const float *a5, const float *a6, const float *a7, const float *a8, const float *a9,
            const float *a10, const float *a11, const float *a12, const float *a13,
            const float *a14, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a0[i] + a1[i] + a2[i] + a3[i] + a4[i] + a5[i] + a6[i] + a7[i] + a8[i] + a9[i] +
                 a10[i] + a11[i] + a12[i] + a13[i] + a14[i];
}
