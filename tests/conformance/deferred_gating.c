/* deferred_gating.c - failure gating (rule A9) through a kernel built with
 * the deferred gate check (module "mdefer", MOXC_GATE_DEFER=1: on CUDA its
 * entries check the gate only before the store and ask nothing at their
 * end, docs/cuda-backend.md "Deferred dispatches"). With n = 0 none of its
 * threads stores, yet behind an unfinished failed writer it must end GATED
 * with that failure as cause, and so must what reads its output: on its
 * device, and a copy to another device with that device's reader (the
 * copy's destination untouched). Every backend gives the same outcome. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "mdefer.h"
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

/* Device 0 held: the failing writer is certainly unfinished when the empty
 * deferred dispatch reading its output and that dispatch's reader are
 * submitted (released together, they may share one launch). */
static void empty_deferred_dispatch_behind_a_failure(void **state)
{
    (void)state;
    const uint32_t n = 512;
    mox_buffer *in = md_poisoned(d0, n, -7.0f), *x0 = conf_zeros(d0, n), *x1 = conf_ramp(d0, n, 5.0f, 0.0f);
    mox_buffer *z = conf_ramp(d0, n, 6.0f, 0.0f);
    assert_int_equal(mox__testing_hold(d0, true), MOX_OK);
    mox_op *writer = md_submit(conf_fail_if_negative(d0, conf_cfg(n), in, x0, n));
    mox_op *empty = md_submit(mdefer_defer_inc(d0, conf_cfg(n), x0, x1, 0));
    mox_op *reader = md_submit(conf_scale(d0, conf_cfg(n), x1, z, 2.0f, n));
    assert_int_equal(mox__testing_hold(d0, false), MOX_OK);
    assert_int_equal(mox_op_wait(writer), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(writer));
    md_expect_gated_by(empty, MOX_ERR_GATED, orig, "kernel 'defer_inc' did not run because work it depends on failed");
    md_expect_gated_by(reader, MOX_ERR_GATED, orig, "kernel 'scale' did not run");
    md_expect_ramp(x1, 0, n, 5.0f, 0.0f);
    md_expect_ramp(z, 0, n, 6.0f, 0.0f);
    mox_op_drop(writer);
    mox_op_drop(empty);
    mox_op_drop(reader);
    mox_buffer_release(in);
    mox_buffer_release(x0);
    mox_buffer_release(x1);
    mox_buffer_release(z);
}

/* Not held: the writer runs (a slow batch ending in a failure) while the
 * empty deferred dispatch, the copy of its output to device 1 and device
 * 1's reader are submitted, so on CUDA the copy's gate names a deferred
 * dispatch that is launched and unfinished. Still PENDING once all three
 * were submitted, the writer was unfinished when they were: all three are
 * gated. Else it may have finished before any of them (that one and what
 * follows it are then not gated, A9: seen with 14 tests at once on two
 * cores), but one that ran leaves nothing to gate the next. */
static void copy_of_an_empty_deferred_dispatch_to_another_device(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *in = md_poisoned(d0, n, -11.0f), *tmp = conf_zeros(d0, n), *x0 = conf_zeros(d0, n);
    mox_buffer *x1 = conf_ramp(d0, n, 1.0f, 0.0f);
    mox_buffer *y1 = conf_ramp(d1, n, 9.0f, 0.0f), *z1 = conf_zeros(d1, n);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(d0, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_slow_copy(d0, conf_cfg(n), in, tmp, n, 10 * MD_SLOW_SPINS)),
                     MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fail_if_negative(d0, conf_cfg(n), tmp, x0, n)), MOX_OK);
    mox_op *writer = NULL;
    assert_int_equal(mox_batch_end(b, &writer), MOX_OK);
    md_submit(writer);
    mox_op *empty = md_submit(mdefer_defer_inc(d0, conf_cfg(n), x0, x1, 0));
    mox_op *copy = md_submit(mox_buffer_copy(x1, 0, y1, 0, n));
    mox_op *reader = md_submit(conf_scale(d1, conf_cfg(n), y1, z1, 2.0f, n));
    bool unfinished = mox_op_poll(writer, no_waker) == MOX_PENDING;
    assert_int_equal(mox_op_wait(writer), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(writer));
    mox_op *const chain[3] = {empty, copy, reader};
    const char *const says[3] = {"kernel 'defer_inc' did not run",
                                 "the copy did not run because work it depends on failed",
                                 "kernel 'scale' did not run"};
    mox_status got[3];
    for (int i = 0; i < 3; i++) {
        got[i] = mox_op_wait(chain[i]);
        assert_true(got[i] == MOX_ERR_GATED || got[i] == MOX_OK);
        if (unfinished || got[i] == MOX_ERR_GATED)
            md_expect_gated_by(chain[i], MOX_ERR_GATED, orig, says[i]);
        if (i > 0 && got[i - 1] == MOX_OK)
            assert_int_equal(got[i], MOX_OK);
    }
    printf("the failing writer was %s when checked after the submissions: %s, %s, %s\n",
           unfinished ? "unfinished" : "finished", mox_status_name(got[0]), mox_status_name(got[1]),
           mox_status_name(got[2]));
    if (got[1] == MOX_ERR_GATED)
        md_expect_ramp(y1, 0, n, 9.0f, 0.0f); /* the gated copy copied nothing */
    if (got[2] == MOX_ERR_GATED)
        md_expect_ramp(z1, 0, n, 0.0f, 0.0f);
    mox_op_drop(writer);
    mox_op_drop(empty);
    mox_op_drop(copy);
    mox_op_drop(reader);
    mox_buffer_release(in);
    mox_buffer_release(tmp);
    mox_buffer_release(x0);
    mox_buffer_release(x1);
    mox_buffer_release(y1);
    mox_buffer_release(z1);
}

int main(void)
{
    md_require_two_devices();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_deferred_dispatch_behind_a_failure),
        cmocka_unit_test(copy_of_an_empty_deferred_dispatch_to_another_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
