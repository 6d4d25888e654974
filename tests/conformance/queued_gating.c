/* queued_gating.c - rules A9 and A3 together: a batch that waits in the
 * admission queue (its device's command capacity is full) while an earlier
 * writer of what it reads runs and fails was submitted before that writer
 * finished, so it is gated, whatever waits in the queue ahead of it and
 * however long it waits: it is prepared only once a slot frees, after the
 * writer finished, but it still takes the writer's gate. A writer that had
 * finished before the batch's first poll gates nothing (gating.c,
 * finished_failures_do_not_gate). */
#include <stdlib.h>

#include "core/testing.h"
#include "support.h"

#define N 64u

static mox_device *dev;
static const mox_waker no_waker = {NULL, NULL};

static int setup(void **state)
{
    (void)state;
    mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = 1, .cpu_threads = 0};
    dev = conf_open_with(&o);
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(dev);
    return 0;
}

/* in[] = 0, 1, 2, ... with one negative element: fail_if_negative fails. */
static mox_buffer *poisoned_input(void)
{
    float v[N];
    for (uint32_t i = 0; i < N; i++)
        v[i] = (float)i;
    v[N / 2] = -3.0f;
    return conf_buffer(dev, v, N);
}

static void assert_all(mox_buffer *b, float want)
{
    float *v = conf_read(b);
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != want)
            fail_msg("element %u is %g, want %g", i, (double)v[i], (double)want);
    free(v);
}

/* What waits in the queue between the failing writer F of x and the reader. */
typedef enum { AHEAD_NONE, AHEAD_UNRELATED, AHEAD_READER, AHEAD_READBACK, AHEAD_TWO } ahead_kind;

typedef struct bufs {
    mox_buffer *in, *x, *y, *z, *w;
} bufs;

static mox_status record_fill_then_read(void *ctx, mox_batch *b)
{
    bufs *k = ctx;
    mox_status st = mox_batch_push(b, conf_fill(dev, conf_cfg(N), k->w, 5.0f, N));
    return st ? st : mox_batch_push(b, conf_scale(dev, conf_cfg(N), k->x, k->z, 2.0f, N));
}

static void queued_reader_is_gated(ahead_kind ahead, bool as_sequence)
{
    bufs k = {poisoned_input(), conf_zeros(dev, N), conf_zeros(dev, N), conf_zeros(dev, N), conf_zeros(dev, N)};
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *f = conf_fail_if_negative(dev, conf_cfg(N), k.in, k.x, N);
    assert_int_equal(mox_op_poll(f, no_waker), MOX_PENDING); /* in flight, held: the one slot */
    mox_op *g = NULL, *g2 = NULL;
    if (ahead == AHEAD_UNRELATED || ahead == AHEAD_TWO)
        g = conf_fill(dev, conf_cfg(N), k.y, 1.0f, N);
    else if (ahead == AHEAD_READER)
        g = conf_scale(dev, conf_cfg(N), k.x, k.y, 1.0f, N);
    else if (ahead == AHEAD_READBACK)
        g = mox_buffer_readback(k.x);
    if (ahead == AHEAD_TWO)
        g2 = conf_scale(dev, conf_cfg(N), k.x, k.y, 1.0f, N);
    if (g)
        assert_int_equal(mox_op_poll(g, no_waker), MOX_PENDING);
    if (g2)
        assert_int_equal(mox_op_poll(g2, no_waker), MOX_PENDING);
    mox_op *h = as_sequence ? mox_sequence(dev, record_fill_then_read, &k)
                            : conf_scale(dev, conf_cfg(N), k.x, k.z, 2.0f, N);
    assert_int_equal(mox_op_poll(h, no_waker), MOX_PENDING);
    assert_int_equal(mox__testing_in_flight(dev), 1); /* the others wait in the queue */
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);

    assert_int_equal(conf_run(f), MOX_ERR_KERNEL_FAILED);
    if (g)
        assert_int_equal(conf_run(g), ahead == AHEAD_READER ? MOX_ERR_GATED : MOX_OK);
    if (g2)
        assert_int_equal(conf_run(g2), MOX_ERR_GATED);
    assert_int_equal(mox_op_wait(h), MOX_ERR_GATED);
    const mox_error *e = mox_result_error(mox_op_result(h));
    assert_string_equal(mox_error_kernel(e), "scale");
    assert_int_equal(mox_error_fail_code(mox_error_cause(e)), 3);
    mox_op_drop(h);
    assert_all(k.z, 0.0f); /* the gated reader wrote nothing */
    if (as_sequence)
        assert_all(k.w, 5.0f); /* its independent dispatch ran */
    mox_buffer *all[] = {k.in, k.x, k.y, k.z, k.w};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mox_buffer_release(all[i]);
}

static void head_of_the_queue(void **state)
{
    (void)state;
    queued_reader_is_gated(AHEAD_NONE, false);
    queued_reader_is_gated(AHEAD_NONE, true);
}

static void behind_an_unrelated_batch(void **state)
{
    (void)state;
    queued_reader_is_gated(AHEAD_UNRELATED, false);
    queued_reader_is_gated(AHEAD_UNRELATED, true);
}

static void behind_another_reader(void **state)
{
    (void)state;
    queued_reader_is_gated(AHEAD_READER, false);
    queued_reader_is_gated(AHEAD_READER, true);
}

static void behind_a_readback(void **state)
{
    (void)state;
    queued_reader_is_gated(AHEAD_READBACK, false);
}

/* Two batches ahead, the second a reader: the reader that grows the
 * buffer's reader list keeps the finished writer for the ones behind. */
static void behind_two_batches(void **state)
{
    (void)state;
    queued_reader_is_gated(AHEAD_TWO, false);
    queued_reader_is_gated(AHEAD_TWO, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(head_of_the_queue),
        cmocka_unit_test(behind_an_unrelated_batch),
        cmocka_unit_test(behind_another_reader),
        cmocka_unit_test(behind_a_readback),
        cmocka_unit_test(behind_two_batches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
