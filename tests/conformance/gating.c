/* gating.c - rule A9: a dispatch that calls mox_fail fails with
 * MOX_ERR_KERNEL_FAILED; its dependents in the batch do not run (gated),
 * independent dispatches still run, the batch reports the first failure; a
 * later batch touching the output of an unfinished failed writer is gated
 * with the original failure as cause; no waiter hangs. */
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "support.h"

static mox_device *dev;
static const mox_waker no_waker = {NULL, NULL};

static int setup(void **state)
{
    (void)state;
    dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(dev);
    return 0;
}

static mox_buffer *poisoned_input(uint32_t n, float bad)
{
    float *v = malloc(n * sizeof *v);
    for (uint32_t i = 0; i < n; i++)
        v[i] = (float)i;
    v[n / 2] = bad;
    mox_buffer *b = conf_buffer(dev, v, n);
    free(v);
    return b;
}

static void assert_all(mox_buffer *b, float want)
{
    float *v = conf_read(b);
    for (size_t i = 0; i < mox_buffer_length(b); i++)
        if (v[i] != want)
            fail_msg("element %zu is %g, want %g", i, (double)v[i], (double)want);
    free(v);
}

static mox_op *submit_now(mox_op *op)
{
    uint64_t before = mox_device_submission_count(dev);
    (void)mox_op_poll(op, no_waker);
    assert_int_equal(mox_device_submission_count(dev), before + 1);
    return op;
}

static void failure_reports_kernel_and_code(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    mox_buffer *in = poisoned_input(n, -5.0f), *out = conf_zeros(dev, n);
    mox_op *op = conf_fail_if_negative(dev, conf_cfg(n), in, out, n);
    assert_int_equal(mox_op_wait(op), MOX_ERR_KERNEL_FAILED);
    const mox_error *e = mox_result_error(mox_op_result(op));
    assert_int_equal(mox_error_code(e), MOX_ERR_KERNEL_FAILED);
    assert_string_equal(mox_error_kernel(e), "fail_if_negative");
    assert_int_equal(mox_error_fail_code(e), 5);
    assert_non_null(strstr(mox_error_message(e), "kernel 'fail_if_negative' failed: mox_fail(5)"));
    assert_null(mox_error_cause(e));
    assert_int_equal(mox_result_buffer_count(mox_op_result(op)), 0);
    mox_op_drop(op);
    /* The other threads went on: only the failing element is untouched. */
    assert_true(conf_read1(out, 0) == 1.0f);
    assert_true(conf_read1(out, n / 2) == 0.0f);
    mox_buffer_release(in);
    mox_buffer_release(out);
}

static void gating_within_a_batch(void **state)
{
    (void)state;
    const uint32_t n = 5000;
    mox_buffer *in = poisoned_input(n, -3.0f);
    mox_buffer *mid = conf_zeros(dev, n), *out1 = conf_zeros(dev, n), *out2 = conf_zeros(dev, n);
    mox_buffer *other = conf_zeros(dev, n);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fail_if_negative(dev, conf_cfg(n), in, mid, n)), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_scale(dev, conf_cfg(n), mid, out1, 2.0f, n)), MOX_OK); /* gated */
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(n), other, 4.0f, n)), MOX_OK);     /* runs */
    assert_int_equal(mox_batch_push(b, conf_scale(dev, conf_cfg(n), out1, out2, 2.0f, n)), MOX_OK); /* gated */
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_drive(op), MOX_ERR_KERNEL_FAILED);
    const mox_error *e = mox_result_error(mox_op_result(op));
    assert_string_equal(mox_error_kernel(e), "fail_if_negative"); /* the first failure */
    assert_int_equal(mox_error_fail_code(e), 3);
    mox_op_drop(op);
    assert_all(out1, 0.0f);
    assert_all(out2, 0.0f);
    assert_all(other, 4.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out1);
    mox_buffer_release(out2);
    mox_buffer_release(other);
}

static void gating_across_batches(void **state)
{
    (void)state;
    const uint32_t n = 2000;
    mox_buffer *in = poisoned_input(n, -9.0f);
    mox_buffer *mid = conf_zeros(dev, n), *out = conf_zeros(dev, n), *free_buf = conf_zeros(dev, n);
    /* Keep the failing writer unfinished while the readers are submitted. */
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *writer = submit_now(conf_fail_if_negative(dev, conf_cfg(n), in, mid, n));
    mox_op *reader = submit_now(conf_scale(dev, conf_cfg(n), mid, out, 2.0f, n));
    mox_op *overwriter = submit_now(conf_fill(dev, conf_cfg(n), mid, 1.0f, n));
    mox_op *unrelated = submit_now(conf_fill(dev, conf_cfg(n), free_buf, 8.0f, n));
    mox_op *rb = submit_now(mox_buffer_readback(mid));
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);

    assert_int_equal(conf_drive(writer), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(writer));
    assert_int_equal(conf_drive(reader), MOX_ERR_GATED);
    const mox_error *g = mox_result_error(mox_op_result(reader));
    assert_string_equal(mox_error_kernel(g), "scale");
    assert_ptr_equal(mox_error_cause(g), orig);
    assert_int_equal(mox_error_fail_code(g), 9);
    const char *msg = mox_error_message(g);
    assert_non_null(strstr(msg, "kernel 'scale' did not run"));
    assert_non_null(strstr(msg, "kernel 'fail_if_negative' failed: mox_fail(9)"));
    /* Writing the failed writer's output is gated too (its writer failed). */
    assert_int_equal(conf_drive(overwriter), MOX_ERR_GATED);
    assert_ptr_equal(mox_error_cause(mox_result_error(mox_op_result(overwriter))), orig);
    assert_int_equal(conf_drive(unrelated), MOX_OK);
    /* Host access ignores earlier failures. */
    assert_int_equal(conf_drive(rb), MOX_OK);
    mox_op_drop(writer);
    mox_op_drop(reader);
    mox_op_drop(overwriter);
    mox_op_drop(unrelated);
    mox_op_drop(rb);
    assert_all(out, 0.0f);
    assert_all(free_buf, 8.0f);
    /* The writer ran (but for its failing element); the overwriter did not. */
    assert_true(conf_read1(mid, 0) == 1.0f);
    assert_true(conf_read1(mid, 1) == 2.0f);
    assert_true(conf_read1(mid, n / 2) == 0.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_buffer_release(free_buf);
}

static void finished_failures_do_not_gate(void **state)
{
    (void)state;
    const uint32_t n = 100;
    mox_buffer *in = poisoned_input(n, -2.0f), *mid = conf_zeros(dev, n), *out = conf_zeros(dev, n);
    assert_int_equal(conf_run(conf_fail_if_negative(dev, conf_cfg(n), in, mid, n)), MOX_ERR_KERNEL_FAILED);
    /* The failure was observed; later work on its output runs normally. */
    assert_int_equal(conf_run(conf_scale(dev, conf_cfg(n), mid, out, 2.0f, n)), MOX_OK);
    assert_true(conf_read1(out, 1) == 4.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
}

static mox_status never_called(void *ctx, const mox_result *in, mox_op **next)
{
    (void)in;
    (void)next;
    (*(int *)ctx)++;
    return MOX_OK;
}

static void gated_batch_reports_first_failure_and_no_waiter_hangs(void **state)
{
    (void)state;
    const uint32_t n = 64;
    mox_buffer *in = poisoned_input(n, -4.0f), *mid = conf_zeros(dev, n);
    mox_buffer *in2 = poisoned_input(n, -6.0f), *x = conf_zeros(dev, n), *y = conf_zeros(dev, n);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *writer = submit_now(conf_fail_if_negative(dev, conf_cfg(n), in, mid, n));
    /* Dispatch 0 is gated by the earlier writer; dispatch 1 fails itself. */
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_scale(dev, conf_cfg(n), mid, x, 1.0f, n)), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fail_if_negative(dev, conf_cfg(n), in2, y, n)), MOX_OK);
    mox_op *batch = NULL, *chain = NULL;
    assert_int_equal(mox_batch_end(b, &batch), MOX_OK);
    int calls = 0;
    assert_int_equal(mox_op_then(batch, never_called, &calls, &chain), MOX_OK);
    assert_int_equal(mox_op_poll(chain, no_waker), MOX_PENDING);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_int_equal(conf_drive(chain), MOX_ERR_GATED);
    const mox_error *e = mox_result_error(mox_op_result(chain));
    assert_string_equal(mox_error_kernel(e), "scale");
    assert_int_equal(mox_error_fail_code(mox_error_cause(e)), 4);
    assert_int_equal(calls, 0);
    mox_op_drop(chain);
    assert_int_equal(conf_run(writer), MOX_ERR_KERNEL_FAILED);
    assert_true(conf_read1(y, 0) == 1.0f); /* dispatch 1 ran (and failed at one element) */
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(in2);
    mox_buffer_release(x);
    mox_buffer_release(y);
}

/* A batch recorded as the one before it takes its tables from the
 * recording thread's memo (src/core/record_memo.c): its gates come from
 * the memo's candidates (prepare.c). Each of three identical batches
 * (the first may be remembered, the others repeat it) is gated by the
 * unfinished failed writer of the buffer it reads first, through the
 * buffer it then writes and reads again (no gate of its own there: the
 * batch's own writer carries it), and its independent dispatch runs. */
static void repeated_batch_gated_as_its_first(void **state)
{
    (void)state;
    const uint32_t n = 64;
    mox_buffer *in = poisoned_input(n, -5.0f), *mid = conf_zeros(dev, n);
    mox_buffer *x = conf_zeros(dev, n), *y = conf_zeros(dev, n), *z = conf_zeros(dev, n);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *writer = submit_now(conf_fail_if_negative(dev, conf_cfg(n), in, mid, n));
    mox_op *batches[3];
    for (int r = 0; r < 3; r++) {
        mox_batch *b = NULL;
        assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
        assert_int_equal(mox_batch_push(b, conf_scale(dev, conf_cfg(n), mid, x, 2.0f, n)), MOX_OK);
        assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(n), z, 3.0f, n)), MOX_OK);
        assert_int_equal(mox_batch_push(b, conf_scale(dev, conf_cfg(n), x, y, 2.0f, n)), MOX_OK);
        assert_int_equal(mox_batch_end(b, &batches[r]), MOX_OK);
        (void)submit_now(batches[r]);
    }
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_int_equal(conf_drive(writer), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(writer));
    for (int r = 0; r < 3; r++) {
        assert_int_equal(conf_drive(batches[r]), MOX_ERR_GATED);
        const mox_error *g = mox_result_error(mox_op_result(batches[r]));
        assert_string_equal(mox_error_kernel(g), "scale");
        assert_ptr_equal(mox_error_cause(g), orig);
        mox_op_drop(batches[r]);
    }
    mox_op_drop(writer);
    assert_all(x, 0.0f);
    assert_all(y, 0.0f);
    assert_all(z, 3.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(x);
    mox_buffer_release(y);
    mox_buffer_release(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failure_reports_kernel_and_code),
        cmocka_unit_test(gating_within_a_batch),
        cmocka_unit_test(gating_across_batches),
        cmocka_unit_test(finished_failures_do_not_gate),
        cmocka_unit_test(gated_batch_reports_first_failure_and_no_waiter_hangs),
        cmocka_unit_test(repeated_batch_gated_as_its_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
