/* matmul.c - tiled f32 matrix product c = a * b (row-major; a is
 * rows x inner, b is inner x cols). Each 16x16 block stages a 16x16 tile of
 * a and of b in shared memory per k-step (zero outside the matrices), with a
 * barrier after loading and one before the tiles are overwritten. Each
 * thread accumulates its dot product in k order, so a plain CPU loop over k
 * gives the same bits. */
#include <mox/kernel.h>

#define TILE 16u

MOX_KERNEL MOX_BLOCK(16, 16, 1)
void matmul(const float *a, const float *b, float *c, uint32_t rows, uint32_t cols,
            uint32_t inner)
{
    MOX_SHARED(float, tile_a, 256);
    MOX_SHARED(float, tile_b, 256);
    uint32_t tx = mox_thread_idx().x, ty = mox_thread_idx().y;
    uint32_t row = mox_block_idx().y * TILE + ty;
    uint32_t col = mox_block_idx().x * TILE + tx;
    uint32_t steps = (inner + TILE - 1) / TILE;
    float acc = 0.0f;
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t ka = s * TILE + tx; /* column of a this thread loads */
        uint32_t kb = s * TILE + ty; /* row of b this thread loads */
        tile_a[ty * TILE + tx] = (row < rows && ka < inner) ? a[row * inner + ka] : 0.0f;
        tile_b[ty * TILE + tx] = (kb < inner && col < cols) ? b[kb * cols + col] : 0.0f;
        mox_barrier();
        /* Zero padding past `inner` only ever adds +0 to acc (acc starts at
         * +0 and a sum of finite values never becomes -0), which leaves it
         * unchanged: the result equals the unpadded k loop. */
        for (uint32_t k = 0; k < TILE; k++)
            acc = acc + tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        mox_barrier();
    }
    if (row < rows && col < cols)
        c[row * cols + col] = acc;
}
