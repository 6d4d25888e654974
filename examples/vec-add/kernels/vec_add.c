/* vec_add.c - the smallest kernel: one thread per element, no fixed block,
 * a bounds guard so any block size (and the padding threads of the last
 * block) is safe. */
#include <mox/kernel.h>

MOX_KERNEL
void vec_add(const float *a, const float *b, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = a[i] + b[i];
}
