/* multi_backend.c - copies between a CPU device and a CUDA device
 * (docs/multi-device.md): staged through host memory, a readback of the
 * source then a write of the destination, both ordered when the copy is
 * submitted - after the source's pending writers and the destination's
 * pending readers and writers, before later work on either - and, like
 * host access, never gated. Needs CUDA (the simulated driver or a GPU):
 * exit 77 without. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "multi_support.h"

static mox_device *cpu, *gpu;

static mox_device *open_backend(mox_backend which)
{
    mox_device_options o = {.backend = which};
    mox_device *d = conf_open_with(&o); /* exits 77 when unavailable */
    assert_int_equal(mox_module_prepare(d, &conf_module), MOX_OK);
    return d;
}

static int setup(void **state)
{
    (void)state;
    cpu = open_backend(MOX_BACKEND_CPU);
    gpu = open_backend(MOX_BACKEND_CUDA);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(cpu);
    mox_device_release(gpu);
    return 0;
}

static void no_peer_link_between_backends(void **state)
{
    (void)state;
    mox_peer_link l = MOX_PEER_SAME;
    assert_int_equal(mox_device_peer(cpu, gpu, &l), MOX_OK);
    assert_int_equal(l, MOX_PEER_NONE);
    assert_int_equal(mox_device_peer(gpu, cpu, &l), MOX_OK);
    assert_int_equal(l, MOX_PEER_NONE);
}

static void copies_both_ways(void **state)
{
    (void)state;
    const uint32_t n = 5000;
    mox_buffer *a = conf_ramp(cpu, n, 3.0f, 0.25f), *g = conf_zeros(gpu, n), *b = conf_zeros(cpu, n);
    uint64_t sc = mox_device_submission_count(cpu), sg = mox_device_submission_count(gpu);
    mox_op *op = mox_buffer_copy(a, 0, g, 0, n);
    assert_int_equal(mox_device_submission_count(cpu), sc); /* lazy */
    assert_int_equal(mox_device_submission_count(gpu), sg);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    assert_ptr_equal(mox_result_buffer(mox_op_result(op), 1), g);
    mox_op_drop(op);
    md_expect_ramp(g, 0, n, 3.0f, 0.25f);
    assert_int_equal(conf_run(mox_buffer_copy(g, 10, b, 20, 100)), MOX_OK);
    md_expect_ramp(b, 20, 100, 3.0f + 10 * 0.25f, 0.25f);
    md_expect_ramp(b, 0, 20, 0.0f, 0.0f);
    mox_buffer_release(a);
    mox_buffer_release(g);
    mox_buffer_release(b);
}

/* A slow writer on one side, the copy and a reader on the other submitted
 * right after it: each waits for the one before, both directions. */
static void ordered_after_running_writers(void **state)
{
    (void)state;
    const uint32_t n = 2048;
    mox_device *sides[2][2] = {{gpu, cpu}, {cpu, gpu}};
    for (int k = 0; k < 2; k++) {
        mox_device *from = sides[k][0], *to = sides[k][1];
        mox_buffer *in = conf_ramp(from, n, 1.0f, 2.0f), *x = conf_zeros(from, n);
        mox_buffer *y = conf_zeros(to, n), *z = conf_zeros(to, n);
        mox_op *w = md_submit(conf_slow_copy(from, conf_cfg(n), in, x, n, MD_SLOW_SPINS));
        mox_op *c = md_submit(mox_buffer_copy(x, 0, y, 0, n));
        mox_op *r = md_submit(conf_scale(to, conf_cfg(n), y, z, 2.0f, n));
        assert_int_equal(conf_run(r), MOX_OK);
        assert_int_equal(conf_run(c), MOX_OK);
        assert_int_equal(conf_run(w), MOX_OK);
        md_expect_ramp(z, 0, n, 2.0f, 4.0f);
        mox_buffer_release(in);
        mox_buffer_release(x);
        mox_buffer_release(y);
        mox_buffer_release(z);
    }
}

/* Write after read: the copy into y waits for the slow reader of y; the
 * overwrite of x waits for the copy that reads it. */
static void ordered_before_later_writers(void **state)
{
    (void)state;
    const uint32_t n = 2048;
    mox_buffer *x = conf_ramp(cpu, n, 7.0f, 1.0f);
    mox_buffer *y = conf_ramp(gpu, n, 50.0f, 0.0f), *w = conf_zeros(gpu, n);
    mox_op *reader = md_submit(conf_slow_copy(gpu, conf_cfg(n), y, w, n, MD_SLOW_SPINS));
    mox_op *copy = md_submit(mox_buffer_copy(x, 0, y, 0, n));
    mox_op *over = md_submit(conf_fill(cpu, conf_cfg(n), x, -3.0f, n));
    assert_int_equal(conf_run(over), MOX_OK);
    assert_int_equal(conf_run(copy), MOX_OK);
    assert_int_equal(conf_run(reader), MOX_OK);
    md_expect_ramp(w, 0, n, 50.0f, 0.0f);
    md_expect_ramp(y, 0, n, 7.0f, 1.0f);
    md_expect_ramp(x, 0, n, -3.0f, 0.0f);
    mox_buffer_release(x);
    mox_buffer_release(y);
    mox_buffer_release(w);
}

/* Staged through the host like mox_buffer_read/_write: an unfinished
 * failed writer does not gate the copy, which copies what it left. */
static void never_gated(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    float bad = -4.0f;
    mox_buffer *in = conf_ramp(gpu, n, 0.0f, 1.0f), *x = conf_zeros(gpu, n), *y = conf_zeros(cpu, n);
    assert_int_equal(mox_buffer_write(in, n / 2, 1, &bad), MOX_OK);
    assert_int_equal(mox__testing_hold(gpu, true), MOX_OK);
    mox_op *w = md_submit(conf_fail_if_negative(gpu, conf_cfg(n), in, x, n));
    mox_op *c = md_submit(mox_buffer_copy(x, 0, y, 0, n));
    assert_int_equal(mox__testing_hold(gpu, false), MOX_OK);
    assert_int_equal(conf_run(w), MOX_ERR_KERNEL_FAILED);
    assert_int_equal(conf_run(c), MOX_OK);
    assert_true(conf_read1(y, 3) == 4.0f); /* in[3] + 1: copied after the writer */
    assert_true(conf_read1(y, n / 2) == 0.0f);
    mox_buffer_release(in);
    mox_buffer_release(x);
    mox_buffer_release(y);
}

static void dropped_before_submission(void **state)
{
    (void)state;
    const uint32_t n = 64;
    mox_buffer *a = conf_ramp(gpu, n, 1.0f, 1.0f), *b = conf_zeros(cpu, n);
    uint64_t sc = mox_device_submission_count(cpu), sg = mox_device_submission_count(gpu);
    mox_op_drop(mox_buffer_copy(a, 0, b, 0, n));
    assert_int_equal(mox_device_submission_count(cpu), sc);
    assert_int_equal(mox_device_submission_count(gpu), sg);
    md_expect_ramp(b, 0, n, 0.0f, 0.0f);
    mox_buffer_release(a);
    mox_buffer_release(b);
}

/* Every host allocation of a staged copy fails in turn: a clean
 * MOX_ERR_OUT_OF_MEMORY, or gated by one (or success), never a hang; the stage's own
 * allocation says what it was for. */
static void copies_under_allocation_failures(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *a = conf_ramp(cpu, n, 2.0f, 1.0f), *g = conf_zeros(gpu, n);
    bool staging_seen = false;
    int successes = 0;
    long k;
    for (k = 0; k < 2000 && successes < 5; k++) {
        mox__testing_fail_alloc_after(k);
        mox_op *op = mox_buffer_copy(a, 0, g, 0, n);
        mox_status st = mox_op_wait(op);
        mox__testing_fail_alloc_after(-1);
        const mox_error *e = mox_result_error(mox_op_result(op));
        if (st != MOX_OK) {
            /* A CUDA batch that could not be launched for lack of memory
             * gates its dispatches with that failure as the cause. */
            const mox_error *cause = st == MOX_ERR_GATED && e ? mox_error_cause(e) : NULL;
            if (st != MOX_ERR_OUT_OF_MEMORY && mox_error_code(cause) != MOX_ERR_OUT_OF_MEMORY)
                fail_msg("allocation %ld: %s: %s", k, mox_status_name(st),
                         e ? mox_error_message(e) : "(no error)");
            staging_seen |= e && strstr(mox_error_message(e), "out of memory staging") != NULL;
        }
        mox_op_drop(op);
        if (st == MOX_OK)
            md_expect_ramp(g, 0, n, 2.0f, 1.0f);
        successes = st == MOX_OK ? successes + 1 : 0;
    }
    printf("the copy ran %ld times\n", k);
    assert_int_equal(successes, 5);
    assert_true(staging_seen);
    mox_buffer_release(a);
    mox_buffer_release(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_peer_link_between_backends),
        cmocka_unit_test(copies_both_ways),
        cmocka_unit_test(ordered_after_running_writers),
        cmocka_unit_test(ordered_before_later_writers),
        cmocka_unit_test(never_gated),
        cmocka_unit_test(dropped_before_submission),
        cmocka_unit_test(copies_under_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
