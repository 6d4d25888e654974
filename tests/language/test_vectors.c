/* test_vectors.c - vector types through the whole stack: buffers of
 * mox_type_f32x4 & co, vector values, records holding vectors and an
 * over-aligned member, each computed on the device and checked bit for bit
 * against the same arithmetic on the host. Runs on both backends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

#define N 300u

static void test_scale4(void **state)
{
    mox_device *dev = *state;
    mox_float4 in[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        in[i] = mox_make_float4((float)i, -0.5f * (float)i, 1.0f / (float)(i + 1), 3.25f);
    mox_buffer *bin = lang_buffer(dev, &mox_type_f32x4, N, in), *bout = lang_buffer(dev, &mox_type_f32x4, N, NULL);
    mox_float4 k = mox_make_float4(2.0f, 3.0f, -1.0f, 0.125f);
    assert_int_equal(lang_run(lang_scale4(dev, lang_cfg(N), bin, bout, k, 0.75f, N)), MOX_OK);
    lang_read(bout, out);
    for (uint32_t i = 0; i < N; i++) {
        volatile float x = in[i].x * k.x, y = in[i].y * k.y, z = in[i].z * k.z, w = in[i].w * k.w;
        mox_float4 want = mox_make_float4(x + 0.75f, y + 0.75f, z + 0.75f, w + 0.75f);
        assert_memory_equal(&out[i], &want, sizeof want);
    }
    mox_buffer_release(bin);
    mox_buffer_release(bout);
}

static void test_swap_and_add(void **state)
{
    mox_device *dev = *state;
    mox_float2 f[N], g[N];
    mox_uint4 a[N], b[N], c[N];
    for (uint32_t i = 0; i < N; i++) {
        f[i] = mox_make_float2((float)i, (float)(2 * i + 1));
        a[i] = mox_make_uint4(i, 0xffffffffu, i * 7u, 1u << (i % 32u));
        b[i] = mox_make_uint4(1u, i, 0x80000000u, i);
    }
    mox_buffer *bf = lang_buffer(dev, &mox_type_f32x2, N, f), *bg = lang_buffer(dev, &mox_type_f32x2, N, NULL);
    mox_buffer *ba = lang_buffer(dev, &mox_type_u32x4, N, a), *bb = lang_buffer(dev, &mox_type_u32x4, N, b);
    mox_buffer *bc = lang_buffer(dev, &mox_type_u32x4, N, NULL);
    assert_int_equal(lang_run(lang_swap2(dev, lang_cfg(N), bf, bg, N)), MOX_OK);
    assert_int_equal(lang_run(lang_add_u4(dev, lang_cfg(N), ba, bb, bc, N)), MOX_OK);
    lang_read(bg, g);
    lang_read(bc, c);
    for (uint32_t i = 0; i < N; i++) {
        assert_true(g[i].x == f[i].y && g[i].y == f[i].x);
        assert_int_equal(c[i].x, a[i].x + b[i].x);
        assert_int_equal(c[i].y, a[i].y + b[i].y);
        assert_int_equal(c[i].z, a[i].z + b[i].z);
        assert_int_equal(c[i].w, a[i].w + b[i].w);
    }
    mox_buffer_release(bf);
    mox_buffer_release(bg);
    mox_buffer_release(ba);
    mox_buffer_release(bb);
    mox_buffer_release(bc);
}

static void test_three_lanes_and_halves(void **state)
{
    mox_device *dev = *state;
    mox_int3 i3[N];
    mox_uint2 u2[N];
    mox_half2 h2[N];
    mox_int4 out[N];
    for (uint32_t i = 0; i < N; i++) {
        i3[i] = mox_make_int3((int32_t)i, -2 * (int32_t)i, 5);
        u2[i] = mox_make_uint2(i * 0x9e3779b9u, i);
        mox_f16 lo = {(uint16_t)(0x3c00u + i)}, hi = {(uint16_t)(0xfc00u - i)};
        h2[i] = mox_make_half2(lo, hi);
    }
    mox_buffer *b3 = lang_buffer(dev, &mox_type_i32x3, N, i3), *b2 = lang_buffer(dev, &mox_type_u32x2, N, u2);
    mox_buffer *bh = lang_buffer(dev, &mox_type_f16x2, N, h2), *bo = lang_buffer(dev, &mox_type_i32x4, N, NULL);
    assert_int_equal(lang_run(lang_mix(dev, lang_cfg(N), b3, b2, bh, mox_make_int2(-7, 11), bo, N)), MOX_OK);
    lang_read(bo, out);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(out[i].x, i3[i].x + i3[i].y + i3[i].z - 7);
        assert_int_equal(out[i].y, (int32_t)(u2[i].x ^ u2[i].y) + 11);
        assert_int_equal(out[i].z, h2[i].x.bits);
        assert_int_equal(out[i].w, h2[i].y.bits);
    }
    mox_buffer_release(b3);
    mox_buffer_release(b2);
    mox_buffer_release(bh);
    mox_buffer_release(bo);
}

static void test_records(void **state)
{
    mox_device *dev = *state;
    Body bodies[N], back[N];
    Tagged tags[N];
    memset(bodies, 0, sizeof bodies);
    for (uint32_t i = 0; i < N; i++) {
        bodies[i].pos = mox_make_float4((float)i, 1.0f, 2.0f, 0.0f);
        bodies[i].vel = mox_make_float3(0.5f, -(float)i, 4.0f);
        bodies[i].mass = 10.0f + (float)i;
    }
    Tagged tag;
    memset(&tag, 0, sizeof tag);
    tag.tag = 40;
    tag.w[0] = 1.5f;
    tag.w[1] = -2.0f;
    tag.h = mox_make_half2(mox_f16_from_bits(0x1234), mox_f16_from_bits(0xabcd));
    mox_buffer *bb = lang_buffer(dev, &lang_type_Body, N, bodies), *bt = lang_buffer(dev, &lang_type_Tagged, N, NULL);
    assert_int_equal(lang_run(lang_integrate(dev, lang_cfg(N), bb, 0.25f, tag, bt, N)), MOX_OK);
    lang_read(bb, back);
    lang_read(bt, tags);
    for (uint32_t i = 0; i < N; i++) {
        Body want = bodies[i];
        volatile float dx = want.vel.x * 0.25f, dy = want.vel.y * 0.25f, dz = want.vel.z * 0.25f;
        want.pos.x += dx;
        want.pos.y += dy;
        want.pos.z += dz;
        want.pos.w = want.mass;
        assert_true(back[i].pos.x == want.pos.x && back[i].pos.y == want.pos.y && back[i].pos.z == want.pos.z &&
                    back[i].pos.w == want.pos.w && back[i].vel.y == want.vel.y && back[i].mass == want.mass);
        assert_int_equal(tags[i].tag, (uint8_t)(40u + i));
        assert_true(tags[i].w[0] == 1.5f && tags[i].w[1] == -2.0f && tags[i].w[2] == 1.5f * (float)i);
        assert_int_equal(tags[i].h.x.bits, 0x1234);
        assert_int_equal(tags[i].h.y.bits, 0xabcd);
    }
    mox_buffer_release(bb);
    mox_buffer_release(bt);
}

/* A buffer of another vector type is refused with both signatures named. */
static void test_type_checked(void **state)
{
    mox_device *dev = *state;
    mox_buffer *f4 = lang_buffer(dev, &mox_type_f32x4, 4, NULL), *u4 = lang_buffer(dev, &mox_type_u32x4, 4, NULL);
    lang_expect_error(lang_add_u4(dev, lang_cfg(4), f4, u4, u4, 4), MOX_ERR_ABI_MISMATCH,
                      "kernel 'add_u4' argument 'a' must be a buffer of u32x4, got a buffer of f32x4");
    mox_buffer_release(f4);
    mox_buffer_release(u4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale4), cmocka_unit_test(test_swap_and_add), cmocka_unit_test(test_three_lanes_and_halves),
        cmocka_unit_test(test_records), cmocka_unit_test(test_type_checked),
    };
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
