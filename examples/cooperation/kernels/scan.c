/* scan.c - the two passes of a hierarchical exclusive prefix sum (u32,
 * wrapping). block_scan scans each 256-element block (warp scans, then the
 * warps' totals through shared memory) and writes the block's total;
 * add_offsets adds each block's offset, taken from the scan of the totals
 * one level up. */
#include <mox/kernel.h>

#define SCAN_BLOCK 256u
#define SCAN_WARPS (SCAN_BLOCK / MOX_WARP_SIZE)

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void block_scan(const uint32_t *input, uint32_t *prefix, uint32_t *totals, uint32_t n)
{
    MOX_SHARED(uint32_t, warp_totals, 8);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * SCAN_BLOCK + t;
    uint32_t v = i < n ? input[i] : 0u;
    uint32_t within_warp = mox_warp_exclusive_sum_u32(v);
    uint32_t warp_total = mox_warp_sum_u32(v);
    uint32_t warp = mox_warp_id();
    if (mox_lane_id() == 0u)
        warp_totals[warp] = warp_total;
    mox_barrier();
    uint32_t offset = 0u;
    for (uint32_t w = 0; w < warp; w++)
        offset += warp_totals[w];
    uint32_t exclusive = offset + within_warp;
    if (i < n)
        prefix[i] = exclusive;
    if (t == SCAN_BLOCK - 1u)
        totals[mox_block_idx().x] = exclusive + v;
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void add_offsets(uint32_t *data, const uint32_t *offsets, uint32_t n)
{
    uint32_t i = mox_block_idx().x * SCAN_BLOCK + mox_thread_idx().x;
    if (i < n)
        data[i] += offsets[mox_block_idx().x];
}
