/* lang_dynshared.c - dynamic shared memory sized at launch
 * (MOX_SHARED_DYNAMIC), module "lang" (test_dynshared.c). */
#include <mox/kernel.h>

/* Reverses each block's slice through shared memory of blockDim floats. */
MOX_KERNEL void reverse_blocks(const float *in, float *out, uint32_t n) {
    MOX_SHARED_DYNAMIC(float, tile);
    uint32_t t = mox_thread_idx().x, b = mox_block_dim().x, i = mox_block_idx().x * b + t;
    tile[t] = i < n ? in[i] : 0.0f;
    mox_barrier();
    uint32_t j = mox_block_idx().x * b + (b - 1u - t);
    if (j < n)
        out[j] = tile[t];
}

/* Two views of the same memory (they alias, as CUDA's extern __shared__
 * arrays do): floats written one by one, read back four at a time; then
 * `per_thread` floats per thread summed, so the launch's size matters. */
MOX_KERNEL MOX_BLOCK(64, 1, 1) void views_and_size(float *out, uint32_t per_thread) {
    MOX_SHARED_DYNAMIC(float, f);
    MOX_SHARED_DYNAMIC(mox_float4, f4);
    uint32_t t = mox_thread_idx().x;
    for (uint32_t k = 0; k < per_thread; k++)
        f[t * per_thread + k] = (float)(t + k);
    mox_barrier();
    float acc = 0.0f;
    for (uint32_t q = 0; q < per_thread / 4u; q++) {
        mox_float4 v = f4[(t * per_thread) / 4u + q];
        acc += v.x + v.y + v.z + v.w;
    }
    out[mox_block_idx().x * 64u + t] = acc;
}
