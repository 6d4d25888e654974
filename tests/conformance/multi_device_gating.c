/* multi_device_gating.c - failure across devices (rule A9 with copies,
 * docs/multi-device.md): a copy of the output of an unfinished failed
 * writer on device 0 is gated with that failure as cause and copies
 * nothing, and device 1's work reading the copy's destination carries the
 * failure too; a failure already finished does not gate; a device lost on
 * one device completes the other's work waiting for it with that loss and
 * leaves the other device healthy (CUDA only: the CPU has no device loss);
 * copies in both directions from two threads at a small command capacity
 * (the two devices' locks taken in both orders). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "mdk.h"
#include "multi_support.h"

static mox_device *d0, *d1;
static const mox_waker no_waker = {NULL, NULL};

static int setup(void **state)
{
    (void)state;
    md_open_pair(&d0, &d1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    md_release_pair(d0, d1);
    return 0;
}

/* Device 0 held: its failing writer is certainly unfinished when the copy
 * and device 1's reader are submitted. */
static void copy_of_an_unfinished_failed_writer_is_gated(void **state)
{
    (void)state;
    const uint32_t n = 2000;
    mox_buffer *in = md_poisoned(d0, n, -7.0f), *x0 = conf_zeros(d0, n);
    mox_buffer *y1 = conf_ramp(d1, n, 4.0f, 0.0f), *z1 = conf_zeros(d1, n);
    mox_buffer *free1 = conf_zeros(d1, n);
    assert_int_equal(mox__testing_hold(d0, true), MOX_OK);
    mox_op *writer = md_submit(conf_fail_if_negative(d0, conf_cfg(n), in, x0, n));
    mox_op *copy = md_submit(mox_buffer_copy(x0, 0, y1, 0, n));
    mox_op *reader = md_submit(conf_scale(d1, conf_cfg(n), y1, z1, 2.0f, n));
    mox_op *unrelated = md_submit(conf_fill(d1, conf_cfg(n), free1, 3.0f, n));
    /* (On CUDA the copy waits for a launch device 0 holds back, so device 1
     * holds its later work back too: docs/multi-device.md.) */
    assert_int_equal(mox__testing_hold(d0, false), MOX_OK);
    assert_int_equal(mox_op_wait(unrelated), MOX_OK);

    assert_int_equal(mox_op_wait(writer), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(writer));
    md_expect_gated_by(copy, MOX_ERR_GATED, orig,
                    "the copy did not run because work it depends on failed: kernel "
                    "'fail_if_negative' failed: mox_fail(7)");
    const mox_error *ce = mox_result_error(mox_op_result(copy));
    assert_null(mox_error_kernel(ce));
    assert_int_equal(mox_error_fail_code(ce), 7);
    md_expect_gated_by(reader, MOX_ERR_GATED, orig, "kernel 'scale' did not run");
    md_expect_ramp(y1, 0, n, 4.0f, 0.0f); /* the gated copy copied nothing */
    md_expect_ramp(z1, 0, n, 0.0f, 0.0f);
    md_expect_ramp(free1, 0, n, 3.0f, 0.0f);
    mox_op_drop(writer);
    mox_op_drop(copy);
    mox_op_drop(reader);
    mox_op_drop(unrelated);
    mox_buffer_release(in);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(z1);
    mox_buffer_release(free1);
}

/* Not held: a slow batch ending in a failure. Still PENDING once the copy
 * and the reader were submitted, it was unfinished when they were: both are
 * gated. Else it may have finished before either (then that one is not
 * gated, A9), but a copy that ran leaves nothing to gate its reader. */
static void copy_of_a_running_failed_writer(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *in = md_poisoned(d0, n, -11.0f), *tmp = conf_zeros(d0, n), *x0 = conf_zeros(d0, n);
    mox_buffer *y1 = conf_ramp(d1, n, 9.0f, 0.0f), *z1 = conf_zeros(d1, n);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(d0, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_slow_copy(d0, conf_cfg(n), in, tmp, n, 10 * MD_SLOW_SPINS)),
                     MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fail_if_negative(d0, conf_cfg(n), tmp, x0, n)), MOX_OK);
    mox_op *writer = NULL;
    assert_int_equal(mox_batch_end(b, &writer), MOX_OK);
    md_submit(writer);
    mox_op *copy = md_submit(mox_buffer_copy(x0, 0, y1, 0, n));
    mox_op *reader = md_submit(conf_scale(d1, conf_cfg(n), y1, z1, 2.0f, n));
    bool unfinished = mox_op_poll(writer, no_waker) == MOX_PENDING;
    assert_int_equal(mox_op_wait(writer), MOX_ERR_KERNEL_FAILED);
    mox_status cs = mox_op_wait(copy), rs = mox_op_wait(reader);
    printf("the failing writer was %s when checked after the submissions: copy %s, reader %s\n",
           unfinished ? "unfinished" : "finished", mox_status_name(cs), mox_status_name(rs));
    if (unfinished) {
        assert_int_equal(cs, MOX_ERR_GATED);
        assert_int_equal(rs, MOX_ERR_GATED);
    }
    assert_true(cs == MOX_ERR_GATED || cs == MOX_OK);
    assert_true(rs == MOX_ERR_GATED || rs == MOX_OK);
    if (cs == MOX_OK)
        assert_int_equal(rs, MOX_OK);
    if (cs == MOX_ERR_GATED) {
        assert_ptr_equal(mox_error_cause(mox_result_error(mox_op_result(copy))),
                         mox_result_error(mox_op_result(writer)));
        md_expect_ramp(y1, 0, n, 9.0f, 0.0f);
    }
    mox_op_drop(writer);
    mox_op_drop(copy);
    mox_op_drop(reader);
    mox_buffer_release(in);
    mox_buffer_release(tmp);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(z1);
}

/* A failure observed before the copy is submitted does not gate it (A9). */
static void finished_failure_does_not_gate(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    mox_buffer *in = md_poisoned(d0, n, -2.0f), *x0 = conf_zeros(d0, n), *y1 = conf_zeros(d1, n);
    assert_int_equal(conf_run(conf_fail_if_negative(d0, conf_cfg(n), in, x0, n)),
                     MOX_ERR_KERNEL_FAILED);
    assert_int_equal(conf_run(mox_buffer_copy(x0, 0, y1, 0, n)), MOX_OK);
    assert_true(conf_read1(y1, 1) == 2.0f); /* in[1] + 1: the other threads ran */
    assert_true(conf_read1(y1, n / 2) == 0.0f);
    mox_buffer_release(in);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
}

/* The copy waits in its destination's admission queue (a context of
 * device 1 with one slot, held) while device 0's writer runs and fails:
 * it was submitted before the writer finished, so it is gated although it
 * is prepared only after (A9 with A3). */
static void copy_queued_for_capacity_is_gated(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_device *q1 = md_open(1, 1);
    mox_buffer *in = md_poisoned(d0, n, -5.0f), *x0 = conf_zeros(d0, n);
    mox_buffer *y1 = conf_zeros(q1, n), *busy = conf_zeros(q1, n);
    assert_int_equal(mox__testing_hold(d0, true), MOX_OK);
    assert_int_equal(mox__testing_hold(q1, true), MOX_OK);
    mox_op *writer = md_submit(conf_fail_if_negative(d0, conf_cfg(n), in, x0, n));
    mox_op *blocker = md_submit(conf_fill(q1, conf_cfg(n), busy, 1.0f, n));
    mox_op *copy = mox_buffer_copy(x0, 0, y1, 0, n);
    assert_int_equal(mox_op_poll(copy, no_waker), MOX_PENDING);
    assert_int_equal(mox__testing_in_flight(q1), 1); /* the copy is queued */
    assert_int_equal(mox__testing_hold(d0, false), MOX_OK);
    assert_int_equal(mox_op_wait(writer), MOX_ERR_KERNEL_FAILED);
    assert_int_equal(mox__testing_hold(q1, false), MOX_OK);
    assert_int_equal(conf_run(blocker), MOX_OK);
    md_expect_gated_by(copy, MOX_ERR_GATED, mox_result_error(mox_op_result(writer)),
                    "the copy did not run because work it depends on failed");
    mox_op_drop(copy);
    mox_op_drop(writer);
    md_expect_ramp(y1, 0, n, 0.0f, 0.0f); /* the gated copy copied nothing */
    mox_buffer_release(in);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(busy);
    mox_device_release(q1);
}

/* CUDA: a sticky fault on device 0 (a wild write) while device 1's copy
 * and reader wait for it. They complete with device 0's loss; device 1
 * stays healthy and goes on working; a new copy from device 0 is refused. */
static void loss_of_one_device_does_not_hang_the_other(void **state)
{
    (void)state;
    if (mox_device_backend(d0) != MOX_BACKEND_CUDA)
        skip(); /* the CPU backend has no device loss */
    const uint32_t n = 256;
    mox_device *lost = md_open(0, 0);
    assert_int_equal(mox_module_prepare(lost, &mdk_module), MOX_OK);
    mox_buffer *x0 = conf_zeros(lost, n), *y1 = conf_ramp(d1, n, 1.0f, 0.0f), *z1 = conf_zeros(d1, n);
    assert_int_equal(mox__testing_hold(lost, true), MOX_OK);
    mox_op *fault = md_submit(mdk_wild_write(lost, conf_cfg(n), x0, n));
    mox_op *copy = md_submit(mox_buffer_copy(x0, 0, y1, 0, n));
    mox_op *reader = md_submit(conf_scale(d1, conf_cfg(n), y1, z1, 2.0f, n));
    assert_int_equal(mox__testing_hold(lost, false), MOX_OK);
    if (mox_op_wait(fault) != MOX_ERR_DEVICE_LOST)
        fail_msg("the faulting kernel: %s", mox_error_message(mox_result_error(mox_op_result(fault))));
    mox_op_drop(fault);
    assert_int_equal(mox_op_wait(copy), MOX_ERR_DEVICE_LOST);
    const mox_error *ce = mox_result_error(mox_op_result(copy));
    assert_non_null(strstr(mox_error_message(ce), "the copy did not run"));
    assert_non_null(mox_error_cause(ce));
    assert_int_equal(mox_error_code(mox_error_cause(ce)), MOX_ERR_DEVICE_LOST);
    assert_int_equal(mox_op_wait(reader), MOX_ERR_DEVICE_LOST);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(reader))),
                           "kernel 'scale' did not run"));
    mox_op_drop(copy);
    mox_op_drop(reader);
    assert_int_equal(mox_device_health(lost), MOX_ERR_DEVICE_LOST);
    assert_int_equal(mox_device_health(d1), MOX_OK);
    /* Device 1 goes on; a copy from the lost device is refused at once. */
    assert_int_equal(conf_run(conf_fill(d1, conf_cfg(n), z1, 5.0f, n)), MOX_OK);
    md_expect_ramp(z1, 0, n, 5.0f, 0.0f);
    mox_op *again = mox_buffer_copy(x0, 0, y1, 0, n);
    assert_int_equal(mox_op_wait(again), MOX_ERR_DEVICE_LOST);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(again))),
                           "the source device of the copy was lost"));
    mox_op_drop(again);
    assert_int_equal(mox_device_health(d1), MOX_OK);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(z1);
    mox_device_release(lost);
    /* The shared fixtures' device 0 is another context of the faulted GPU:
     * reopen it (a reopen resets the faulted context). */
    mox_device_release(d0);
    d0 = md_open(0, 0);
}

typedef struct worker {
    mox_device *here, *there;
    mox_buffer *mine, *far;
    uint32_t n, rounds;
} worker;

/* mine (here) -> far (there), step far there, far -> mine: `rounds` times,
 * every op kept until it resolved (a queued op that is dropped never runs). */
static void *copy_loop(void *p)
{
    worker *w = p;
    mox_op *ops[3 * 40];
    uint32_t k = 0;
    for (uint32_t r = 0; r < w->rounds; r++) {
        ops[k++] = md_submit(mox_buffer_copy(w->mine, 0, w->far, 0, w->n));
        ops[k++] = md_submit(conf_step(w->there, conf_cfg(w->n), w->far, w->n));
        ops[k++] = md_submit(mox_buffer_copy(w->far, 0, w->mine, 0, w->n));
    }
    const char *why = NULL;
    for (uint32_t i = 0; i < k; i++)
        if (mox_op_wait(ops[i]) != MOX_OK && !why)
            why = mox_error_message(mox_result_error(mox_op_result(ops[i])));
    for (uint32_t i = 0; i < k; i++)
        mox_op_drop(ops[i]);
    return why ? "an op failed" : NULL;
}

static void concurrent_copies_both_ways(void **state)
{
    (void)state;
    const uint32_t n = 512, rounds = 40;
    mox_device *a = md_open(0, 2), *b = md_open(1, 2); /* capacity 2: admission queues */
    worker w[2] = {{a, b, conf_ramp(a, n, 0.0f, 1.0f), conf_zeros(b, n), n, rounds},
                   {b, a, conf_ramp(b, n, 1.0f, 0.5f), conf_zeros(a, n), n, rounds}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, copy_loop, &w[i]), 0);
    for (int i = 0; i < 2; i++) {
        void *why = NULL;
        pthread_join(t[i], &why);
        if (why)
            fail_msg("worker %d: %s", i, (const char *)why);
    }
    for (int i = 0; i < 2; i++) {
        float *v = conf_read(w[i].mine);
        for (uint32_t k = 0; k < n; k++) {
            float want = i == 0 ? (float)k : (float)k * 0.5f + 1.0f;
            for (uint32_t r = 0; r < rounds; r++)
                want = want * 2.0f + 1.0f;
            if (v[k] != want)
                fail_msg("worker %d element %u is %g, want %g", i, k, (double)v[k], (double)want);
        }
        free(v);
        mox_buffer_release(w[i].mine);
        mox_buffer_release(w[i].far);
    }
    mox_device_release(a);
    mox_device_release(b);
}

/* Waits for `op` for at most 10 s (a hang fails here, not at the ctest timeout). */
static mox_status wait_within_10s(mox_op *op)
{
    for (int ms = 0; ms < 10000; ms++) {
        if (mox_op_poll(op, (mox_waker){NULL, NULL}) == MOX_READY)
            return mox_result_status(mox_op_result(op));
        conf_nap(1);
    }
    fail_msg("no result after 10 s: the devices wait for each other");
    return MOX_ERR_STATE;
}

/* Each device holds back what the other waits for: on d1 a step held back
 * (d1 held), on d0 the copy back that waits for it, on d1 a copy that waits
 * for that one. Releasing d1 must send the older step out although the
 * later copy still waits, or neither device ever moves. */
static void held_back_work_behind_a_blocked_copy(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *p1 = conf_ramp(d1, n, 0.0f, 1.0f), *p0 = conf_zeros(d0, n), *q1 = conf_zeros(d1, n);
    assert_int_equal(mox_module_prepare(d1, &conf_module), MOX_OK);
    assert_int_equal(mox__testing_hold(d1, true), MOX_OK);
    mox_op *step = md_submit(conf_step(d1, conf_cfg(n), p1, n));   /* held back on d1 */
    mox_op *back = md_submit(mox_buffer_copy(p1, 0, p0, 0, n));    /* d0 waits for the step */
    mox_op *again = md_submit(mox_buffer_copy(p0, 0, q1, 0, n));   /* d1 waits for the copy */
    assert_int_equal(mox__testing_hold(d1, false), MOX_OK);
    assert_int_equal(wait_within_10s(again), MOX_OK);
    assert_int_equal(wait_within_10s(back), MOX_OK);
    assert_int_equal(wait_within_10s(step), MOX_OK);
    md_expect_ramp(q1, 0, n, 1.0f, 2.0f); /* x*2+1 of the ramp */
    mox_op_drop(step);
    mox_op_drop(back);
    mox_op_drop(again);
    mox_buffer_release(p1);
    mox_buffer_release(p0);
    mox_buffer_release(q1);
}

int main(void)
{
    md_require_two_devices();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_of_an_unfinished_failed_writer_is_gated),
        cmocka_unit_test(copy_of_a_running_failed_writer),
        cmocka_unit_test(finished_failure_does_not_gate),
        cmocka_unit_test(copy_queued_for_capacity_is_gated),
        cmocka_unit_test(loss_of_one_device_does_not_hang_the_other),
        cmocka_unit_test(concurrent_copies_both_ways),
        cmocka_unit_test(held_back_work_behind_a_blocked_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
