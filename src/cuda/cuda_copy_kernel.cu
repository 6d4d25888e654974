/* src/cuda/cuda_copy_kernel.cu - the CUDA backend's own kernel: a copy that
 * honours a mox_gate like the generated entries (mox/kernel_cuda_gate.h), for
 * COPY commands whose source may still fail (docs/multi-device.md). It
 * runs on the destination's device and reads the source through unified
 * addressing (this device's memory, or a peer's with peer access).
 * Compiled to PTX into cuda_copy_ptx.c, which is generated (see there):
 * after changing this file, regenerate it. */
#include <mox/kernel.h>

extern "C" __global__ void mox__copy_gated(mox_gate gate, const unsigned char *src,
                                           unsigned char *dst, unsigned long long bytes)
{
    if (mox__gate_enter(&gate))
        return;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long align =
        (unsigned long long)(uintptr_t)src | (unsigned long long)(uintptr_t)dst | bytes;
    if ((align & 15u) == 0) {
        const uint4 *s = (const uint4 *)src;
        uint4 *d = (uint4 *)dst;
        for (unsigned long long k = i; k < bytes / 16u; k += stride)
            d[k] = s[k];
    } else if ((align & 3u) == 0) {
        const uint32_t *s = (const uint32_t *)src;
        uint32_t *d = (uint32_t *)dst;
        for (unsigned long long k = i; k < bytes / 4u; k += stride)
            d[k] = s[k];
    } else {
        for (unsigned long long k = i; k < bytes; k += stride)
            dst[k] = src[k];
    }
}
