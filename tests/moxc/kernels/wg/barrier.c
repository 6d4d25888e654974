/* barrier.c - golden kernel: a shared-memory tree reduction with a barrier
 * after the load and one per level (a barrier inside a uniform loop whose
 * header is block-level). */
#include <mox/kernel.h>

#define BLOCK 128u

MOX_KERNEL MOX_BLOCK(128, 1, 1)
void tree_sum(const float *in, float *out, uint32_t n)
{
    MOX_SHARED(float, tile, 128);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * BLOCK + t;
    tile[t] = i < n ? in[i] : 0.0f;
    mox_barrier();
    for (uint32_t stride = BLOCK / 2u; stride > 0u; stride /= 2u) {
        if (t < stride)
            tile[t] = tile[t] + tile[t + stride];
        mox_barrier();
    }
    if (t == 0u)
        out[mox_block_idx().x] = tile[0];
}
