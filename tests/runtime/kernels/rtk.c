/* rtk.c - one kernel for the allocation-failure loop. */
#include <mox/kernel.h>

MOX_KERNEL void axpy(const float *x, float *y, float a, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
