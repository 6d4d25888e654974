/* histogram.c - atomic buffers and shared atomics; the shared bins are
 * initialised by the first 16 threads, then a barrier. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void histogram(const uint32_t *values, mox_atomic_u32 *bins, mox_atomic_i32 *balance, uint32_t n)
{
    MOX_SHARED(mox_atomic_u32, local, 16);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * mox_block_dim().x + t;
    if (t < 16u)
        mox_atomic_store_u32(&local[t], 0u);
    mox_barrier();
    if (i < n) {
        mox_atomic_add_u32(&local[values[i] & 15u], 1u);
        mox_atomic_sub_i32(balance, 1);
    }
    mox_barrier();
    if (t < 16u) {
        uint32_t count = mox_atomic_load_u32(&local[t]);
        if (count != 0u)
            mox_atomic_add_u32(&bins[t], count);
    }
}
