/* histogram.c - 16-bin histogram of v & 15. Each block counts into shared
 * atomic bins (cheap, block-local contention), then flushes its non-zero
 * bins into the device-wide atomic bins. */
#include <mox/kernel.h>

#define HIST_BINS 16u

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void histogram(const uint32_t *values, mox_atomic_u32 *bins, uint32_t n)
{
    MOX_SHARED(mox_atomic_u32, local, 16);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * mox_block_dim().x + t;
    /* Shared memory is not zeroed between blocks. */
    if (t < HIST_BINS)
        mox_atomic_store_u32(&local[t], 0u);
    mox_barrier();
    if (i < n)
        mox_atomic_add_u32(&local[values[i] & (HIST_BINS - 1u)], 1u);
    mox_barrier();
    if (t < HIST_BINS) {
        uint32_t count = mox_atomic_load_u32(&local[t]);
        if (count != 0u)
            mox_atomic_add_u32(&bins[t], count);
    }
}
