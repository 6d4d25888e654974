/* test_views.c - buffer views: a launch binds a buffer to a parameter of
 * another element type made of the same lanes (u32 <-> uint4, f32 <->
 * float4) or of bytes, when the sizes divide; other bindings are refused
 * with the reason; work through a view is ordered with the buffer's other
 * work like any access to it (A6). Runs on both backends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

#define N 1024u

static void test_u32_as_uint4(void **state)
{
    mox_device *dev = *state;
    uint32_t in[N], out[N / 4];
    for (uint32_t i = 0; i < N; i++)
        in[i] = i * 2654435761u;
    mox_buffer *bin = lang_buffer(dev, &mox_type_u32, N, in), *bout = lang_buffer(dev, &mox_type_u32, N / 4, NULL);
    assert_int_equal(lang_run(lang_sum4(dev, lang_cfg(N / 4), bin, bout, N / 4)), MOX_OK);
    lang_read(bout, out);
    for (uint32_t i = 0; i < N / 4; i++)
        assert_int_equal(out[i], in[4 * i] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3]);
    mox_buffer_release(bin);
    mox_buffer_release(bout);
}

static void test_f32_as_float4_and_bytes(void **state)
{
    mox_device *dev = *state;
    float v[N], back[N];
    for (uint32_t i = 0; i < N; i++)
        v[i] = (float)i - 100.5f;
    mox_buffer *b = lang_buffer(dev, &mox_type_f32, N, v);
    assert_int_equal(lang_run(lang_scale_f4(dev, lang_cfg(N / 4), b, -0.5f, N / 4)), MOX_OK);
    lang_read(b, back);
    for (uint32_t i = 0; i < N; i++)
        assert_true(back[i] == v[i] * -0.5f);
    /* the same floats as 4 KiB of bytes, flipped twice: unchanged */
    assert_int_equal(lang_run(lang_flip_bytes(dev, lang_cfg(4 * N), b, 4 * N)), MOX_OK);
    assert_int_equal(lang_run(lang_flip_bytes(dev, lang_cfg(4 * N), b, 4 * N)), MOX_OK);
    float again[N];
    lang_read(b, again);
    assert_memory_equal(again, back, sizeof back);
    mox_buffer_release(b);
}

/* A u32x4 buffer viewed as u32 (the other way round), ordered in one batch
 * with the vector kernel that reads it: inc as u32, then sum as uint4. */
typedef struct pair {
    mox_buffer *data, *sums;
} pair;

static mox_status record_pair(void *ctx, mox_batch *batch)
{
    pair *p = ctx;
    mox_device *dev = mox_buffer_device(p->data);
    mox_status st = mox_batch_push(batch, lang_inc_u32(dev, lang_cfg(N), p->data, N));
    if (st == MOX_OK)
        st = mox_batch_push(batch, lang_sum4(dev, lang_cfg(N / 4), p->data, p->sums, N / 4));
    return st;
}

static void test_views_are_ordered(void **state)
{
    mox_device *dev = *state;
    mox_uint4 v[N / 4];
    for (uint32_t i = 0; i < N / 4; i++)
        v[i] = mox_make_uint4(i, 2 * i, 3 * i, 4 * i);
    pair p = {lang_buffer(dev, &mox_type_u32x4, N / 4, v), lang_buffer(dev, &mox_type_u32, N / 4, NULL)};
    for (int round = 0; round < 3; round++)
        assert_int_equal(lang_run(mox_sequence(dev, record_pair, &p)), MOX_OK);
    uint32_t sums[N / 4];
    lang_read(p.sums, sums);
    for (uint32_t i = 0; i < N / 4; i++)
        assert_int_equal(sums[i], 10u * i + 12u); /* each lane +3 */
    mox_buffer_release(p.data);
    mox_buffer_release(p.sums);
}

static void expect_refused(mox_op *op, const char *text)
{
    lang_expect_error(op, MOX_ERR_ABI_MISMATCH, text);
}

static void test_refused_views(void **state)
{
    mox_device *dev = *state;
    mox_buffer *u10 = lang_buffer(dev, &mox_type_u32, 10, NULL), *f8 = lang_buffer(dev, &mox_type_f32, 8, NULL);
    mox_buffer *out = lang_buffer(dev, &mox_type_u32, 4, NULL), *bodies = lang_buffer(dev, &lang_type_Body, 2, NULL);
    expect_refused(lang_sum4(dev, lang_cfg(2), u10, out, 2),
                   "kernel 'sum4' argument 'in' must be a buffer of u32x4, got a buffer of u32 (a view needs a whole "
                   "number of u32x4 elements: the buffer has 40 bytes, not a multiple of 16)");
    expect_refused(lang_sum4(dev, lang_cfg(2), f8, out, 2),
                   "kernel 'sum4' argument 'in' must be a buffer of u32x4, got a buffer of f32 (a buffer binds to "
                   "another element type only as a view of the same lanes");
    expect_refused(lang_scale_f4(dev, lang_cfg(2), bodies, 1.0f, 2), "must be a buffer of f32x4, got a buffer of Body{");
    mox_buffer_release(u10);
    mox_buffer_release(f8);
    mox_buffer_release(out);
    mox_buffer_release(bodies);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u32_as_uint4),
        cmocka_unit_test(test_f32_as_float4_and_bytes),
        cmocka_unit_test(test_views_are_ordered),
        cmocka_unit_test(test_refused_views),
    };
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
