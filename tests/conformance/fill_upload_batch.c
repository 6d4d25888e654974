/* fill_upload_batch.c - fills, uploads and copies pushed into a batch
 * (docs/async.md, "Filling and uploading"): mox_batch_push takes an
 * unpolled mox_buffer_fill, mox_buffer_upload or mox_buffer_copy within
 * one device like a launch, orders it with the batch's launches by the
 * buffers' accesses (A6), gates a fill or copy behind an in-batch failure
 * it depends on and never an upload (A9), and a batch dropped or
 * discarded runs none of it (A8). Refusals poison the batch. */
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

static mox_batch *begin(void)
{
    mox_batch *b = NULL;
    assert_int_equal(mox_batch_begin(dev, &b), MOX_OK);
    return b;
}

static mox_op *end(mox_batch *b)
{
    mox_op *op = NULL;
    assert_int_equal(mox_batch_end(b, &op), MOX_OK);
    return op;
}

static void expect_floats(mox_buffer *buf, uint32_t n, float (*want)(uint32_t, float), float k)
{
    float *got = conf_read(buf);
    for (uint32_t i = 0; i < n; i++)
        if (got[i] != want(i, k))
            fail_msg("element %u is %g, want %g (round value %g)", i, (double)got[i],
                     (double)want(i, k), (double)k);
    free(got);
}

/* a: upload i * k, step (2a + 1), fill [1000, 2000) with k, then
 * c = 2 * (copy of a into b). */
static float want_a(uint32_t i, float k)
{
    return i >= 1000 && i < 2000 ? k : 2.0f * ((float)i * k) + 1.0f;
}
static float want_c(uint32_t i, float k) { return 2.0f * want_a(i, k); }

/* Every kind of command in one batch, ordered by its accesses alone, the
 * upload's bytes copied when it was made (the source is overwritten before
 * the push). Three rounds of the same recording with other values: the
 * later rounds follow the recording memo (record_memo.c). */
static void batch_orders_fills_uploads_and_copies(void **state)
{
    (void)state;
    const uint32_t n = 3000;
    mox_buffer *a = conf_zeros(dev, n), *b = conf_zeros(dev, n), *c = conf_zeros(dev, n);
    float *src = malloc(n * sizeof *src);
    for (int round = 1; round <= 3; round++) {
        const float k = (float)round;
        for (uint32_t i = 0; i < n; i++)
            src[i] = (float)i * k;
        mox_op *up = mox_buffer_upload(a, 0, n, src);
        memset(src, 0xff, n * sizeof *src); /* the op holds its own copy */
        mox_batch *batch = begin();
        assert_int_equal(mox_batch_push(batch, up), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_step(dev, conf_cfg(n), a, n)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_fill(a, 1000, 1000, &k)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_copy(a, 0, b, 0, n)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(n), b, c, 2.0f, n)), MOX_OK);
        mox_op *op = end(batch);
        assert_int_equal(conf_run(op), MOX_OK);
        expect_floats(a, n, want_a, k);
        expect_floats(b, n, want_a, k);
        expect_floats(c, n, want_c, k);
    }
    free(src);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_buffer_release(c);
}

/* Gating follows the data inside a batch too: a fill after a failing
 * writer of its buffer is gated and gates its reader; an upload is host
 * access, never gated, so the fill after it on another buffer runs. */
static void batch_gates_fills_behind_a_failure_not_uploads(void **state)
{
    (void)state;
    const uint32_t n = 2000;
    float *v = malloc(n * sizeof *v);
    for (uint32_t i = 0; i < n; i++)
        v[i] = (float)i;
    v[n / 2] = -4.0f;
    mox_buffer *in = conf_buffer(dev, v, n);
    mox_buffer *mid = conf_zeros(dev, n), *out = conf_zeros(dev, n), *other = conf_zeros(dev, n);
    const float nine = 9.0f;
    mox_batch *batch = begin();
    assert_int_equal(mox_batch_push(batch, conf_fail_if_negative(dev, conf_cfg(n), in, mid, n)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_fill(mid, 0, n, &nine)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(n), mid, out, 2.0f, n)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_upload(other, 0, n, v)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_fill(other, 10, 10, &nine)), MOX_OK);
    free(v);
    mox_op *op = end(batch);
    assert_int_equal(mox_op_wait(op), MOX_ERR_KERNEL_FAILED);
    assert_int_equal(mox_error_fail_code(mox_result_error(mox_op_result(op))), 4);
    mox_op_drop(op);
    assert_true(conf_read1(mid, 1) == 2.0f); /* the writer ran but for its failing element */
    assert_true(conf_read1(mid, n / 2) == 0.0f);
    assert_true(conf_read1(out, 1) == 0.0f); /* the fill's reader was gated too */
    assert_true(conf_read1(other, 9) == 9.0f && conf_read1(other, 10) == 9.0f);
    assert_true(conf_read1(other, 19) == 9.0f && conf_read1(other, 20) == 20.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_buffer_release(other);
}

/* Batches of kernels, fills and copies alone (no host transfer), the same
 * shape four times: on CUDA the first goes on the stream and loads the
 * backend's copy and fill kernels, the later ones are graphs whose copy
 * and fill nodes run them (docs/cuda-backend.md). Offsets inside both
 * buffers, more than one block of the commands' launch shape. */
static void repeated_batches_of_kernels_fills_and_copies(void **state)
{
    (void)state;
    const uint32_t n = 5000, shift = 100;
    mox_buffer *a = conf_zeros(dev, n), *b = conf_zeros(dev, n), *c = conf_zeros(dev, n);
    for (int round = 1; round <= 4; round++) {
        const float k = (float)round, minus = -(float)round;
        mox_batch *batch = begin();
        assert_int_equal(mox_batch_push(batch, mox_buffer_fill(a, 0, n, &k)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_step(dev, conf_cfg(n), a, n)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_copy(a, 0, b, shift, n - shift)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_fill(b, 0, shift, &minus)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(n), b, c, 2.0f, n)), MOX_OK);
        assert_int_equal(conf_run(end(batch)), MOX_OK);
        float *got = conf_read(c);
        for (uint32_t i = 0; i < n; i++) {
            float want = 2.0f * (i < shift ? minus : 2.0f * k + 1.0f);
            if (got[i] != want)
                fail_msg("round %d: c[%u] = %g, want %g", round, i, (double)got[i], (double)want);
        }
        free(got);
    }
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_buffer_release(c);
}

/* Fills of every element size the CUDA fill kernel handles differently,
 * batch after batch of one shape (on CUDA the first batch on the stream,
 * the later ones graphs whose fill nodes run the backend's fill kernel,
 * docs/cuda-backend.md): 1 and 2-byte patterns (repeated into words), 4,
 * 12, 16, 20 and 128-byte ones; ranges starting 16-byte aligned with a
 * tail that is no whole 16 bytes, and ranges at odd offsets (word or byte
 * stores). Every byte of each buffer is checked, each round with other
 * pattern bytes, so a stale or misplaced store is seen. */
static void fill_pattern(unsigned char *v, uint32_t size, int round)
{
    for (uint32_t j = 0; j < size; j++)
        v[j] = (unsigned char)(round * 31 + (int)j * 7 + 1);
}

static void repeated_batches_fill_every_element_size(void **state)
{
    (void)state;
    static const mox_type rec20 = {"rec20", "[u32;5]", 20, 4};
    static const mox_type rec128 = {"rec128", "[u32;32]", 128, 4};
    const mox_type *types[] = {&mox_type_u8,    &mox_type_u16,    &mox_type_u32, &mox_type_f32x3,
                               &mox_type_u32x4, &rec20, &rec128};
    enum { TYPES = sizeof types / sizeof *types, N = 3000 };
    /* [first, first + count): aligned start with a tail, odd offset, aligned again */
    static const uint32_t first[3] = {0, 1003, 2048}, count[3] = {1001, 997, 950};
    mox_buffer *buf[TYPES];
    unsigned char *want[TYPES];
    for (int t = 0; t < TYPES; t++) {
        want[t] = calloc(N, types[t]->size);
        assert_int_equal(mox_buffer_create(dev, types[t], N, &buf[t]), MOX_OK);
    }
    mox_buffer *f = conf_zeros(dev, N);
    for (int round = 1; round <= 3; round++) {
        unsigned char value[TYPES][3][128];
        mox_batch *batch = begin();
        assert_int_equal(mox_batch_push(batch, conf_step(dev, conf_cfg(N), f, N)), MOX_OK);
        for (int t = 0; t < TYPES; t++) {
            uint32_t size = types[t]->size;
            for (int r = 0; r < 3; r++) {
                fill_pattern(value[t][r], size, round * 3 + r);
                for (uint32_t i = first[r]; i < first[r] + count[r]; i++)
                    memcpy(want[t] + (size_t)i * size, value[t][r], size);
                assert_int_equal(mox_batch_push(batch, mox_buffer_fill(buf[t], first[r], count[r],
                                                                       value[t][r])),
                                 MOX_OK);
            }
        }
        assert_int_equal(conf_run(end(batch)), MOX_OK);
        for (int t = 0; t < TYPES; t++) {
            size_t bytes = (size_t)N * types[t]->size;
            unsigned char *got = malloc(bytes);
            assert_int_equal(mox_buffer_read(buf[t], 0, N, got), MOX_OK);
            for (size_t k = 0; k < bytes; k++)
                if (got[k] != want[t][k])
                    fail_msg("round %d, %s: byte %zu (element %zu) is %u, want %u", round,
                             types[t]->name, k, k / types[t]->size, got[k], want[t][k]);
            free(got);
        }
    }
    for (int t = 0; t < TYPES; t++) {
        mox_buffer_release(buf[t]);
        free(want[t]);
    }
    mox_buffer_release(f);
}

/* The same gating, batch after batch of one shape (graphs on CUDA from the
 * second): the fill behind the failing kernel and its reader are gated
 * every time, the independent fill runs every time. */
static void repeated_batches_gate_their_fills(void **state)
{
    (void)state;
    const uint32_t n = 2000;
    float *v = malloc(n * sizeof *v);
    for (uint32_t i = 0; i < n; i++)
        v[i] = (float)i;
    v[7] = -3.0f;
    mox_buffer *in = conf_buffer(dev, v, n);
    free(v);
    mox_buffer *mid = conf_zeros(dev, n), *out = conf_zeros(dev, n), *other = conf_zeros(dev, n);
    for (int round = 1; round <= 3; round++) {
        const float k = (float)round, nine = 9.0f;
        mox_batch *batch = begin();
        assert_int_equal(mox_batch_push(batch, conf_fail_if_negative(dev, conf_cfg(n), in, mid, n)),
                         MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_fill(mid, 0, n, &nine)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(n), mid, out, 2.0f, n)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_fill(other, 10, 10, &k)), MOX_OK);
        mox_op *op = end(batch);
        assert_int_equal(mox_op_wait(op), MOX_ERR_KERNEL_FAILED);
        assert_int_equal(mox_error_fail_code(mox_result_error(mox_op_result(op))), 3);
        mox_op_drop(op);
        assert_true(conf_read1(mid, 1) == 2.0f && conf_read1(mid, 7) == 0.0f);
        assert_true(conf_read1(out, 1) == 0.0f);
        assert_true(conf_read1(other, 10) == k && conf_read1(other, 19) == k);
        assert_true(conf_read1(other, 9) == 0.0f && conf_read1(other, 20) == 0.0f);
    }
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_buffer_release(other);
}

/* Uploads pipelined with the kernels that read them: each round uploads
 * new values into the same buffers, steps them in place and scales them
 * into the round's own output, and all rounds are submitted before any
 * is waited for. An upload's bytes are copied when it is made (on CUDA
 * into pinned memory the device reads in place: a graph node among
 * kernels up to MOX_CUDA_UPLOAD_NODE_KIB, a copy on the stream above);
 * one small and one large upload per round (the latter past the default
 * 256 KiB). Every element of every round's outputs is checked. */
static void pipelined_uploads_feed_their_kernels(void **state)
{
    (void)state;
    enum { ROUNDS = 6 };
    const uint32_t small = 3000, large = 70000;
    mox_buffer *a = conf_zeros(dev, small), *b = conf_zeros(dev, large);
    mox_buffer *out_a[ROUNDS], *out_b[ROUNDS];
    mox_op *ops[ROUNDS];
    float *src = malloc(large * sizeof *src);
    for (int r = 0; r < ROUNDS; r++) {
        out_a[r] = conf_zeros(dev, small);
        out_b[r] = conf_zeros(dev, large);
        for (uint32_t i = 0; i < large; i++)
            src[i] = (float)(i % 977) + (float)r;
        mox_batch *batch = begin();
        assert_int_equal(mox_batch_push(batch, mox_buffer_upload(a, 0, small, src)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, mox_buffer_upload(b, 0, large, src)), MOX_OK);
        memset(src, 0xff, large * sizeof *src); /* the uploads hold their own copies */
        assert_int_equal(mox_batch_push(batch, conf_step(dev, conf_cfg(small), a, small)), MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(small), a, out_a[r], 2.0f, small)),
                         MOX_OK);
        assert_int_equal(mox_batch_push(batch, conf_scale(dev, conf_cfg(large), b, out_b[r], 3.0f, large)),
                         MOX_OK);
        ops[r] = end(batch);
        (void)mox_op_poll(ops[r], (mox_waker){NULL, NULL});
    }
    for (int r = 0; r < ROUNDS; r++) {
        assert_int_equal(conf_run(ops[r]), MOX_OK);
        float *ga = conf_read(out_a[r]), *gb = conf_read(out_b[r]);
        for (uint32_t i = 0; i < large; i++) {
            float v = (float)(i % 977) + (float)r;
            if (i < small && ga[i] != 2.0f * (2.0f * v + 1.0f))
                fail_msg("round %d: out_a[%u] = %g, want %g", r, i, (double)ga[i],
                         (double)(2.0f * (2.0f * v + 1.0f)));
            if (gb[i] != 3.0f * v)
                fail_msg("round %d: out_b[%u] = %g, want %g", r, i, (double)gb[i], (double)(3.0f * v));
        }
        free(ga);
        free(gb);
        mox_buffer_release(out_a[r]);
        mox_buffer_release(out_b[r]);
    }
    free(src);
    mox_buffer_release(a);
    mox_buffer_release(b);
}

/* A batch discarded, or ended and dropped before its first poll, writes
 * nothing; the upload's bytes go with it (ASan: no leak). */
static void dropped_batches_write_nothing(void **state)
{
    (void)state;
    const uint32_t n = 500;
    mox_buffer *a = conf_zeros(dev, n);
    const float one = 1.0f;
    float src[500];
    for (uint32_t i = 0; i < n; i++)
        src[i] = 5.0f;
    mox_batch *batch = begin();
    assert_int_equal(mox_batch_push(batch, mox_buffer_upload(a, 0, n, src)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_fill(a, 0, 10, &one)), MOX_OK);
    mox_batch_discard(batch);
    batch = begin();
    assert_int_equal(mox_batch_push(batch, mox_buffer_upload(a, 0, n, src)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_fill(a, 0, 10, &one)), MOX_OK);
    mox_op_drop(end(batch));
    float *got = conf_read(a);
    for (uint32_t i = 0; i < n; i++)
        assert_true(got[i] == 0.0f);
    free(got);
    mox_buffer_release(a);
}

static void expect_push_refused(mox_op *op, mox_status code, const char *text)
{
    mox_batch *batch = begin();
    assert_int_equal(mox_batch_push(batch, op), code);
    assert_non_null(strstr(mox_error_last_message(), text));
    mox_op *out = (mox_op *)1;
    assert_int_equal(mox_batch_end(batch, &out), code); /* poisoned: nothing runs */
    assert_null(out);
}

/* What a batch does not take: a readback, an op already polled, a batch's
 * own op, another device's fill. Commands of 0 elements go through the
 * same device checks, then are taken as nothing (also once waited). */
static void batch_refuses_other_ops(void **state)
{
    (void)state;
    const uint32_t n = 64;
    mox_buffer *a = conf_zeros(dev, n), *b = conf_zeros(dev, n);
    const float two = 2.0f;
    const char *not_taken = "not an op a batch takes";
    expect_push_refused(mox_buffer_readback(a), MOX_ERR_INVALID_ARGUMENT, not_taken);
    mox_op *polled = mox_buffer_fill(a, 0, n, &two);
    assert_int_equal(mox_op_wait(polled), MOX_OK);
    expect_push_refused(polled, MOX_ERR_INVALID_ARGUMENT, not_taken);
    mox_batch *inner = begin();
    assert_int_equal(mox_batch_push(inner, mox_buffer_fill(b, 0, n, &two)), MOX_OK);
    expect_push_refused(end(inner), MOX_ERR_INVALID_ARGUMENT, not_taken);
    assert_true(conf_read1(b, 0) == 0.0f); /* the refused batch's fill never ran */
    expect_push_refused(mox_buffer_fill(a, n, 1, &two), MOX_ERR_OUT_OF_RANGE, "outside the buffer");
    mox_device *other = conf_open();
    mox_buffer *o = conf_zeros(other, n);
    expect_push_refused(mox_buffer_fill(o, 0, n, &two), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    /* A copy belongs to its destination's device: checked before whether
     * the batch takes it, which it does not from another device. */
    expect_push_refused(mox_buffer_copy(a, 0, o, 0, n), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    expect_push_refused(mox_buffer_copy(o, 0, a, 0, n), MOX_ERR_INVALID_ARGUMENT, not_taken);
    /* The same for ops of 0 elements (as for empty-grid launches): the
     * device first (a copy's: its destination's), then a copy across
     * devices; only then does one of 0 elements add nothing. */
    expect_push_refused(mox_buffer_fill(o, 0, 0, &two), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    expect_push_refused(mox_buffer_upload(o, 0, 0, &two), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    expect_push_refused(mox_buffer_copy(o, 0, o, 1, 0), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    expect_push_refused(mox_buffer_copy(a, 0, o, 0, 0), MOX_ERR_DEVICE_MISMATCH,
                        "belongs to another device");
    expect_push_refused(mox_buffer_copy(o, 0, a, 0, 0), MOX_ERR_INVALID_ARGUMENT, not_taken);
    mox_buffer_release(o);
    mox_device_release(other);
    mox_batch *batch = begin();
    assert_int_equal(mox_batch_push(batch, mox_buffer_fill(a, 0, 0, NULL)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_upload(a, 5, 0, NULL)), MOX_OK);
    assert_int_equal(mox_batch_push(batch, mox_buffer_copy(a, 0, b, 0, 0)), MOX_OK);
    mox_op *waited = mox_buffer_fill(b, 3, 0, &two); /* resolved when made: waiting changes nothing */
    assert_int_equal(mox_op_wait(waited), MOX_OK);
    assert_int_equal(mox_batch_push(batch, waited), MOX_OK);
    assert_int_equal(conf_run(end(batch)), MOX_OK);
    assert_true(conf_read1(a, 0) == 2.0f && conf_read1(b, 0) == 0.0f);
    mox_buffer_release(a);
    mox_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_orders_fills_uploads_and_copies),
        cmocka_unit_test(batch_gates_fills_behind_a_failure_not_uploads),
        cmocka_unit_test(repeated_batches_of_kernels_fills_and_copies),
        cmocka_unit_test(repeated_batches_fill_every_element_size),
        cmocka_unit_test(repeated_batches_gate_their_fills),
        cmocka_unit_test(pipelined_uploads_feed_their_kernels),
        cmocka_unit_test(dropped_batches_write_nothing),
        cmocka_unit_test(batch_refuses_other_ops),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
