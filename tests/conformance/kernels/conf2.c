/* conf2.c - a second module ("conf2") for the conformance suite: two
 * modules loaded on one device must each run their own code. */
#include <mox/kernel.h>

/* out[i] = in[i] * 10 + 1 (no kernel of "conf" computes this) */
MOX_KERNEL void tenfold(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = in[i] * 10.0f + 1.0f;
}
