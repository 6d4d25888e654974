/* lazy_poll.c - rules A1-A3: construction submits nothing; poll returns
 * PENDING (calling the latest waker later) while module preparation runs,
 * while command capacity is exhausted and while the device executes; then
 * READY. Uses the hidden hold hook (src/core/testing.h) to keep a batch in
 * flight, and MOX_DEBUG_PREPARE_DELAY_MS to slow preparation down. */
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "support.h"

static const mox_waker no_waker = {NULL, NULL};

static mox_status fill_seq(void *ctx, mox_batch *b)
{
    mox_buffer *buf = ctx;
    return mox_batch_push(b, conf_fill(mox_buffer_device(buf), conf_cfg(16), buf, 1.0f, 16));
}

static mox_status then_fill(void *ctx, const mox_result *in, mox_op **next)
{
    (void)in;
    mox_buffer *buf = ctx;
    *next = conf_fill(mox_buffer_device(buf), conf_cfg(16), buf, 2.0f, 16);
    return MOX_OK;
}

static mox_status map_one(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    (void)ctx;
    (void)in;
    (void)destroy;
    *value = NULL;
    return MOX_OK;
}

/* A1: no constructor submits anything; the buffer keeps its value. */
static void construction_submits_nothing(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_buffer *buf = conf_zeros(dev, 16);
    uint64_t before = mox_device_submission_count(dev);
    mox_op *launch = conf_fill(dev, conf_cfg(16), buf, 1.0f, 16);
    mox_op *seq = mox_sequence(dev, fill_seq, buf);
    mox_op *rb = mox_buffer_readback(buf);
    mox_op *t = NULL, *m = NULL, *s = NULL, *c = NULL;
    assert_int_equal(mox_op_then(conf_fill(dev, conf_cfg(16), buf, 3.0f, 16), then_fill, buf, &t), MOX_OK);
    assert_int_equal(mox_op_map(conf_fill(dev, conf_cfg(16), buf, 4.0f, 16), map_one, NULL, &m), MOX_OK);
    assert_int_equal(mox_op_share(conf_fill(dev, conf_cfg(16), buf, 5.0f, 16), &s), MOX_OK);
    assert_int_equal(mox_op_clone(s, &c), MOX_OK);
    conf_nap(20);
    assert_int_equal(mox_device_submission_count(dev), before);
    assert_null(mox_op_result(launch));
    assert_null(mox_op_result(seq));
    assert_null(mox_op_result(t));
    assert_true(conf_read1(buf, 0) == 0.0f);
    uint64_t after_read = mox_device_submission_count(dev); /* the read itself is a transfer */
    mox_op_drop(launch);
    mox_op_drop(seq);
    mox_op_drop(rb);
    mox_op_drop(t);
    mox_op_drop(m);
    mox_op_drop(s);
    mox_op_drop(c);
    assert_int_equal(mox_device_submission_count(dev), after_read);
    assert_true(conf_read1(buf, 15) == 0.0f);
    mox_buffer_release(buf);
    mox_device_release(dev);
}

/* A3: PENDING while the preparation worker loads the module; the batch
 * waits for it in the admission queue and the runtime submits it once the
 * module is loaded: no second poll is needed, and the waker is called once,
 * when it has completed (tests/conformance/prepare_order.c: the order). */
static void pending_during_preparation(void **state)
{
    (void)state;
    setenv("MOX_DEBUG_PREPARE_DELAY_MS", "1500", 1);
    mox_device *dev = conf_open();
    unsetenv("MOX_DEBUG_PREPARE_DELAY_MS");
    mox_buffer *buf = conf_zeros(dev, 16);
    mox_op *op = conf_fill(dev, conf_cfg(16), buf, 8.0f, 16);
    conf_flag f;
    conf_flag_init(&f);
    uint64_t before = mox_device_submission_count(dev);
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&f)), MOX_PENDING);
    /* Still preparing: polling again does not block and submits nothing. */
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&f)), MOX_PENDING);
    assert_int_equal(mox_device_submission_count(dev), before);
    assert_true(conf_flag_wait(&f, 0, 60000)); /* loaded, submitted, completed */
    assert_int_equal(conf_flag_calls(&f), 1);
    assert_int_equal(mox_device_submission_count(dev), before + 1);
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&f)), MOX_READY);
    assert_int_equal(mox_result_status(mox_op_result(op)), MOX_OK);
    assert_true(conf_read1(buf, 15) == 8.0f);
    mox_op_drop(op);
    conf_flag_destroy(&f);
    mox_buffer_release(buf);
    mox_device_release(dev);
}

/* A3: PENDING while the device executes, and while capacity is exhausted. */
static void pending_while_executing_and_at_capacity(void **state)
{
    (void)state;
    mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = 1, .cpu_threads = 0};
    mox_device *dev = conf_open_with(&o);
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *a = conf_zeros(dev, 16), *b = conf_zeros(dev, 16);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    uint64_t before = mox_device_submission_count(dev);

    mox_op *first = conf_fill(dev, conf_cfg(16), a, 1.0f, 16);
    conf_flag f1, f2;
    conf_flag_init(&f1);
    conf_flag_init(&f2);
    assert_int_equal(mox_op_poll(first, conf_flag_waker(&f1)), MOX_PENDING);
    assert_int_equal(mox_device_submission_count(dev), before + 1); /* submitted, executing */
    assert_int_equal(mox__testing_in_flight(dev), 1);

    /* Independent work, but the only command slot is taken. */
    mox_op *second = conf_fill(dev, conf_cfg(16), b, 2.0f, 16);
    assert_int_equal(mox_op_poll(second, conf_flag_waker(&f2)), MOX_PENDING);
    assert_int_equal(mox_op_poll(second, conf_flag_waker(&f2)), MOX_PENDING);
    assert_int_equal(mox_device_submission_count(dev), before + 1); /* not submitted */
    conf_nap(20);
    assert_int_equal(mox_op_poll(first, conf_flag_waker(&f1)), MOX_PENDING);
    assert_int_equal(conf_flag_calls(&f2), 0);

    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_true(conf_flag_wait(&f1, 0, 60000));
    assert_true(conf_flag_wait(&f2, 0, 60000)); /* the slot freed: second may go */
    assert_int_equal(conf_drive(first), MOX_OK);
    assert_int_equal(conf_drive(second), MOX_OK);
    assert_int_equal(mox_device_submission_count(dev), before + 2);
    assert_true(conf_read1(a, 0) == 1.0f && conf_read1(b, 0) == 2.0f);
    mox_op_drop(first);
    mox_op_drop(second);
    conf_flag_destroy(&f1);
    conf_flag_destroy(&f2);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_device_release(dev);
}

/* A2: the latest waker given wins; the earlier one is not called. */
static void latest_waker_wins(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *a = conf_zeros(dev, 16);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *op = conf_fill(dev, conf_cfg(16), a, 1.0f, 16);
    conf_flag old, latest;
    conf_flag_init(&old);
    conf_flag_init(&latest);
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&old)), MOX_PENDING);
    assert_int_equal(mox_op_poll(op, conf_flag_waker(&latest)), MOX_PENDING);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_true(conf_flag_wait(&latest, 0, 60000));
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_op_drop(op);
    assert_int_equal(conf_flag_calls(&old), 0);
    conf_flag_destroy(&old);
    conf_flag_destroy(&latest);
    mox_buffer_release(a);
    mox_device_release(dev);
}

/* A2: wakers come from runtime threads; then/map callbacks only run on the
 * thread that polls. */
typedef struct thread_probe {
    pthread_t poller;
    int calls;
    int on_poller;
} thread_probe;

static mox_status probe_then(void *ctx, const mox_result *in, mox_op **next)
{
    thread_probe *p = ctx;
    p->calls++;
    p->on_poller += pthread_equal(pthread_self(), p->poller) != 0;
    *next = mox_buffer_readback(mox_result_buffer(in, 0));
    return MOX_OK;
}

static mox_status probe_map(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    (void)in;
    (void)destroy;
    thread_probe *p = ctx;
    p->calls++;
    p->on_poller += pthread_equal(pthread_self(), p->poller) != 0;
    *value = p;
    return MOX_OK;
}

static void callbacks_run_on_the_polling_thread(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_buffer *a = conf_zeros(dev, 1000);
    thread_probe p = {pthread_self(), 0, 0};
    mox_op *t = NULL, *m = NULL;
    assert_int_equal(mox_op_then(conf_fill(dev, conf_cfg(1000), a, 6.0f, 1000), probe_then, &p, &t), MOX_OK);
    assert_int_equal(mox_op_map(t, probe_map, &p, &m), MOX_OK);
    assert_int_equal(conf_drive(m), MOX_OK);
    assert_ptr_equal(mox_result_value(mox_op_result(m)), &p);
    assert_int_equal(p.calls, 2);
    assert_int_equal(p.on_poller, 2);
    mox_op_drop(m);
    mox_buffer_release(a);
    mox_device_release(dev);
}

static void resolved_ops_stay_ready(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_buffer *a = conf_zeros(dev, 4);
    mox_op *op = conf_fill(dev, conf_cfg(4), a, 1.0f, 4);
    assert_null(mox_op_result(op));
    assert_int_equal(mox_op_wait(op), MOX_OK);
    const mox_result *r = mox_op_result(op);
    assert_non_null(r);
    assert_int_equal(mox_op_poll(op, no_waker), MOX_READY);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    assert_ptr_equal(mox_op_result(op), r);
    mox_op_drop(op);
    mox_op_drop(NULL);
    assert_int_equal(mox_op_wait(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_poll(NULL, no_waker), MOX_READY);
    mox_error *last = mox_error_last();
    assert_int_equal(mox_error_code(last), MOX_ERR_INVALID_ARGUMENT);
    mox_error_release(last);
    assert_non_null(strstr(mox_error_last_message(), "mox_op_poll: op is NULL"));
    assert_null(mox_op_result(NULL));
    mox_buffer_release(a);
    mox_device_release(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(construction_submits_nothing),
        cmocka_unit_test(pending_during_preparation),
        cmocka_unit_test(pending_while_executing_and_at_capacity),
        cmocka_unit_test(latest_waker_wins),
        cmocka_unit_test(callbacks_run_on_the_polling_thread),
        cmocka_unit_test(resolved_ops_stay_ready),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
