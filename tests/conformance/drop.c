/* drop.c - rule A8: dropping before submission releases what the op holds
 * and submits nothing; dropping after submission neither blocks nor
 * cancels; dropping a chain starts none of its later stages; dropping every
 * clone of a shared op stops driving it while submitted work completes.
 * (Under ASan, LeakSanitizer checks that nothing dropped leaks.) */
#include <stdlib.h>

#include "core/testing.h"
#include "support.h"

static const mox_waker no_waker = {NULL, NULL};

static void dropped_before_submission_submits_nothing(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_buffer *b = conf_zeros(dev, 64);
    uint64_t subs = mox_device_submission_count(dev);
    /* Never polled. */
    mox_op_drop(conf_fill(dev, conf_cfg(64), b, 1.0f, 64));
    mox_op_drop(mox_buffer_readback(b));
    mox_batch *batch = NULL;
    assert_int_equal(mox_batch_begin(dev, &batch), MOX_OK);
    assert_int_equal(mox_batch_push(batch, conf_fill(dev, conf_cfg(64), b, 2.0f, 64)), MOX_OK);
    mox_op *bop = NULL;
    assert_int_equal(mox_batch_end(batch, &bop), MOX_OK);
    mox_op_drop(bop);
    assert_int_equal(mox_device_submission_count(dev), subs);
    assert_true(conf_read1(b, 0) == 0.0f);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void dropped_while_preparing_submits_nothing(void **state)
{
    (void)state;
    setenv("MOX_DEBUG_PREPARE_DELAY_MS", "100", 1);
    mox_device *dev = conf_open();
    unsetenv("MOX_DEBUG_PREPARE_DELAY_MS");
    mox_buffer *b = conf_zeros(dev, 64);
    mox_op *op = conf_fill(dev, conf_cfg(64), b, 1.0f, 64);
    conf_flag f;
    conf_flag_init(&f);
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&f)), MOX_PENDING);
    mox_op_drop(op); /* preparation still running */
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    conf_nap(20);
    assert_int_equal(mox_device_submission_count(dev), 0);
    assert_int_equal(conf_flag_calls(&f), 0); /* a dropped op's waker is never called */
    assert_true(conf_read1(b, 0) == 0.0f);
    conf_flag_destroy(&f);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void dropped_while_waiting_for_capacity(void **state)
{
    (void)state;
    mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = 1, .cpu_threads = 0};
    mox_device *dev = conf_open_with(&o);
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *a = conf_zeros(dev, 8), *b = conf_zeros(dev, 8);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *first = conf_fill(dev, conf_cfg(8), a, 1.0f, 8);
    mox_op *second = conf_fill(dev, conf_cfg(8), b, 2.0f, 8);
    assert_int_equal(mox_op_poll(first, no_waker), MOX_PENDING);
    assert_int_equal(mox_op_poll(second, no_waker), MOX_PENDING); /* no capacity */
    mox_op_drop(second);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_int_equal(conf_run(first), MOX_OK);
    assert_int_equal(mox_device_submission_count(dev), 1 + 0);
    assert_true(conf_read1(b, 0) == 0.0f);
    assert_true(conf_read1(a, 0) == 1.0f);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void dropped_after_submission_completes(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *in = conf_ramp(dev, 1000, 0.0f, 1.0f), *out = conf_zeros(dev, 1000);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *op = conf_scale(dev, conf_cfg(1000), in, out, 2.0f, 1000);
    assert_int_equal(mox_op_poll(op, no_waker), MOX_PENDING);
    assert_int_equal(mox_device_submission_count(dev), 1);
    /* Held on the device: a drop that waited would never return. */
    mox_op_drop(op);
    mox_buffer_release(in); /* the submitted work keeps it alive */
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    float *v = conf_read(out); /* ordered after the dropped op */
    for (int i = 0; i < 1000; i++)
        assert_true(v[i] == (float)i * 2.0f);
    free(v);
    mox_buffer_release(out);
    mox_device_release(dev);
}

static void device_release_does_not_block(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_device *keep = mox_device_retain(dev);
    mox_buffer *out = conf_zeros(dev, 100);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *op = conf_fill(dev, conf_cfg(100), out, 3.0f, 100);
    while (mox_device_submission_count(dev) == 0)
        if (mox_op_poll(op, no_waker) == MOX_PENDING)
            conf_nap(1);
    mox_op_drop(op);
    mox_device_release(dev); /* work held in flight: must not wait for it */
    assert_int_equal(mox__testing_hold(keep, false), MOX_OK);
    assert_true(conf_read1(out, 99) == 3.0f);
    mox_buffer_release(out);
    mox_device_release(keep);
}

/* Releasing a device never waits for a module preparation in progress:
 * here the worker sleeps 10 minutes before loading (the debug delay); a
 * release that joined it would run into the test's timeout. */
static void device_release_does_not_wait_for_preparation(void **state)
{
    (void)state;
    setenv("MOX_DEBUG_PREPARE_DELAY_MS", "600000", 1);
    mox_device *dev = conf_open();
    unsetenv("MOX_DEBUG_PREPARE_DELAY_MS");
    mox_buffer *out = conf_zeros(dev, 16);
    mox_op *op = conf_fill(dev, conf_cfg(16), out, 1.0f, 16);
    assert_int_equal(mox_op_poll(op, no_waker), MOX_PENDING); /* preparing */
    conf_nap(20);                                             /* the worker is in its delay */
    mox_op_drop(op);
    mox_buffer_release(out);
    mox_device_release(dev); /* returns at once: the worker keeps its own reference */
}

typedef struct counter {
    int calls;
    mox_buffer *out;
} counter;

static mox_status second_stage(void *p, const mox_result *in, mox_op **next)
{
    (void)in;
    counter *c = p;
    c->calls++;
    *next = conf_fill(mox_buffer_device(c->out), conf_cfg(8), c->out, 9.0f, 8);
    return MOX_OK;
}

static void dropped_chain_starts_no_later_stage(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *a = conf_zeros(dev, 8), *b = conf_zeros(dev, 8);
    counter c = {0, b};
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *chain = NULL;
    assert_int_equal(mox_op_then(conf_fill(dev, conf_cfg(8), a, 1.0f, 8), second_stage, &c, &chain), MOX_OK);
    assert_int_equal(mox_op_poll(chain, no_waker), MOX_PENDING); /* first stage submitted */
    assert_int_equal(mox_device_submission_count(dev), 1);
    mox_op_drop(chain);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_true(conf_read1(a, 0) == 1.0f); /* the first stage finished */
    conf_nap(20);
    assert_int_equal(c.calls, 0);
    assert_int_equal(mox_device_submission_count(dev), 2); /* stage + the read */
    assert_true(conf_read1(b, 0) == 0.0f);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void dropping_every_clone_stops_driving(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *a = conf_zeros(dev, 8), *b = conf_zeros(dev, 8);
    counter c = {0, b};

    /* Submitted, then every clone dropped: the work still completes. */
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *s1 = NULL, *s2 = NULL;
    assert_int_equal(mox_op_share(conf_fill(dev, conf_cfg(8), a, 5.0f, 8), &s1), MOX_OK);
    assert_int_equal(mox_op_clone(s1, &s2), MOX_OK);
    assert_int_equal(mox_op_poll(s2, no_waker), MOX_PENDING);
    mox_op_drop(s1);
    mox_op_drop(s2);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_true(conf_read1(a, 7) == 5.0f);

    /* A shared chain never driven: dropping the clones runs nothing. */
    uint64_t subs = mox_device_submission_count(dev);
    mox_op *chain = NULL, *t1 = NULL, *t2 = NULL;
    assert_int_equal(mox_op_then(conf_fill(dev, conf_cfg(8), a, 6.0f, 8), second_stage, &c, &chain), MOX_OK);
    assert_int_equal(mox_op_share(chain, &t1), MOX_OK);
    assert_int_equal(mox_op_clone(t1, &t2), MOX_OK);
    mox_op_drop(t2);
    mox_op_drop(t1);
    assert_int_equal(mox_device_submission_count(dev), subs);
    assert_int_equal(c.calls, 0);

    /* Dropping one clone leaves the others driving. */
    assert_int_equal(mox_op_then(conf_fill(dev, conf_cfg(8), a, 7.0f, 8), second_stage, &c, &chain), MOX_OK);
    assert_int_equal(mox_op_share(chain, &t1), MOX_OK);
    assert_int_equal(mox_op_clone(t1, &t2), MOX_OK);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    assert_int_equal(mox_op_poll(t1, no_waker), MOX_PENDING); /* submitted, held */
    mox_op_drop(t1);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_int_equal(mox_op_wait(t2), MOX_OK);
    mox_op_drop(t2);
    assert_int_equal(c.calls, 1);
    assert_true(conf_read1(b, 0) == 9.0f);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_device_release(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dropped_before_submission_submits_nothing),
        cmocka_unit_test(dropped_while_preparing_submits_nothing),
        cmocka_unit_test(dropped_while_waiting_for_capacity),
        cmocka_unit_test(dropped_after_submission_completes),
        cmocka_unit_test(device_release_does_not_block),
        cmocka_unit_test(device_release_does_not_wait_for_preparation),
        cmocka_unit_test(dropped_chain_starts_no_later_stage),
        cmocka_unit_test(dropping_every_clone_stops_driving),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
