/* test_dynshared.c - dynamic shared memory: MOX_SHARED_DYNAMIC arrays get
 * mox_launch_config.shared_bytes per block (two declarations alias), sizes
 * from a few bytes to beyond CUDA's default 48 KiB limit (the opt-in), and
 * a size beyond the device's limit is refused when the launch is created.
 * Runs on both backends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

static void test_reverse(void **state)
{
    mox_device *dev = *state;
    enum { N = 1000, B = 128 };
    float in[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        in[i] = (float)i;
    mox_buffer *bin = lang_buffer(dev, &mox_type_f32, N, in), *bout = lang_buffer(dev, &mox_type_f32, N, NULL);
    mox_launch_config cfg;
    assert_int_equal(mox_launch_config_for_elements(B, N, &cfg), MOX_OK);
    cfg = mox_launch_config_with_shared(cfg, B * sizeof(float));
    assert_int_equal(lang_run(lang_reverse_blocks(dev, cfg, bin, bout, N)), MOX_OK);
    lang_read(bout, out);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t blk = i / B, t = i % B, src = blk * B + (B - 1u - t);
        assert_true(out[i] == (src < N ? in[src] : 0.0f));
    }
    mox_buffer_release(bin);
    mox_buffer_release(bout);
}

/* 16 and 256 floats per thread: 4 KiB and 64 KiB per block. */
static void test_views_and_sizes(void **state)
{
    mox_device *dev = *state;
    static const uint32_t per[] = {16, 256};
    for (size_t c = 0; c < 2; c++) {
        enum { BLOCKS = 3, T = 64 };
        float out[BLOCKS * T];
        mox_buffer *b = lang_buffer(dev, &mox_type_f32, BLOCKS * T, NULL);
        mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(BLOCKS, 1, 1), mox_dim3_make(T, 1, 1));
        cfg.shared_bytes = T * per[c] * (uint32_t)sizeof(float);
        assert_true(cfg.shared_bytes <= mox_device_max_shared_bytes(dev));
        assert_int_equal(lang_run(lang_views_and_size(dev, cfg, b, per[c])), MOX_OK);
        lang_read(b, out);
        for (uint32_t i = 0; i < BLOCKS * T; i++) {
            uint32_t t = i % T;
            float want = 0.0f;
            for (uint32_t q = 0; q < per[c] / 4u; q++) {
                float x = (float)(t + 4u * q), y = x + 1.0f, z = x + 2.0f, w = x + 3.0f;
                want += x + y + z + w;
            }
            assert_true(out[i] == want);
        }
        mox_buffer_release(b);
    }
}

static void test_beyond_the_limit(void **state)
{
    mox_device *dev = *state;
    uint32_t max = mox_device_max_shared_bytes(dev);
    assert_true(max >= 48u * 1024u);
    mox_buffer *b = lang_buffer(dev, &mox_type_f32, 64, NULL);
    mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(64, 1, 1));
    cfg.shared_bytes = max + 1u;
    char want[200];
    snprintf(want, sizeof want,
             "invalid launch of kernel 'views_and_size': %u bytes of dynamic shared memory exceed the device's limit "
             "of %u bytes per block",
             max + 1u, max);
    lang_expect_error(lang_views_and_size(dev, cfg, b, 4), MOX_ERR_INVALID_LAUNCH, want);
    mox_buffer_release(b);
}

/* A kernel with MOX_SHARED_DYNAMIC launched with the default 0 bytes is
 * refused when the launch is created (its array would have no byte); an
 * empty grid, which runs nothing, may pass 0. */
static void test_zero_bytes_refused(void **state)
{
    mox_device *dev = *state;
    mox_buffer *b = lang_buffer(dev, &mox_type_f32, 64, NULL);
    mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(64, 1, 1));
    assert_int_equal(cfg.shared_bytes, 0);
    lang_expect_error(lang_views_and_size(dev, cfg, b, 4), MOX_ERR_INVALID_LAUNCH,
                      "invalid launch of kernel 'views_and_size': it declares MOX_SHARED_DYNAMIC memory "
                      "but the launch gives it 0 bytes (set mox_launch_config.shared_bytes, e.g. with "
                      "mox_launch_config_with_shared)");
    mox_launch_config empty = mox_launch_config_make(mox_dim3_make(0, 1, 1), mox_dim3_make(64, 1, 1));
    mox_op *op = lang_views_and_size(dev, empty, b, 4);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_op_drop(op);
    mox_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reverse),
        cmocka_unit_test(test_zero_bytes_refused),
        cmocka_unit_test(test_views_and_sizes),
        cmocka_unit_test(test_beyond_the_limit),
    };
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
