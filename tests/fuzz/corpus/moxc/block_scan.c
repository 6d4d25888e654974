/* block_scan.c - block-wide exclusive scan from warp scans: warp
 * operations at the top level, one under a warp-uniform condition, a helper
 * with a barrier called uniformly, and the totals through shared memory. */
#include <mox/kernel.h>

static uint32_t block_total(uint32_t v, uint32_t *scratch)
{
    uint32_t warp_sum = mox_warp_sum_u32(v);
    if (mox_lane_id() == 0u)
        scratch[mox_warp_id()] = warp_sum;
    mox_barrier();
    uint32_t total = 0u;
    for (uint32_t w = 0; w < mox_warps_per_block(); w++)
        total += scratch[w];
    mox_barrier();
    return total;
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void block_scan(const uint32_t *input, uint32_t *prefix, uint32_t *totals, uint32_t n)
{
    MOX_SHARED(uint32_t, warp_totals, 8);
    MOX_SHARED(uint32_t, scratch, 8);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * 256u + t;
    uint32_t v = i < n ? input[i] : 0u;
    uint32_t within = mox_warp_exclusive_sum_u32(v);
    uint32_t warp = mox_warp_id();
    if (mox_lane_id() == mox_warp_size() - 1u)
        warp_totals[warp] = within + v;
    mox_barrier();
    uint32_t offset = 0u;
    if (warp != 0u) {
        /* every lane of these warps takes this branch together */
        uint32_t mine = mox_lane_id() < warp ? warp_totals[mox_lane_id()] : 0u;
        offset = mox_warp_sum_u32(mine);
    }
    uint32_t total = block_total(v, scratch);
    if (i < n)
        prefix[i] = offset + within;
    if (t == 0u)
        totals[mox_block_idx().x] = total;
}
