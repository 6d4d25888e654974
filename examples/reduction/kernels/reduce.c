/* reduce.c - block-wide sum: each 256-thread block loads its chunk into a
 * shared tile (zero past n) and halves it with a tree of barriers; thread 0
 * writes the block's sum. The tree order is fixed, so the CPU reference can
 * repeat it exactly. */
#include <mox/kernel.h>

#define REDUCE_BLOCK 256u

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void reduce(const float *input, float *output, uint32_t n)
{
    MOX_SHARED(float, tile, 256);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * REDUCE_BLOCK + t;
    tile[t] = i < n ? input[i] : 0.0f;
    mox_barrier();
    /* Every thread runs every step (the loop bound is uniform), so the
     * barrier is reached by the whole block. */
    for (uint32_t stride = REDUCE_BLOCK / 2; stride > 0; stride /= 2) {
        if (t < stride)
            tile[t] = tile[t] + tile[t + stride];
        mox_barrier();
    }
    if (t == 0)
        output[mox_block_idx().x] = tile[0];
}
