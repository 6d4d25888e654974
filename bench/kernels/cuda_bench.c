/* cuda_bench.c - kernels of the CUDA overhead benchmark (module
 * "cudabench"): the two pipeline stages and a busy kernel for overlap. The
 * raw-CUDA side of bench/cuda_overhead (cuda_raw.c loads them; the
 * sections in cuda_overhead_launch.c and cuda_overhead_throughput.c launch
 * them) runs these same entries from the same fatbin. */
#include <mox/kernel.h>

/* output[i] = input[i] * 4 + 3 */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void scale_256(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = input[i] * 4.0f + 3.0f;
}

/* output[i] = input[i] + 1 */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void finish_256(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = input[i] + 1.0f;
}

/* A dependent chain of `iters` multiply-adds per thread (a fixed amount of
 * time on one multiprocessor), then out[slot] = the result. */
MOX_KERNEL
void busy(float *out, uint32_t slot, uint32_t iters)
{
    float x = (float)mox_thread_idx().x;
    for (uint32_t k = 0; k < iters; k++)
        x = x * 0.999f + 0.5f;
    if (mox_thread_idx().x == 0)
        out[slot] = x;
}
