/* sobol.c - port of NVIDIA cuda-samples SobolQRNG's generator kernel
 * (Samples/5_Domain_Specific/SobolQRNG/sobol_gpu.cu, unchanged in
 * ../original/; based on code by Mike Giles, and by Stephen Joe and
 * Frances Kuo, see the original's header) to the mox dialect: one block
 * row per dimension, the 32 direction numbers in shared memory, the gray
 * code start and the strided recurrence, 64-thread blocks. (__ffs is
 * mox_ffs_u32.) */
#include <mox/kernel.h>

#include "sobol.h" /* the original's n_directions */

#define k_2powneg32 2.3283064E-10F

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void sobolGPU_kernel(uint32_t n_vectors, uint32_t n_dimensions, const uint32_t *d_directions, float *d_output)
{
    (void)n_dimensions;
    MOX_SHARED(uint32_t, v, n_directions);

    /* Offset into the correct dimension as specified by the block y
     * coordinate. */
    d_directions = d_directions + n_directions * mox_block_idx().y;
    d_output = d_output + n_vectors * mox_block_idx().y;

    /* Copy the direction numbers for this dimension into shared memory:
     * only the first 32 (n_directions) threads participate. */
    if (mox_thread_idx().x < n_directions)
        v[mox_thread_idx().x] = d_directions[mox_thread_idx().x];

    mox_barrier();

    /* Initial index (the first vector this thread computes) and stride. */
    int i0 = (int)(mox_thread_idx().x + mox_block_idx().x * mox_block_dim().x);
    int stride = (int)(mox_grid_dim().x * mox_block_dim().x);

    /* The gray code of the index. */
    unsigned int g = (unsigned int)(i0 ^ (i0 >> 1));

    /* The first point x[i0], computed without x[i0-1] (Bratley and Fox,
     * equation (*)): X ^= g_k * v[k] for every bit g_k of g. */
    unsigned int X = 0;
    unsigned int mask;

    for (unsigned int k = 0; k < mox_ffs_u32((uint32_t)stride) - 1; k++) {
        mask = -(g & 1);
        X ^= mask & v[k];
        g = g >> 1;
    }

    if ((unsigned int)i0 < n_vectors)
        d_output[i0] = (float)X * k_2powneg32;

    /* The rest of the points, x[i] from x[i-stride] (equation (**)): the
     * direction number of log2(stride) and the one of the rightmost zero
     * bit of i above the stride's bits. */
    unsigned int v_log2stridem1 = v[mox_ffs_u32((uint32_t)stride) - 2];
    unsigned int v_stridemask = (unsigned int)stride - 1;

    for (unsigned int i = (unsigned int)(i0 + stride); i < n_vectors; i += (unsigned int)stride) {
        X ^= v_log2stridem1 ^ v[mox_ffs_u32(~((i - (unsigned int)stride) | v_stridemask)) - 1];
        d_output[i] = (float)X * k_2powneg32;
    }
}
