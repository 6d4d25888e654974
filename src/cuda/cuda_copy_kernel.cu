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
 * pattern no cuMemsetD8/16/32 writes (docs/cuda-backend.md).
 *
 * The block first copies the pattern into shared memory as `words` words
 * followed by its first three words again (`ext`), each word read from the
 * parameter at a constant index (indexing the parameter by a computed one
 * made every thread copy all 128 bytes of it to local memory first); a
 * pattern of 1 or 2 bytes becomes one word of it repeated. When that is a
 * whole number of words and the destination is 16-byte aligned, the fill
 * is 16-byte stores: vector k starts at word (4k) % words, whose four
 * words ext holds without a wrap, a thread advancing its phase by
 * (4 * stride) % words instead of dividing per store; the last bytes % 16
 * bytes follow one per thread (likewise the last bytes % 4 of word
 * stores). Word stores with a 64-bit remainder each,
 * as before, reached 0.70 - 0.76 of a memset's bandwidth on 12-byte
 * patterns. Other fills store words or bytes read from ext. Every thread
 * of the block reaches the barrier: the gate's early return is uniform. */
extern "C" __global__ void mox__fill_gated(mox_gate gate, unsigned char *dst,
                                           unsigned long long bytes, mox__fill_words pattern,
                                           unsigned int size)
{
    if (mox__gate_enter(&gate))
        return;
    __shared__ unsigned int ext[32u + 3u];
    bool short_unit = size == 1u || size == 2u;
    unsigned int unit = short_unit ? 4u : size; /* bytes after which ext repeats */
    unsigned int words = (unit + 3u) / 4u;
    for (unsigned int j = threadIdx.x; j < words + 3u; j += blockDim.x) {
        unsigned int from = j % words, v = 0;
#pragma unroll
        for (unsigned int c = 0; c < 32u; c++)
            v = c == from ? pattern.w[c] : v;
        if (short_unit)
            v = size == 1u ? (v & 0xffu) * 0x01010101u : (v & 0xffffu) * 0x00010001u;
        ext[j] = v;
    }
    __syncthreads();
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long addr = (unsigned long long)(uintptr_t)dst;
    const unsigned char *ext_bytes = (const unsigned char *)ext;
    if (unit % 4u == 0 && (addr & 15u) == 0) {
        unsigned long long vectors = bytes / 16u;
        unsigned int phase = (unsigned int)((4ull * i) % words);
        unsigned int step = (unsigned int)((4ull * stride) % words);
        uint4 *d = (uint4 *)dst;
        for (unsigned long long k = i; k < vectors; k += stride) {
            d[k] = make_uint4(ext[phase], ext[phase + 1u], ext[phase + 2u], ext[phase + 3u]);
            phase += step;
            if (phase >= words)
                phase -= words;
        }
        if (i < bytes % 16u) {
            unsigned long long b = vectors * 16u + i;
            dst[b] = ext_bytes[(unsigned int)(b % unit)];
        }
    } else if (unit % 4u == 0 && (addr & 3u) == 0) {
        unsigned int *d = (unsigned int *)dst;
        for (unsigned long long k = i; k < bytes / 4u; k += stride)
            d[k] = ext[(unsigned int)(k % words)];
        if (i < bytes % 4u) {
            unsigned long long b = bytes / 4u * 4u + i;
            dst[b] = ext_bytes[(unsigned int)(b % unit)];
        }
    } else {
        for (unsigned long long k = i; k < bytes; k += stride)
            dst[k] = ext_bytes[(unsigned int)(k % size)];
    }
}
