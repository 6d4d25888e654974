/* fdtd3d.c - port of NVIDIA cuda-samples FDTD3d's FiniteDifferencesKernel
 * (Samples/5_Domain_Specific/FDTD3d/inc/FDTD3dGPUKernel.cuh, unchanged in
 * ../original/) to the mox dialect: a 32x16 block walks its column of
 * xy-planes through z, keeping the points in front and behind in
 * registers and the current plane with its halo in a shared tile; radius 4.
 *
 * The stencil is a MOX_TABLE (the constant bank, as the original's
 * __constant__ array), set by each launch. Differences, each forced by the
 * dialect: the tile is one-dimensional (indexed row * TILE_W + column, the
 * same layout as the original's 2-D array); the buffers come whole, with
 * the original's 128-byte alignment padding as `offset` (the original
 * receives pointers already advanced by it); the register arrays start at
 * zero (the original leaves them undefined for threads outside the volume,
 * which never store them). */
#include <mox/kernel.h>

#include "fdtd3d_port.h"

#define TILE_W (k_blockDimX + 2 * RADIUS)

MOX_KERNEL MOX_BLOCK(k_blockDimX, k_blockDimMaxY, 1)
void FiniteDifferencesKernel(float *output, const float *input, int32_t dimx, int32_t dimy, int32_t dimz,
                             MOX_TABLE(float, stencil, RADIUS + 1), uint32_t offset)
{
    output += offset;
    input += offset;
    bool validr = true;
    bool validw = true;
    const int gtidx = (int)(mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x);
    const int gtidy = (int)(mox_block_idx().y * mox_block_dim().y + mox_thread_idx().y);
    const int ltidx = (int)mox_thread_idx().x;
    const int ltidy = (int)mox_thread_idx().y;
    const int workx = (int)mox_block_dim().x;
    const int worky = (int)mox_block_dim().y;
    MOX_SHARED(float, tile, (k_blockDimMaxY + 2 * RADIUS) * TILE_W);

    const int stride_y = dimx + 2 * RADIUS;
    const int stride_z = stride_y * (dimy + 2 * RADIUS);

    int inputIndex = 0;
    int outputIndex = 0;

    /* Advance inputIndex to start of inner volume */
    inputIndex += RADIUS * stride_y + RADIUS;

    /* Advance inputIndex to target element */
    inputIndex += gtidy * stride_y + gtidx;

    float infront[RADIUS] = {0.0f};
    float behind[RADIUS] = {0.0f};
    float current = 0.0f;

    const int tx = ltidx + RADIUS;
    const int ty = ltidy + RADIUS;

    /* Check in bounds */
    if ((gtidx >= dimx + RADIUS) || (gtidy >= dimy + RADIUS))
        validr = false;

    if ((gtidx >= dimx) || (gtidy >= dimy))
        validw = false;

    /* Preload the "infront" and "behind" data */
    for (int i = RADIUS - 2; i >= 0; i--) {
        if (validr)
            behind[i] = input[inputIndex];

        inputIndex += stride_z;
    }

    if (validr)
        current = input[inputIndex];

    outputIndex = inputIndex;
    inputIndex += stride_z;

    for (int i = 0; i < RADIUS; i++) {
        if (validr)
            infront[i] = input[inputIndex];

        inputIndex += stride_z;
    }

    /* Step through the xy-planes */
#pragma unroll 9
    for (int iz = 0; iz < dimz; iz++) {
        /* Advance the slice (move the thread-front) */
        for (int i = RADIUS - 1; i > 0; i--)
            behind[i] = behind[i - 1];

        behind[0] = current;
        current = infront[0];
#pragma unroll 4
        for (int i = 0; i < RADIUS - 1; i++)
            infront[i] = infront[i + 1];

        if (validr)
            infront[RADIUS - 1] = input[inputIndex];

        inputIndex += stride_z;
        outputIndex += stride_z;
        mox_barrier();

        /* For the work items on the boundary of the problem, the index
         * used to read the halo below may wrap to the previous/next row or
         * xy-plane: acceptable, since their output write is disabled and
         * there is at least one xy-plane before/after the current one. */

        /* Halo above & below */
        if (ltidy < RADIUS) {
            tile[ltidy * TILE_W + tx] = input[outputIndex - RADIUS * stride_y];
            tile[(ltidy + worky + RADIUS) * TILE_W + tx] = input[outputIndex + worky * stride_y];
        }

        /* Halo left & right */
        if (ltidx < RADIUS) {
            tile[ty * TILE_W + ltidx] = input[outputIndex - RADIUS];
            tile[ty * TILE_W + ltidx + workx + RADIUS] = input[outputIndex + workx];
        }

        tile[ty * TILE_W + tx] = current;
        mox_barrier();

        /* Compute the output value */
        float value = stencil[0] * current;
#pragma unroll 4
        for (int i = 1; i <= RADIUS; i++) {
            value += stencil[i] *
                     (infront[i - 1] + behind[i - 1] + tile[(ty - i) * TILE_W + tx] +
                      tile[(ty + i) * TILE_W + tx] + tile[ty * TILE_W + tx - i] + tile[ty * TILE_W + tx + i]);
        }

        /* Store the output value */
        if (validw)
            output[outputIndex] = value;
    }
}
