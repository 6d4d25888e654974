/* lang_vectors.c - vector types as buffer elements, values and record
 * members (module "lang"). Each kernel moves whole vectors, which on CUDA
 * must be single ld/st.global.v2/.v4 instructions (test_ptx.c). */
#include "lang_records.h"

static uint32_t gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

/* out[i] = in[i] * k + add, lane by lane */
MOX_KERNEL void scale4(const mox_float4 *in, mox_float4 *out, mox_float4 k, float add, uint32_t n) {
    uint32_t i = gid();
    if (i < n) {
        mox_float4 v = in[i];
        out[i] = mox_make_float4(v.x * k.x + add, v.y * k.y + add, v.z * k.z + add, v.w * k.w + add);
    }
}

/* out[i] = (in[i].y, in[i].x): swaps the lanes of 8-byte vectors */
MOX_KERNEL void swap2(const mox_float2 *in, mox_float2 *out, uint32_t n) {
    uint32_t i = gid();
    if (i < n) {
        mox_float2 v = in[i];
        out[i] = mox_make_float2(v.y, v.x);
    }
}

/* The integer vectors: out = a + b lane by lane, wrapping. */
MOX_KERNEL void add_u4(const mox_uint4 *a, const mox_uint4 *b, mox_uint4 *out, uint32_t n) {
    uint32_t i = gid();
    if (i < n) {
        mox_uint4 x = a[i], y = b[i];
        out[i] = mox_make_uint4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

/* The 3-lane and mixed types: packs each input into an int4. */
MOX_KERNEL void mix(const mox_int3 *i3, const mox_uint2 *u2, const mox_half2 *h2, mox_int2 bias, mox_int4 *out,
                    uint32_t n) {
    uint32_t i = gid();
    if (i < n)
        out[i] = mox_make_int4(i3[i].x + i3[i].y + i3[i].z + bias.x, (int32_t)(u2[i].x ^ u2[i].y) + bias.y,
                               (int32_t)mox_f16_to_bits(h2[i].x), (int32_t)mox_f16_to_bits(h2[i].y));
}

/* Bodies move by their velocity; Tagged records are rewritten from the value. */
MOX_KERNEL void integrate(Body *bodies, float dt, Tagged tag, Tagged *tags, uint32_t n) {
    uint32_t i = gid();
    if (i < n) {
        Body b = bodies[i];
        b.pos.x += b.vel.x * dt;
        b.pos.y += b.vel.y * dt;
        b.pos.z += b.vel.z * dt;
        b.pos.w = b.mass;
        bodies[i] = b;
        Tagged t = tag;
        t.tag = (uint8_t)(tag.tag + i);
        t.w[2] = tag.w[0] * (float)i;
        tags[i] = t;
    }
}
