/* src/cuda/cuda_copy_kernel.cu - the CUDA backend's own kernels, which
 * honour a mox_gate like the generated entries (mox/kernel_cuda_gate.h): a
 * copy, for COPY commands whose source may still fail
 * (docs/multi-device.md), and a fill (mox_buffer_fill). The copy runs on
 * the destination's device and reads the source through unified
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

/* The pattern of a fill: up to MOX__FILL_MAX_PATTERN (128) bytes, passed by
 * value. */
typedef struct mox__fill_words {
    unsigned int w[32];
} mox__fill_words;

/* Sets dst[0, bytes) to the first `size` bytes of `pattern` repeated
 * (bytes is a multiple of size), honouring a mox_gate like the copy: the
 * backend's FILL commands that a failure may gate, and those whose
 * pattern no cuMemsetD8/16/32 writes (docs/cuda-backend.md). */
extern "C" __global__ void mox__fill_gated(mox_gate gate, unsigned char *dst,
                                           unsigned long long bytes, mox__fill_words pattern,
                                           unsigned int size)
{
    if (mox__gate_enter(&gate))
        return;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long addr = (unsigned long long)(uintptr_t)dst;
    if (size % 4u == 0 && (addr & 3u) == 0) {
        unsigned int period = size / 4u;
        if (16u % size == 0 && ((addr | bytes) & 15u) == 0) {
            uint4 v = make_uint4(pattern.w[0], pattern.w[1u % period], pattern.w[2u % period],
                                 pattern.w[3u % period]);
            uint4 *d = (uint4 *)dst;
            for (unsigned long long k = i; k < bytes / 16u; k += stride)
                d[k] = v;
        } else {
            unsigned int *d = (unsigned int *)dst;
            for (unsigned long long k = i; k < bytes / 4u; k += stride)
                d[k] = pattern.w[k % period];
        }
    } else {
        const unsigned char *p = (const unsigned char *)pattern.w;
        for (unsigned long long k = i; k < bytes; k += stride)
            dst[k] = p[k % size];
    }
}
