/* matmul_f16.c - the tiled product with binary16 inputs: elements are
 * converted to f32 exactly (mox_f16_to_f32) as they are staged into the
 * shared tiles, and accumulated in f32 in k order, like matmul. */
#include <mox/kernel.h>

#define TILE16 16u

MOX_KERNEL MOX_BLOCK(16, 16, 1)
void matmul_f16(const mox_f16 *a, const mox_f16 *b, float *c, uint32_t rows, uint32_t cols,
                uint32_t inner)
{
    MOX_SHARED(float, tile_a, 256);
    MOX_SHARED(float, tile_b, 256);
    uint32_t tx = mox_thread_idx().x, ty = mox_thread_idx().y;
    uint32_t row = mox_block_idx().y * TILE16 + ty;
    uint32_t col = mox_block_idx().x * TILE16 + tx;
    uint32_t steps = (inner + TILE16 - 1) / TILE16;
    float acc = 0.0f;
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t ka = s * TILE16 + tx;
        uint32_t kb = s * TILE16 + ty;
        tile_a[ty * TILE16 + tx] =
            (row < rows && ka < inner) ? mox_f16_to_f32(a[row * inner + ka]) : 0.0f;
        tile_b[ty * TILE16 + tx] =
            (kb < inner && col < cols) ? mox_f16_to_f32(b[kb * cols + col]) : 0.0f;
        mox_barrier();
        for (uint32_t k = 0; k < TILE16; k++)
            acc = acc + tile_a[ty * TILE16 + k] * tile_b[k * TILE16 + tx];
        mox_barrier();
    }
    if (row < rows && col < cols)
        c[row * cols + col] = acc;
}
