/* vec_add.c - the smallest kernel: two read buffers, a write buffer, a value. */
#include <mox/kernel.h>

MOX_KERNEL
void vec_add(const float *a, const float *b, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a[i] + b[i];
}
