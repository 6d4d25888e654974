/* cpu_overhead_kernels.c - the tiny kernels of bench/cpu_overhead.c
 * (module "ovh"): almost no work, so the runtime's cost shows. */
#include <mox/kernel.h>

MOX_KERNEL void bump(float *buf, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        buf[i] = buf[i] + 1.0f;
}

MOX_KERNEL void twice(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = in[i] * 2.0f;
}
