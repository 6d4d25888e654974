/* reduce.c - tree reduction through shared memory: the barrier sits in a
 * loop whose trip count is the same for every thread, after an `if` that
 * depends on the thread index. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void reduce(const float *input, float *partials, uint32_t n)
{
    MOX_SHARED(float, tile, 256);
    uint32_t tid = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * 256u + tid;
    tile[tid] = i < n ? input[i] : 0.0f;
    mox_barrier();
    for (uint32_t s = 128; s > 0; s >>= 1) {
        if (tid < s)
            tile[tid] += tile[tid + s];
        mox_barrier();
    }
    if (tid == 0)
        partials[mox_block_idx().x] = tile[0];
}
