/* test_tables.c - MOX_TABLE parameters: the host's array is copied when
 * the launch is created (later changes to it do not reach the kernel), read
 * at uniform and at varying indices, tables of records, and a table near
 * the 32 KiB parameter limit. Runs on both backends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

#define N 4096u

static void test_stencil_weights(void **state)
{
    mox_device *dev = *state;
    float *in = malloc(N * 4), *out = malloc(N * 4), weights[9];
    for (uint32_t i = 0; i < N; i++)
        in[i] = (float)(i % 37u) * 0.25f - 3.0f;
    for (int k = 0; k < 9; k++)
        weights[k] = 1.0f / (float)(k + 2);
    mox_buffer *bin = lang_buffer(dev, &mox_type_f32, N, in), *bout = lang_buffer(dev, &mox_type_f32, N, NULL);
    mox_op *op = lang_stencil9(dev, lang_cfg(N), bin, bout, weights, N);
    float used[9];
    memcpy(used, weights, sizeof used);
    for (int k = 0; k < 9; k++)
        weights[k] = -100.0f; /* copied already: the launch must not see this */
    assert_int_equal(lang_run(op), MOX_OK);
    lang_read(bout, out);
    for (uint32_t i = 0; i + 8u < N; i++) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < 9u; k++)
            acc = fmaf(used[k], in[i + k], acc);
        assert_memory_equal(&out[i], &acc, 4);
    }
    mox_buffer_release(bin);
    mox_buffer_release(bout);
    free(in);
    free(out);
}

static void test_lookup_tables(void **state)
{
    mox_device *dev = *state;
    enum { BLOCKS = 16, T = 64 };
    static uint32_t big[7000];
    uint32_t keys[BLOCKS * T], out[BLOCKS * T], rounds[2] = {3, 5};
    Body bodies[4];
    memset(bodies, 0, sizeof bodies);
    for (uint32_t i = 0; i < 7000; i++)
        big[i] = i * 7u + 1u;
    for (int b = 0; b < 4; b++)
        bodies[b].mass = 1000.0f * (float)(b + 1);
    for (uint32_t i = 0; i < BLOCKS * T; i++)
        keys[i] = i * 2654435761u;
    mox_buffer *bk = lang_buffer(dev, &mox_type_u32, BLOCKS * T, keys), *bo = lang_buffer(dev, &mox_type_u32, BLOCKS * T, NULL);
    mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(BLOCKS, 1, 1), mox_dim3_make(T, 1, 1));
    assert_int_equal(lang_run(lang_lookup(dev, cfg, bk, bo, big, bodies, rounds)), MOX_OK);
    lang_read(bo, out);
    for (uint32_t b = 0; b < BLOCKS; b++) {
        uint32_t acc[T];
        for (uint32_t t = 0; t < T; t++) {
            uint32_t key = keys[b * T + t];
            acc[t] = big[key % 7000u] + (uint32_t)bodies[key % 4u].mass;
        }
        for (uint32_t r = 0; r < rounds[b % 2u]; r++) {
            uint32_t next[T];
            for (uint32_t t = 0; t < T; t++)
                next[t] = acc[(t + 1u) % T];
            for (uint32_t t = 0; t < T; t++)
                acc[t] += next[t];
        }
        for (uint32_t t = 0; t < T; t++)
            assert_int_equal(out[b * T + t], acc[t]);
    }
    mox_buffer_release(bk);
    mox_buffer_release(bo);
}

/* A NULL table is an argument error, named. */
static void test_null_table(void **state)
{
    mox_device *dev = *state;
    mox_buffer *b = lang_buffer(dev, &mox_type_f32, 16, NULL);
    lang_expect_error(lang_stencil9(dev, lang_cfg(16), b, b, NULL, 16), MOX_ERR_INVALID_ARGUMENT,
                      "kernel 'stencil9' argument 'weights': the value or its type is NULL");
    mox_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stencil_weights),
        cmocka_unit_test(test_lookup_tables),
        cmocka_unit_test(test_null_table),
    };
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
