/* multi_support.c - see multi_support.h. */
#include "multi_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void md_require_two_devices(void)
{
    uint32_t n = 0;
    mox_status st = mox_device_count(MOX_BACKEND_AUTO, &n);
    if (st != MOX_OK) {
        fprintf(stderr, "mox_device_count: %s: %s\n", mox_status_name(st), mox_error_last_message());
        exit(1);
    }
    if (n < 2) {
        fprintf(stderr, "skip: %u device(s) of this backend, the test needs 2\n", n);
        exit(CONF_SKIP);
    }
}

mox_device *md_open(uint32_t ordinal, uint32_t capacity)
{
    mox_device_options o = {.command_capacity = capacity, .use_ordinal = true, .ordinal = ordinal};
    mox_device *dev = conf_open_with(&o);
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    return dev;
}

mox_op *md_submit(mox_op *op)
{
    (void)mox_op_poll(op, (mox_waker){NULL, NULL});
    return op;
}

void md_expect_ramp(mox_buffer *b, size_t first, size_t count, float base, float step)
{
    float *v = conf_read(b);
    for (size_t i = 0; i < count; i++) {
        float want = (float)i * step + base;
        if (v[first + i] != want)
            fail_msg("element %zu is %g, want %g", first + i, (double)v[first + i], (double)want);
    }
    free(v);
}

mox_buffer *md_poisoned(mox_device *dev, uint32_t n, float bad)
{
    mox_buffer *b = conf_ramp(dev, n, 0.0f, 1.0f);
    assert_int_equal(mox_buffer_write(b, n / 2, 1, &bad), MOX_OK);
    return b;
}

void md_expect_gated_by(mox_op *op, mox_status code, const mox_error *cause, const char *text)
{
    assert_int_equal(mox_op_wait(op), code);
    const mox_error *e = mox_result_error(mox_op_result(op));
    assert_ptr_equal(mox_error_cause(e), cause);
    if (!strstr(mox_error_message(e), text))
        fail_msg("message '%s' lacks '%s'", mox_error_message(e), text);
}

void md_open_pair(mox_device **d0, mox_device **d1)
{
    *d0 = md_open(0, 0);
    *d1 = md_open(1, 0);
}

void md_release_pair(mox_device *d0, mox_device *d1)
{
    mox_device_release(d0);
    mox_device_release(d1);
}
