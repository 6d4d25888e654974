/* test_aliasing.c - read buffers and the no-alias entry: a launch whose
 * read buffer is also its write buffer computes with C's aliasing rules (the
 * runtime picks the default entry), a launch of distinct buffers may take
 * the read-only path (the __noalias entry); both give the source's result
 * on both backends. test_ptx.c checks that only the __noalias entries load
 * through ld.global.nc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

#define N 4096u

static void test_same_and_distinct_buffers(void **state)
{
    mox_device *dev = *state;
    float v[N], out[N];
    for (uint32_t i = 0; i < N; i++)
        v[i] = (float)i * 0.5f;
    mox_buffer *a = lang_buffer(dev, &mox_type_f32, N, v), *b = lang_buffer(dev, &mox_type_f32, N, NULL);
    assert_int_equal(lang_run(lang_step_twice(dev, lang_cfg(N), a, b, N)), MOX_OK);
    lang_read(b, out);
    for (uint32_t i = 0; i < N; i++)
        assert_true(out[i] == (v[i] + 1.0f) + v[i]);
    /* in place: the second read of in[i] sees the first store */
    assert_int_equal(lang_run(lang_step_twice(dev, lang_cfg(N), a, a, N)), MOX_OK);
    lang_read(a, out);
    for (uint32_t i = 0; i < N; i++)
        assert_true(out[i] == (v[i] + 1.0f) + (v[i] + 1.0f));
    mox_buffer_release(a);
    mox_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_same_and_distinct_buffers)};
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
