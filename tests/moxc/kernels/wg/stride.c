/* stride.c - grid-stride loops for the golden work-group functions: the
 * for form and the while form walked side by side, round by round, and a
 * loop whose body breaks out of it, which stays each thread's own. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void saxpy_stride(const float *x, float *y, float a, uint32_t n)
{
    for (uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; i < n;
         i += mox_block_dim().x * mox_grid_dim().x)
        y[i] = a * x[i] + y[i];
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void count_stride(const uint32_t *keys, mox_atomic_u32 *counts, int32_t n)
{
    MOX_SHARED(mox_atomic_u32, bins, 64);
    uint32_t t = mox_thread_idx().x;
    mox_atomic_store_u32(&bins[t], 0u);
    mox_barrier();
    int32_t i = (int32_t)(mox_block_idx().x * 64u + t);
    int32_t stride = (int32_t)(64u * mox_grid_dim().x);
    while (i < n) {
        mox_atomic_add_u32(&bins[keys[i] % 64u], 1u);
        i += stride;
    }
    mox_barrier();
    mox_atomic_add_u32(&counts[t], mox_atomic_load_u32(&bins[t]));
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void copy_until_negative(const float *x, float *y, uint32_t n)
{
    for (uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().x; i < n; i += 64u * mox_grid_dim().x) {
        if (x[i] < 0.0f)
            break;
        y[i] = x[i];
    }
}
