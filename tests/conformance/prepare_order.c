/* prepare_order.c - a batch polled while a module of it is still being
 * prepared takes its place in the cross-batch order at that first poll
 * (A6, A3): it waits in the device's admission queue, is submitted by the
 * runtime once the module is loaded (no further poll needed), and nothing
 * polled after it overtakes it - not a reader of its output, not work of
 * an already loaded module, not host access. Dropping it while it waits
 * runs nothing (A8). The preparation is slowed with
 * MOX_DEBUG_PREPARE_DELAY_MS so that every poll below finds it running. */
#include <stdlib.h>

#include "conf2.h" /* a second module */
#include "support.h"

enum { N = 64 };

/* A device whose preparation worker sleeps before each module load. */
static mox_device *open_slow(void)
{
    setenv("MOX_DEBUG_PREPARE_DELAY_MS", "300", 1);
    mox_device *dev = conf_open();
    unsetenv("MOX_DEBUG_PREPARE_DELAY_MS");
    return dev;
}

/* The example of docs/async.md A6 on a module not loaded yet: the reader,
 * polled second and waited first, still sees the writer's output. */
static void reader_polled_after_writer_waits_for_it(void **state)
{
    (void)state;
    mox_device *dev = open_slow();
    mox_buffer *mid = conf_zeros(dev, N), *out = conf_zeros(dev, N);
    uint64_t before = mox_device_submission_count(dev);
    mox_op *a = conf_fill(dev, conf_cfg(N), mid, 11.0f, N);
    mox_op *b = conf_scale(dev, conf_cfg(N), mid, out, 2.0f, N);
    mox_waker none = {NULL, NULL};
    assert_int_equal(mox_op_poll(a, none), MOX_PENDING);
    assert_int_equal(mox_op_poll(b, none), MOX_PENDING);
    assert_int_equal(mox_device_submission_count(dev), before); /* both wait for the module */
    assert_int_equal(conf_run(b), MOX_OK);
    assert_true(conf_read1(out, N - 1) == 22.0f);
    assert_int_equal(conf_run(a), MOX_OK);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_device_release(dev);
}

/* A launch of a loaded module polled after one whose module is still
 * loading runs after it, even when it is the one waited for. */
static void loaded_module_does_not_overtake(void **state)
{
    (void)state;
    mox_device *dev = open_slow();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f;
    mox_buffer *in = conf_buffer(dev, ones, N), *mid = conf_zeros(dev, N), *out = conf_zeros(dev, N);
    mox_op *a = conf2_tenfold(dev, conf_cfg(N), in, mid, N); /* conf2: still to load */
    mox_op *b = conf_scale(dev, conf_cfg(N), mid, out, 2.0f, N);
    mox_waker none = {NULL, NULL};
    assert_int_equal(mox_op_poll(a, none), MOX_PENDING);
    mox_op_poll(b, none);
    assert_int_equal(conf_run(b), MOX_OK);
    float got = conf_read1(out, 0);
    if (got != 22.0f)
        fail_msg("out[0] = %g, want 22 (tenfold: 10 * 1 + 1, then scale by 2)", (double)got);
    assert_int_equal(conf_run(a), MOX_OK);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_device_release(dev);
}

/* Host access after the first poll is ordered after it; the op needs no
 * further poll to run, and its waker is called once, at completion. */
static void host_read_waits_and_no_second_poll_is_needed(void **state)
{
    (void)state;
    mox_device *dev = open_slow();
    mox_buffer *buf = conf_zeros(dev, N);
    mox_op *a = conf_fill(dev, conf_cfg(N), buf, 42.0f, N);
    conf_flag f;
    conf_flag_init(&f);
    assert_int_equal(mox_op_poll(a, conf_flag_waker(&f)), MOX_PENDING);
    assert_true(conf_read1(buf, 3) == 42.0f); /* ordered after a: a ran */
    assert_true(conf_flag_wait(&f, 0, 60000));
    assert_int_equal(conf_flag_calls(&f), 1);
    assert_int_equal(mox_op_poll(a, conf_flag_waker(&f)), MOX_READY);
    assert_int_equal(mox_result_status(mox_op_result(a)), MOX_OK);
    mox_op_drop(a);
    conf_flag_destroy(&f);
    mox_buffer_release(buf);
    mox_device_release(dev);
}

/* Dropped while it waits for the module: it never runs, and what was
 * polled after it runs. */
static void dropped_while_preparing_runs_nothing(void **state)
{
    (void)state;
    mox_device *dev = open_slow();
    mox_buffer *x = conf_zeros(dev, N), *y = conf_zeros(dev, N);
    mox_op *a = conf_fill(dev, conf_cfg(N), x, 5.0f, N);
    mox_op *b = conf_fill(dev, conf_cfg(N), y, 7.0f, N);
    mox_waker none = {NULL, NULL};
    assert_int_equal(mox_op_poll(a, none), MOX_PENDING);
    assert_int_equal(mox_op_poll(b, none), MOX_PENDING);
    mox_op_drop(a);
    assert_int_equal(conf_run(b), MOX_OK);
    assert_true(conf_read1(y, 0) == 7.0f);
    assert_true(conf_read1(x, 0) == 0.0f);
    mox_buffer_release(x);
    mox_buffer_release(y);
    mox_device_release(dev);
}

/* A module that fails to load fails the batches waiting for it, in order,
 * and the batches behind them still run. */
static void failed_module_fails_the_waiting_batch(void **state)
{
    (void)state;
    /* Read when the worker prepares the module: set until it has failed. */
    setenv("MOX_ARTIFACT_CONF2", "/nonexistent/mox-conf2", 1);
    mox_device *dev = open_slow();
    mox_buffer *in = conf_zeros(dev, N), *mid = conf_zeros(dev, N), *y = conf_zeros(dev, N);
    mox_op *a = conf2_tenfold(dev, conf_cfg(N), in, mid, N);
    mox_op *b = conf_fill(dev, conf_cfg(N), y, 3.0f, N);
    mox_waker none = {NULL, NULL};
    assert_int_equal(mox_op_poll(a, none), MOX_PENDING);
    mox_op_poll(b, none);
    assert_int_equal(conf_run(a), MOX_ERR_ARTIFACT);
    unsetenv("MOX_ARTIFACT_CONF2");
    assert_int_equal(conf_run(b), MOX_OK);
    assert_true(conf_read1(y, 0) == 3.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(y);
    mox_device_release(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_polled_after_writer_waits_for_it),
        cmocka_unit_test(loaded_module_does_not_overtake),
        cmocka_unit_test(host_read_waits_and_no_second_poll_is_needed),
        cmocka_unit_test(dropped_while_preparing_runs_nothing),
        cmocka_unit_test(failed_module_fails_the_waiting_batch),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
