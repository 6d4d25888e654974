/* lang_views.c - kernels that read and write whole vectors or bytes,
 * launched on buffers of the scalar type (module "lang", test_views.c). */
#include <mox/kernel.h>

static uint32_t view_gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

/* out[i] = the sum of the four lanes of in[i] (a u32 buffer viewed as uint4) */
MOX_KERNEL void sum4(const mox_uint4 *in, uint32_t *out, uint32_t n4) {
    uint32_t i = view_gid();
    if (i < n4) {
        mox_uint4 v = in[i];
        out[i] = v.x + v.y + v.z + v.w;
    }
}

/* data[i] = data[i] * k, four floats at a time (an f32 buffer as float4) */
MOX_KERNEL void scale_f4(mox_float4 *data, float k, uint32_t n4) {
    uint32_t i = view_gid();
    if (i < n4) {
        mox_float4 v = data[i];
        data[i] = mox_make_float4(v.x * k, v.y * k, v.z * k, v.w * k);
    }
}

/* Flips every byte (any buffer viewed as bytes). */
MOX_KERNEL void flip_bytes(uint8_t *bytes, uint32_t n) {
    uint32_t i = view_gid();
    if (i < n)
        bytes[i] = (uint8_t)(bytes[i] ^ 0xffu);
}

/* data[i] += 1 on the scalar type itself */
MOX_KERNEL void inc_u32(uint32_t *data, uint32_t n) {
    uint32_t i = view_gid();
    if (i < n)
        data[i] += 1u;
}

/* out[i] = in[i] + 1, then out[i] += in[i]: when in and out are the same
 * buffer the second read must see the first store (2 in + 2); when they
 * differ, 2 in + 1. The CUDA backend runs the no-alias entry (__restrict__,
 * ld.global.nc) only in the second case (test_aliasing.c). */
MOX_KERNEL void step_twice(const float *in, float *out, uint32_t n) {
    uint32_t i = view_gid();
    if (i < n) {
        out[i] = in[i] + 1.0f;
        out[i] = out[i] + in[i];
    }
}
