/* loop.c - golden kernel: a tiled product whose uniform loop holds two
 * barriers; its trip count is block-level, the accumulator lives across
 * the barriers (per-thread storage), the indices are recomputed. */
#include <mox/kernel.h>

#define T 8u

MOX_KERNEL MOX_BLOCK(8, 8, 1)
void tiled(const float *a, const float *b, float *c, uint32_t size)
{
    MOX_SHARED(float, ta, 64);
    MOX_SHARED(float, tb, 64);
    uint32_t tx = mox_thread_idx().x, ty = mox_thread_idx().y;
    uint32_t row = mox_block_idx().y * T + ty, col = mox_block_idx().x * T + tx;
    uint32_t steps = size / T;
    float acc = 0.0f;
    for (uint32_t s = 0; s < steps; s++) {
        ta[ty * T + tx] = a[row * size + s * T + tx];
        tb[ty * T + tx] = b[(s * T + ty) * size + col];
        mox_barrier();
        for (uint32_t k = 0; k < T; k++)
            acc = acc + ta[ty * T + k] * tb[k * T + tx];
        mox_barrier();
    }
    c[row * size + col] = acc;
}
