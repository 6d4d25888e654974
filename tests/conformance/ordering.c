/* ordering.c - rules A4-A6: launches yield their arguments, batches run
 * dependent dispatches in access order and independent ones freely, and
 * separate submissions are ordered by their buffer accesses. */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core/testing.h"
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

/* A4: the op keeps its buffers alive until it resolves or is dropped. */
static void op_retains_its_buffers(void **state)
{
    (void)state;
    mox_buffer *in = conf_ramp(dev, 64, 2.0f, 0.0f);
    mox_buffer *out = conf_zeros(dev, 64);
    mox_op *op = conf_scale(dev, conf_cfg(64), in, out, 4.0f, 64);
    mox_buffer_release(in);
    mox_buffer_release(out);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_buffer *res = mox_result_buffer(mox_op_result(op), 1);
    assert_true(conf_read1(res, 63) == 8.0f);
    mox_op_drop(op); /* the last references go with the result */
}

/* Submits without waiting (the module is prepared, so one poll submits). */
static mox_op *submit_now(mox_op *op)
{
    uint64_t before = mox_device_submission_count(dev);
    (void)mox_op_poll(op, (mox_waker){NULL, NULL});
    assert_int_equal(mox_device_submission_count(dev), before + 1);
    return op;
}

/* A6 across submissions: read-after-write, write-after-read, and a chain of
 * in-place updates, each a separate submission in flight at once. */
static void ordered_across_submissions(void **state)
{
    (void)state;
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    const uint32_t n = 40000;
    mox_buffer *x = conf_ramp(dev, n, 1.0f, 1.0f);
    mox_buffer *y = conf_zeros(dev, n), *z = conf_zeros(dev, n);
    mox_op *w1 = submit_now(conf_slow_copy(dev, conf_cfg(n), x, y, n, 300)); /* y = x (slow) */
    mox_op *r2 = submit_now(conf_scale(dev, conf_cfg(n), y, z, 2.0f, n));    /* reads y */
    mox_op *w3 = submit_now(conf_fill(dev, conf_cfg(n), x, -1.0f, n));       /* writes x */
    mox_op *steps[5];
    for (int k = 0; k < 5; k++)
        steps[k] = submit_now(conf_step(dev, conf_cfg(n), z, n)); /* z = z*2+1 */
    /* Dropping submitted ops does not cancel them. */
    mox_op_drop(w1);
    mox_op_drop(r2);
    for (int k = 0; k < 5; k++)
        mox_op_drop(steps[k]);
    assert_int_equal(conf_run(w3), MOX_OK);
    float *vy = conf_read(y), *vz = conf_read(z), *vx = conf_read(x);
    for (uint32_t i = 0; i < n; i++) {
        float want = ((float)i + 1.0f) * 2.0f;
        for (int k = 0; k < 5; k++)
            want = want * 2.0f + 1.0f;
        assert_true(vy[i] == (float)i + 1.0f);
        assert_true(vx[i] == -1.0f);
        if (vz[i] != want)
            fail_msg("i=%u: %g != %g", i, (double)vz[i], (double)want);
    }
    free(vx);
    free(vy);
    free(vz);
    mox_buffer_release(x);
    mox_buffer_release(y);
    mox_buffer_release(z);
}

static mox_status two_stage(void *ctx, mox_batch *b)
{
    mox_buffer **bufs = ctx;
    mox_status st = mox_batch_push(b, conf_scale(dev, conf_cfg(1000), bufs[0], bufs[1], 3.0f, 1000));
    if (st == MOX_OK)
        st = mox_batch_push(b, conf_add(dev, conf_cfg(1000), bufs[1], bufs[0], bufs[2], 1000));
    return st;
}

/* Batches ordered after earlier single launches and before later ones. */
static void batches_and_launches_interleave(void **state)
{
    (void)state;
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    mox_buffer *bufs[3] = {conf_zeros(dev, 1000), conf_zeros(dev, 1000), conf_zeros(dev, 1000)};
    mox_op *a = submit_now(conf_fill(dev, conf_cfg(1000), bufs[0], 2.0f, 1000));
    mox_op *s = submit_now(mox_sequence(dev, two_stage, bufs)); /* b1 = 6, b2 = 8 */
    mox_op *c = submit_now(conf_step(dev, conf_cfg(1000), bufs[2], 1000)); /* b2 = 17 */
    mox_op_drop(a);
    mox_op_drop(s);
    assert_int_equal(conf_run(c), MOX_OK);
    assert_true(conf_read1(bufs[1], 999) == 6.0f);
    assert_true(conf_read1(bufs[2], 999) == 17.0f);
    for (int i = 0; i < 3; i++)
        mox_buffer_release(bufs[i]);
}

/* A writer after many unfinished readers waits for all of them (more
 * earlier submissions than a backend may track inline). */
static void writer_after_many_readers(void **state)
{
    (void)state;
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    enum { R = 9 };
    const uint32_t n = 3000;
    mox_buffer *x = conf_ramp(dev, n, 5.0f, 1.0f);
    mox_buffer *outs[R];
    mox_op *ops[R];
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    for (int r = 0; r < R; r++) {
        outs[r] = conf_zeros(dev, n);
        ops[r] = submit_now(conf_slow_copy(dev, conf_cfg(n), x, outs[r], n, 100));
    }
    mox_op *w = submit_now(conf_fill(dev, conf_cfg(n), x, 0.0f, n));
    mox_op *after = submit_now(conf_scale(dev, conf_cfg(n), x, outs[0], 1.0f, n)); /* after w */
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    for (int r = 1; r < R; r++) {
        assert_int_equal(conf_run(ops[r]), MOX_OK);
        float *v = conf_read(outs[r]);
        for (uint32_t i = 0; i < n; i++)
            assert_true(v[i] == (float)i + 5.0f);
        free(v);
        mox_buffer_release(outs[r]);
    }
    mox_op_drop(ops[0]);
    assert_int_equal(conf_run(w), MOX_OK);
    assert_int_equal(conf_run(after), MOX_OK);
    assert_true(conf_read1(outs[0], n - 1) == 0.0f);
    mox_buffer_release(outs[0]);
    mox_buffer_release(x);
}

/* A6: an op submitted while one it is ordered after is completing - its
 * end on the device seen, its op not resolved yet - still resolves after
 * that op. The hook runs in that window on the completing thread: it
 * submits the readback there, then gives the program up to 100 ms to see
 * the readback resolve first. (The CUDA backend once dropped a launch that
 * was completing from the order: a readback of its output then resolved
 * while the launch was still PENDING.) */
typedef struct window_ctx {
    mox_op *later;
    atomic_bool taken;
    atomic_int stage; /* 1: `later` submitted; 2: the program saw it resolve */
} window_ctx;

static void submit_in_window(void *p)
{
    window_ctx *w = p;
    if (atomic_exchange(&w->taken, true))
        return; /* another completion ran it first */
    (void)mox_op_poll(w->later, (mox_waker){NULL, NULL});
    atomic_store(&w->stage, 1);
    const struct timespec pause = {0, 500000};
    for (int i = 0; i < 200 && atomic_load(&w->stage) == 1; i++)
        nanosleep(&pause, NULL);
}

static void submitted_while_completing_resolves_after(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *in = conf_ramp(dev, n, 1.0f, 1.0f), *out = conf_zeros(dev, n);
    for (int round = 0; round < 3; round++) {
        window_ctx w = {.later = mox_buffer_readback(out)};
        atomic_init(&w.taken, false);
        atomic_init(&w.stage, 0);
        const mox__testing_hook hook = {submit_in_window, &w};
        mox_op *launch = conf_scale(dev, conf_cfg(n), in, out, (float)(round + 2), n);
        mox__testing_on_complete(&hook);
        (void)mox_op_poll(launch, (mox_waker){NULL, NULL});
        const struct timespec pause = {0, 100000};
        for (int i = 0; atomic_load(&w.stage) == 0; i++) {
            if (i == 100000) { /* 10 s */
                mox__testing_on_complete(NULL); /* `hook` is on this stack */
                fail_msg("round %d: the launch's completion never reached the core", round);
            }
            nanosleep(&pause, NULL);
        }
        mox__testing_on_complete(NULL);
        assert_int_equal(mox_op_wait(w.later), MOX_OK);
        atomic_store(&w.stage, 2);
        if (mox_op_poll(launch, (mox_waker){NULL, NULL}) != MOX_READY)
            fail_msg("round %d: the launch is PENDING after the readback of its output resolved",
                     round);
        const float *got = mox_result_bytes(mox_op_result(w.later), NULL);
        assert_true(got[0] == (float)(round + 2) && got[n - 1] == (float)(round + 2) * (float)n);
        assert_int_equal(mox_op_wait(launch), MOX_OK);
        mox_op_drop(w.later);
        mox_op_drop(launch);
    }
    mox_buffer_release(in);
    mox_buffer_release(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_yields_args),
        cmocka_unit_test(op_retains_its_buffers),
        cmocka_unit_test(ordered_across_submissions),
        cmocka_unit_test(batches_and_launches_interleave),
        cmocka_unit_test(writer_after_many_readers),
        cmocka_unit_test(submitted_while_completing_resolves_after),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
