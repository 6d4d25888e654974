/* defined.c - a kernel source that needs mox_add_kernels' DEFINES: M_PI
 * (declared with _GNU_SOURCE) and CONSUMER_FACTOR. */
#include <mox/kernel.h>

#ifndef CONSUMER_FACTOR
#error "CONSUMER_FACTOR is not defined: DEFINES did not reach moxc"
#endif

MOX_KERNEL void times_pi(float *values, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        values[i] *= (float)M_PI * CONSUMER_FACTOR;
}
