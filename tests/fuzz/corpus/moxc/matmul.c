/* matmul.c - tiled matrix product: shared tiles, barriers in a k-loop
 * bounded by a kernel parameter, guarded loads. */
#include <mox/kernel.h>

#define TILE 16

MOX_KERNEL MOX_BLOCK(TILE, TILE, 1)
void matmul(const float *a, const float *b, float *c, uint32_t rows, uint32_t cols, uint32_t inner)
{
    MOX_SHARED(float, tile_a, TILE * TILE);
    MOX_SHARED(float, tile_b, TILE * TILE);
    uint32_t tx = mox_thread_idx().x, ty = mox_thread_idx().y;
    uint32_t row = mox_block_idx().y * TILE + ty;
    uint32_t col = mox_block_idx().x * TILE + tx;
    float acc = 0.0f;
    uint32_t tiles = (inner + TILE - 1) / TILE;
    for (uint32_t t = 0; t < tiles; t++) {
        uint32_t ka = t * TILE + tx, kb = t * TILE + ty;
        tile_a[ty * TILE + tx] = row < rows && ka < inner ? a[row * inner + ka] : 0.0f;
        tile_b[ty * TILE + tx] = kb < inner && col < cols ? b[kb * cols + col] : 0.0f;
        mox_barrier();
        for (uint32_t k = 0; k < TILE; k++)
            acc += tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        mox_barrier();
    }
    if (row < rows && col < cols)
        c[row * cols + col] = acc;
}
