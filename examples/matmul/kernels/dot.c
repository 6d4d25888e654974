/* dot.c - dot product partials: each thread multiplies one pair, each warp
 * sums its 32 products with mox_warp_sum_f32 (a fixed butterfly order, the
 * same on CPU and CUDA), and lane 0 writes the warp's partial. The host
 * adds the partials in index order. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void dot(const float *a, const float *b, float *partials, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    float product = i < n ? a[i] * b[i] : 0.0f;
    float sum = mox_warp_sum_f32(product);
    if (mox_lane_id() == 0)
        partials[mox_block_idx().x * mox_warps_per_block() + mox_warp_id()] = sum;
}
