/* multi_gpu.c - kernels of the two-GPU benchmark (module "mgpu",
 * bench/multi_gpu.c): a pipeline stage with a tunable amount of arithmetic
 * per element, and a writer that may fail (so that a copy of its output
 * takes the gated path). */
#include <mox/kernel.h>

/* out[i] = in[i] after `iters` multiply-adds (two roundings each). */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void mg_stage(const float *in, float *out, uint32_t n, uint32_t iters)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    float x = in[i];
    for (uint32_t k = 0; k < iters; k++)
        x = x * 0.999f + 0.5f;
    out[i] = x;
}

/* out[i] = i; fails with code 1 when `fail` (never, in the benchmark: it
 * only has to be able to). */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void mg_maybe_fail(float *out, uint32_t n, uint32_t fail)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    if (fail && i == 0)
        mox_fail(1);
    out[i] = (float)i;
}

/* out[i] = i: the same work as mg_maybe_fail, by a kernel that cannot fail. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void mg_fill(float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = (float)i;
}
