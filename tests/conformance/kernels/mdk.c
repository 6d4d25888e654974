/* mdk.c - a kernel of the several-devices conformance tests (module "mdk")
 * that loses a CUDA device on purpose: a write through a wild address is a
 * sticky fault (CUDA_ERROR_ILLEGAL_ADDRESS). Launched only on CUDA: on the
 * CPU it would crash the process. */
#include <mox/kernel.h>

MOX_KERNEL void wild_write(float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    float *wild = (float *)(uintptr_t)0x10u;
    if (i < n)
        wild[i] = out[i];
}
