/* features.c - the "features" golden module: one kernel per construct of
 * the dialect that changes generated code (vector types, tables, dynamic shared memory, no-alias entries), parsed by the
 * real front end (test_golden_front.c). */
#include "feature_records.h"

MOX_KERNEL void vec_scale(const mox_float4 *in, mox_float4 *out, mox_float2 k, uint32_t n) {
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        mox_float4 v = in[i];
        out[i] = mox_make_float4(v.x * k.x, v.y * k.y, v.z * k.x, v.w * k.y);
    }
}

MOX_KERNEL MOX_BLOCK(64, 1, 1) void particles(Particle4 *p, mox_half2 scale, mox_uint4 mask,
                                            MOX_TABLE(mox_f16, gains, 8), MOX_TABLE(Particle4, anchors, 2)) {
    uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().x;
    p[i].pos.x += p[i].vel.x * mox_f16_to_f32(scale.x);
    p[i].id &= mask.x;
    p[i].vel.y = mox_f16_to_f32(gains[i % 8u]) + anchors[i % 2u].pos.w;
}

MOX_KERNEL void reverse(const float *in, float *out) {
    MOX_SHARED_DYNAMIC(float, tile);
    uint32_t t = mox_thread_idx().x;
    tile[t] = in[t];
    mox_barrier();
    out[t] = tile[mox_block_dim().x - 1u - t];
}
