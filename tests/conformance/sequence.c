/* sequence.c - rules A5, A6 within a batch: recording at construction, one
 * submission per batch, access order (read-after-write, write-after-read,
 * write-after-write), discarding on any recording error. */
#include <stdlib.h>
#include <string.h>

#include "support.h"

static mox_device *dev;

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

typedef struct chain_ctx {
    mox_buffer *buf;
    uint32_t n;
    int recorded;
} chain_ctx;

static mox_status record_three_steps(void *p, mox_batch *b)
{
    chain_ctx *c = p;
    c->recorded++;
    for (int i = 0; i < 3; i++) {
        mox_status st = mox_batch_push(b, conf_step(dev, conf_cfg(c->n), c->buf, c->n));
        if (st != MOX_OK)
            return st;
    }
    return MOX_OK;
}

static void chain_in_one_batch(void **state)
{
    (void)state;
    const uint32_t n = 100003;
    chain_ctx c = {conf_ramp(dev, n, 0.0f, 0.5f), n, 0};
    uint64_t subs = mox_device_submission_count(dev);
    mox_op *op = mox_sequence(dev, record_three_steps, &c);
    assert_int_equal(c.recorded, 1); /* recorded at construction */
    assert_int_equal(mox_device_submission_count(dev), subs);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    assert_int_equal(mox_device_submission_count(dev), subs + 1); /* one command buffer */
    assert_int_equal(mox_result_buffer_count(mox_op_result(op)), 0);
    mox_op_drop(op);
    float *v = conf_read(c.buf);
    for (uint32_t i = 0; i < n; i++) {
        float x = (float)i * 0.5f;
        float want = ((x * 2.0f + 1.0f) * 2.0f + 1.0f) * 2.0f + 1.0f;
        if (v[i] != want)
            fail_msg("i=%u: %g != %g", i, (double)v[i], (double)want);
    }
    free(v);
    mox_buffer_release(c.buf);
}

static void read_after_write_and_write_after_read(void **state)
{
    (void)state;
    const uint32_t n = 50000;
    mox_buffer *x = conf_ramp(dev, n, 1.0f, 1.0f);
    mox_buffer *y = conf_zeros(dev, n), *z = conf_zeros(dev, n);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    /* y = slow copy of x (reads x); then x is overwritten (must wait for
     * the read); then z = y + x (must see the copy and the new x). */
    assert_int_equal(mox_batch_push(b, conf_slow_copy(dev, conf_cfg(n), x, y, n, 500)), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(n), x, 10.0f, n)), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_add(dev, conf_cfg(n), y, x, z, n)), MOX_OK);
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_run(op), MOX_OK);
    float *vy = conf_read(y), *vz = conf_read(z), *vx = conf_read(x);
    for (uint32_t i = 0; i < n; i++) {
        assert_true(vy[i] == (float)i + 1.0f);
        assert_true(vx[i] == 10.0f);
        assert_true(vz[i] == (float)i + 11.0f);
    }
    free(vx);
    free(vy);
    free(vz);
    mox_buffer_release(x);
    mox_buffer_release(y);
    mox_buffer_release(z);
}

static void write_after_write(void **state)
{
    (void)state;
    const uint32_t n = 50000;
    mox_buffer *ones = conf_ramp(dev, n, 1.0f, 0.0f);
    mox_buffer *x = conf_zeros(dev, n);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_slow_copy(dev, conf_cfg(n), ones, x, n, 500)), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(n), x, 2.0f, n)), MOX_OK);
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_run(op), MOX_OK);
    float *v = conf_read(x);
    for (uint32_t i = 0; i < n; i++)
        assert_true(v[i] == 2.0f);
    free(v);
    mox_buffer_release(ones);
    mox_buffer_release(x);
}

static void independent_dispatches_all_run(void **state)
{
    (void)state;
    enum { K = 12 };
    mox_buffer *bufs[K];
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    for (int k = 0; k < K; k++) {
        bufs[k] = conf_zeros(dev, 300);
        assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(300), bufs[k], (float)k, 300)), MOX_OK);
    }
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_drive(op), MOX_OK);
    mox_op_drop(op);
    for (int k = 0; k < K; k++) {
        assert_true(conf_read1(bufs[k], 299) == (float)k);
        mox_buffer_release(bufs[k]);
    }
}

static void many_buffers_and_dispatches(void **state)
{
    (void)state;
    /* Enough distinct buffers and dispatches to leave the inline storage
     * and the linear buffer lookup behind. */
    enum { K = 70 };
    mox_buffer *bufs[K];
    for (int k = 0; k < K; k++)
        bufs[k] = conf_ramp(dev, 32, (float)k, 0.0f);
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    /* bufs[k] += bufs[k-1] for k = 1..K-1: a chain through every buffer. */
    for (int k = 1; k < K; k++)
        assert_int_equal(mox_batch_push(b, conf_add(dev, conf_cfg(32), bufs[k - 1], bufs[k], bufs[k], 32)),
                         MOX_OK);
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_run(op), MOX_OK);
    float want = 0.0f;
    for (int k = 0; k < K; k++) {
        want += (float)k;
        assert_true(conf_read1(bufs[k], 31) == want);
        mox_buffer_release(bufs[k]);
    }
}

typedef struct discard_ctx {
    mox_buffer *out;
    mox_status fail_with;
} discard_ctx;

static mox_status record_then_fail(void *p, mox_batch *b)
{
    discard_ctx *c = p;
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(8), c->out, 5.0f, 8)), MOX_OK);
    if (c->fail_with != MOX_OK)
        return c->fail_with;
    /* An invalid launch: its construction error poisons the batch. */
    mox_launch_config bad = {{1, 1, 1}, {0, 1, 1}, 0};
    mox_status st = mox_batch_push(b, conf_fill(dev, bad, c->out, 6.0f, 8));
    assert_int_equal(st, MOX_ERR_INVALID_LAUNCH);
    /* Later pushes are refused; the launch is consumed anyway. */
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(8), c->out, 7.0f, 8)), MOX_ERR_STATE);
    return st;
}

static void recording_error_discards_batch(void **state)
{
    (void)state;
    discard_ctx c = {conf_zeros(dev, 8), MOX_OK};
    uint64_t subs = mox_device_submission_count(dev);
    mox_op *op = mox_sequence(dev, record_then_fail, &c);
    assert_int_equal(mox_op_wait(op), MOX_ERR_INVALID_LAUNCH);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(op))), "fill"));
    mox_op_drop(op);
    c.fail_with = MOX_ERR_CALLBACK;
    op = mox_sequence(dev, record_then_fail, &c);
    assert_int_equal(mox_op_wait(op), MOX_ERR_CALLBACK);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(op))), "discarded"));
    mox_op_drop(op);
    assert_int_equal(mox_device_submission_count(dev), subs); /* nothing ran */
    assert_true(conf_read1(c.out, 0) == 0.0f);                   /* outputs unchanged */
    mox_buffer_release(c.out);
}

typedef struct misuse_ctx {
    mox_buffer *out;
    bool discard;             /* call mox_batch_discard instead of mox_batch_end */
    mox_status end_status;    /* what the misplaced call returned */
    mox_status push_after;    /* what a push after it returned */
} misuse_ctx;

static mox_status record_and_end_itself(void *ctx, mox_batch *b)
{
    misuse_ctx *c = ctx;
    mox_device *d = mox_buffer_device(c->out);
    assert_int_equal(mox_batch_push(b, conf_fill(d, conf_cfg(8), c->out, 5.0f, 8)), MOX_OK);
    if (c->discard) {
        mox_batch_discard(b);
        mox_error *e = mox_error_last();
        c->end_status = mox_error_code(e);
        mox_error_release(e);
    } else {
        mox_op *op = (mox_op *)&c; /* must be cleared */
        c->end_status = mox_batch_end(b, &op);
        assert_null(op);
    }
    c->push_after = mox_batch_push(b, conf_fill(d, conf_cfg(8), c->out, 6.0f, 8));
    return MOX_OK;
}

/* A record function that ends or discards the batch mox_sequence handed
 * it is refused (the batch is mox_sequence's to end): nothing runs and the
 * sequence resolves to MOX_ERR_INVALID_ARGUMENT. */
static void record_function_cannot_end_its_batch(void **state)
{
    (void)state;
    for (int discard = 0; discard <= 1; discard++) {
        misuse_ctx c = {conf_zeros(dev, 8), discard != 0, MOX_OK, MOX_OK};
        uint64_t subs = mox_device_submission_count(dev);
        mox_op *op = mox_sequence(dev, record_and_end_itself, &c);
        assert_int_equal(c.end_status, MOX_ERR_INVALID_ARGUMENT);
        assert_int_equal(c.push_after, MOX_ERR_STATE);
        assert_int_equal(mox_op_wait(op), MOX_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(op))),
                               "belongs to mox_sequence"));
        mox_op_drop(op);
        assert_int_equal(mox_device_submission_count(dev), subs);
        assert_true(conf_read1(c.out, 0) == 0.0f);
        mox_buffer_release(c.out);
    }
}

static void explicit_form_errors(void **state)
{
    (void)state;
    mox_device *other = conf_open();
    mox_buffer *a = conf_zeros(dev, 8), *o = conf_zeros(other, 8);
    mox_batch *b = NULL;

    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, mox_buffer_readback(a)), MOX_ERR_INVALID_ARGUMENT);
    mox_op *op = (mox_op *)1;
    assert_int_equal(mox_batch_end(b, &op), MOX_ERR_INVALID_ARGUMENT);
    assert_null(op);

    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fill(other, conf_cfg(8), o, 1.0f, 8)), MOX_ERR_DEVICE_MISMATCH);
    mox_batch_discard(b);

    /* A launch already polled is no longer a recordable launch. */
    mox_op *polled = conf_fill(dev, conf_cfg(8), a, 1.0f, 8);
    (void)mox_op_poll(polled, (mox_waker){NULL, NULL});
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, polled), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_batch_push(b, NULL), MOX_ERR_STATE);
    mox_batch_discard(b);

    /* Discarding throws pushed launches away: nothing runs. */
    uint64_t subs = mox_device_submission_count(dev);
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(8), a, 9.0f, 8)), MOX_OK);
    mox_batch_discard(b);
    mox_batch_discard(NULL);
    assert_int_equal(mox_batch_push(NULL, conf_fill(dev, conf_cfg(8), a, 9.0f, 8)), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_batch_begin(NULL, &b), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_batch_begin(dev, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_batch_end(NULL, &op), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    /* A NULL out consumes nothing: the batch stays open, keeps what was
     * pushed, and can be ended again (or discarded). */
    assert_int_equal(mox_batch_push(b, conf_fill(dev, conf_cfg(8), a, 5.0f, 8)), MOX_OK);
    assert_int_equal(mox_batch_end(b, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_batch_end: out is NULL"));
    assert_int_equal(mox_device_submission_count(dev), subs);
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_run(op), MOX_OK);
    assert_true(conf_read1(a, 0) == 5.0f);
    subs = mox_device_submission_count(dev);
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_end(b, NULL), MOX_ERR_INVALID_ARGUMENT);
    mox_batch_discard(b);
    assert_int_equal(mox_device_submission_count(dev), subs);

    mox_op *s = mox_sequence(NULL, record_three_steps, NULL);
    assert_int_equal(conf_run(s), MOX_ERR_INVALID_ARGUMENT);
    mox_buffer_release(a);
    mox_buffer_release(o);
    mox_device_release(other);
}

static mox_status record_nothing(void *p, mox_batch *b)
{
    mox_buffer *out = p;
    /* Only an empty-grid launch: validated, runs nothing. */
    return mox_batch_push(b, conf_fill(dev, conf_cfg(0), out, 1.0f, 0));
}

static void empty_batches_submit_nothing(void **state)
{
    (void)state;
    mox_buffer *a = conf_zeros(dev, 8);
    uint64_t subs = mox_device_submission_count(dev);
    assert_int_equal(conf_run(mox_sequence(dev, record_nothing, a)), MOX_OK);
    mox_batch *b = NULL;
    mox_op *op = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    assert_int_equal(conf_run(op), MOX_OK);
    assert_int_equal(mox_device_submission_count(dev), subs);
    mox_buffer_release(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_in_one_batch),
        cmocka_unit_test(read_after_write_and_write_after_read),
        cmocka_unit_test(write_after_write),
        cmocka_unit_test(independent_dispatches_all_run),
        cmocka_unit_test(many_buffers_and_dispatches),
        cmocka_unit_test(recording_error_discards_batch),
        cmocka_unit_test(record_function_cannot_end_its_batch),
        cmocka_unit_test(explicit_form_errors),
        cmocka_unit_test(empty_batches_submit_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
