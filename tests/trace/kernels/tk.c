/* tk.c - kernels of the trace tests: a scale, and one that fails on
 * request (so a batch shows a failed dispatch and a gated dependent). */
#include <mox/kernel.h>

MOX_KERNEL
void scale(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}

MOX_KERNEL
void maybe_fail(const float *in, float *out, uint32_t n, uint32_t code)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (code != 0u && i == 0u)
        mox_fail(code);
    if (i < n)
        out[i] = in[i] + 1.0f;
}
