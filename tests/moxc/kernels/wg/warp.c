/* warp.c - golden kernel: warp operations as steps over the lane arrays
 * (an exclusive scan and a sum per warp, a ballot under a warp-uniform
 * branch), then a barrier and the block's combination. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void warp_scan(const uint32_t *in, uint32_t *out, uint32_t *flags)
{
    MOX_SHARED(uint32_t, totals, 2);
    uint32_t gid = mox_block_idx().x * 64u + mox_thread_idx().x;
    uint32_t v = in[gid];
    uint32_t before = mox_warp_exclusive_sum_u32(v);
    uint32_t total = mox_warp_sum_u32(v);
    if (mox_warp_id() == 0u)
        flags[gid] = (uint32_t)mox_warp_ballot(v > total / 32u);
    if (mox_lane_id() == 0u)
        totals[mox_warp_id()] = total;
    mox_barrier();
    out[gid] = before + (mox_warp_id() ? totals[0] : 0u);
}
