/* fill_upload.c - the lazy buffer writes: mox_buffer_fill repeats one
 * element over a range (device work, gated like a copy: A9) and
 * mox_buffer_upload writes host bytes copied when the op is made (a host
 * transfer, never gated). Both are lazy (A1), dropped before submission
 * they write nothing (A8), they are ordered with kernels by the buffer's
 * accesses (A6) and yield {buffer} (A4). Element sizes cover each way the
 * CUDA backend fills: 1, 2 and 4-byte periods (cuMemsetD8/16/32) and the
 * fill kernel (8, 12 and 16-byte patterns, odd offsets, a gate). */
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

/* A buffer of n elements of `type` whose byte k is (k * 7 + 3) & 0xff. */
static mox_buffer *patterned(const mox_type *type, size_t n, unsigned char **bytes_out)
{
    size_t bytes = n * type->size;
    unsigned char *v = malloc(bytes ? bytes : 1);
    for (size_t k = 0; k < bytes; k++)
        v[k] = (unsigned char)(k * 7 + 3);
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create_from(dev, type, n, v, &b), MOX_OK);
    *bytes_out = v;
    return b;
}

/* Fills [first, first+count) of a patterned buffer with `value` and checks
 * every byte: the range holds value repeated, the rest is unchanged. */
static void check_fill(const mox_type *type, size_t n, size_t first, size_t count,
                       const void *value)
{
    unsigned char *want;
    mox_buffer *b = patterned(type, n, &want);
    size_t size = type->size;
    for (size_t i = first; i < first + count; i++)
        memcpy(want + i * size, value, size);
    mox_op *op = mox_buffer_fill(b, first, count, value);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    const mox_result *r = mox_op_result(op);
    assert_int_equal(mox_result_buffer_count(r), 1);
    assert_ptr_equal(mox_result_buffer(r, 0), b);
    mox_op_drop(op);
    unsigned char *got = malloc(n * size);
    assert_int_equal(mox_buffer_read(b, 0, n, got), MOX_OK);
    for (size_t k = 0; k < n * size; k++)
        if (got[k] != want[k])
            fail_msg("%s fill [%zu, +%zu): byte %zu is %u, want %u", type->name, first, count, k,
                     got[k], want[k]);
    free(got);
    free(want);
    mox_buffer_release(b);
}

static void fill_sets_the_range_for_every_element_size(void **state)
{
    (void)state;
    const uint8_t u8 = 0xA5;
    const uint16_t u16 = 0xBEEF, u16_same = 0x4141;
    /* 0x41414241: bytes 41 42 41 41, no 2-byte period though byte 2 repeats byte 0 */
    const uint32_t u32 = 0xDEADBEEF, u32_halves = 0x12341234, u32_near = 0x41414241;
    const float f32x2[2] = {1.5f, -2.25f};
    const float f32x3[3] = {3.0f, 4.0f, 5.0f};
    const uint32_t u32x4[4] = {1u, 2u, 3u, 4u}, u32x4_same[4] = {9u, 9u, 9u, 9u};
    check_fill(&mox_type_u8, 1001, 3, 997, &u8);
    check_fill(&mox_type_u16, 999, 1, 600, &u16);
    check_fill(&mox_type_u16, 999, 0, 999, &u16_same);
    check_fill(&mox_type_u32, 4096, 100, 3000, &u32);
    check_fill(&mox_type_u32, 50, 7, 1, &u32_halves);
    check_fill(&mox_type_u32, 64, 2, 60, &u32_near);
    check_fill(&mox_type_f32x2, 777, 1, 700, f32x2);
    check_fill(&mox_type_f32x3, 513, 5, 500, f32x3);
    check_fill(&mox_type_u32x4, 300, 0, 300, u32x4);
    check_fill(&mox_type_u32x4, 300, 3, 17, u32x4_same);
    /* More than one 1 MiB piece of the CPU backend, ending mid-period. */
    check_fill(&mox_type_f32x3, 200000, 1, 199998, f32x3);
}

static void fill_and_upload_are_lazy_and_dropping_writes_nothing(void **state)
{
    (void)state;
    const uint32_t n = 256;
    mox_buffer *b = conf_zeros(dev, n);
    float seven = 7.0f;
    float src[256];
    for (uint32_t i = 0; i < n; i++)
        src[i] = (float)i;
    uint64_t before = mox_device_submission_count(dev);
    mox_op *fill = mox_buffer_fill(b, 0, n, &seven);
    mox_op *up = mox_buffer_upload(b, 0, n, src);
    conf_nap(5);
    assert_int_equal(mox_device_submission_count(dev), before);
    mox_op_drop(fill);
    mox_op_drop(up);
    assert_int_equal(mox_device_submission_count(dev), before);
    assert_true(conf_read1(b, 0) == 0.0f && conf_read1(b, n - 1) == 0.0f);
    mox_buffer_release(b);
}

static void upload_copies_the_bytes_when_made(void **state)
{
    (void)state;
    const uint32_t n = 1000;
    mox_buffer *b = conf_ramp(dev, n, 0.0f, 1.0f);
    float *src = malloc(300 * sizeof *src);
    for (int i = 0; i < 300; i++)
        src[i] = -1.0f - (float)i;
    mox_op *up = mox_buffer_upload(b, 500, 300, src);
    for (int i = 0; i < 300; i++)
        src[i] = 12345.0f; /* too late: the op has its own copy */
    free(src);
    assert_int_equal(mox_op_wait(up), MOX_OK);
    assert_ptr_equal(mox_result_buffer(mox_op_result(up), 0), b);
    mox_op_drop(up);
    float *got = conf_read(b);
    for (uint32_t i = 0; i < n; i++) {
        float want = i >= 500 && i < 800 ? -1.0f - (float)(i - 500) : (float)i;
        if (got[i] != want)
            fail_msg("element %u is %g, want %g", i, (double)got[i], (double)want);
    }
    free(got);
    mox_buffer_release(b);
}

/* upload, kernel, fill, kernel, readback: submitted back to back, waited
 * only at the end; only the access order gives the expected values. */
static void ordered_with_kernels_by_accesses(void **state)
{
    (void)state;
    const uint32_t n = 3000;
    mox_buffer *a = conf_zeros(dev, n), *c = conf_zeros(dev, n);
    float *src = malloc(n * sizeof *src);
    for (uint32_t i = 0; i < n; i++)
        src[i] = (float)i;
    const float half = 0.5f;
    mox_op *ops[5] = {
        mox_buffer_upload(a, 0, n, src),
        conf_step(dev, conf_cfg(n), a, n),           /* a = 2i + 1 */
        mox_buffer_fill(a, 1000, 1000, &half),       /* a[1000..2000) = 0.5 */
        conf_scale(dev, conf_cfg(n), a, c, 2.0f, n), /* c = 2a */
        mox_buffer_readback(c),
    };
    free(src);
    for (int i = 0; i < 5; i++)
        (void)mox_op_poll(ops[i], no_waker);
    assert_int_equal(mox_op_wait(ops[4]), MOX_OK);
    size_t size = 0;
    const float *got = mox_result_bytes(mox_op_result(ops[4]), &size);
    assert_int_equal(size, n * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
        float want = i >= 1000 && i < 2000 ? 1.0f : 2.0f * (2.0f * (float)i + 1.0f);
        if (got[i] != want)
            fail_msg("element %u is %g, want %g", i, (double)got[i], (double)want);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(conf_run(ops[i]), MOX_OK);
    mox_op_drop(ops[4]);
    mox_buffer_release(a);
    mox_buffer_release(c);
}

/* Behind an unfinished writer that fails, a fill is gated (and gates its
 * readers); an upload, host access, is not. */
static void fill_is_gated_upload_is_not(void **state)
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
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *ops[5] = {
        conf_fail_if_negative(dev, conf_cfg(n), in, mid, n),
        mox_buffer_fill(mid, 0, n, &nine),
        conf_scale(dev, conf_cfg(n), mid, out, 2.0f, n),
        mox_buffer_upload(other, 0, n, v),
        mox_buffer_fill(other, 10, 10, &nine),
    };
    for (int i = 0; i < 5; i++)
        (void)mox_op_poll(ops[i], no_waker);
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    free(v);
    assert_int_equal(conf_drive(ops[0]), MOX_ERR_KERNEL_FAILED);
    const mox_error *orig = mox_result_error(mox_op_result(ops[0]));
    assert_int_equal(conf_drive(ops[1]), MOX_ERR_GATED);
    const mox_error *g = mox_result_error(mox_op_result(ops[1]));
    assert_ptr_equal(mox_error_cause(g), orig);
    assert_int_equal(mox_error_fail_code(g), 4);
    assert_non_null(strstr(mox_error_message(g), "the fill did not run"));
    assert_int_equal(conf_drive(ops[2]), MOX_ERR_GATED);
    assert_ptr_equal(mox_error_cause(mox_result_error(mox_op_result(ops[2]))), orig);
    assert_int_equal(conf_drive(ops[3]), MOX_OK);
    assert_int_equal(conf_drive(ops[4]), MOX_OK);
    for (int i = 0; i < 5; i++)
        mox_op_drop(ops[i]);
    /* The writer ran but for its failing element; the fill wrote nothing. */
    assert_true(conf_read1(mid, 1) == 2.0f);
    assert_true(conf_read1(mid, n / 2) == 0.0f);
    assert_true(conf_read1(out, 1) == 0.0f);
    assert_true(conf_read1(other, 9) == 9.0f && conf_read1(other, 10) == 9.0f);
    assert_true(conf_read1(other, 19) == 9.0f && conf_read1(other, 20) == 20.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
    mox_buffer_release(other);
}

/* A fill that needs the CUDA backend's fill kernel on a driver that
 * refuses its PTX (the simulated driver with MOX_SIM_PTX=refuse; other
 * backends and real drivers skip): the fill itself resolves with the
 * load's code, MOX_ERR_MODULE_LOAD, not as gated - no work it depends on
 * failed - and a copy of its buffer submitted behind it is gated with the
 * load's error, the original failure, as the cause. A fill a memset
 * writes still runs. */
static void fill_without_its_kernel_fails_with_module_load(void **state)
{
    (void)state;
    if (strncmp(mox_device_name(dev), "Simulated", 9) != 0)
        skip();
    setenv("MOX_SIM_PTX", "refuse", 1);
    mox_device *fresh = conf_open(); /* its kernels not loaded yet */
    mox_buffer *a = NULL, *c = NULL, *u = NULL;
    assert_int_equal(mox_buffer_create(fresh, &mox_type_f32x2, 64, &a), MOX_OK);
    assert_int_equal(mox_buffer_create(fresh, &mox_type_f32x2, 64, &c), MOX_OK);
    assert_int_equal(mox_buffer_create(fresh, &mox_type_u32, 64, &u), MOX_OK);
    const float pair[2] = {1.5f, -2.0f};
    assert_int_equal(mox__testing_hold(fresh, true), MOX_OK);
    mox_op *fill = mox_buffer_fill(a, 0, 64, pair);
    mox_op *copy = mox_buffer_copy(a, 0, c, 0, 64);
    (void)mox_op_poll(fill, no_waker);
    (void)mox_op_poll(copy, no_waker);
    assert_int_equal(mox__testing_hold(fresh, false), MOX_OK);
    assert_int_equal(mox_op_wait(fill), MOX_ERR_MODULE_LOAD);
    const mox_error *e = mox_result_error(mox_op_result(fill));
    assert_non_null(strstr(mox_error_message(e), "the fill did not run: cuModuleLoadData"));
    /* the copy's cause is the original failure: the load's error, the
     * fill's own cause */
    const mox_error *load = mox_error_cause(e);
    assert_int_equal(mox_error_code(load), MOX_ERR_MODULE_LOAD);
    assert_int_equal(mox_op_wait(copy), MOX_ERR_GATED);
    assert_ptr_equal(mox_error_cause(mox_result_error(mox_op_result(copy))), load);
    const uint32_t seven = 7;
    mox_op *memset_fill = mox_buffer_fill(u, 0, 64, &seven);
    assert_int_equal(mox_op_wait(memset_fill), MOX_OK);
    uint32_t got[64];
    assert_int_equal(mox_buffer_read(u, 0, 64, got), MOX_OK);
    assert_int_equal(got[0], 7);
    assert_int_equal(got[63], 7);
    mox_op_drop(fill);
    mox_op_drop(copy);
    mox_op_drop(memset_fill);
    mox_buffer_release(a);
    mox_buffer_release(c);
    mox_buffer_release(u);
    mox_device_release(fresh);
    unsetenv("MOX_SIM_PTX");
}

static void expect_refused(mox_op *op, mox_status code, const char *text)
{
    assert_int_equal(mox_op_wait(op), code);
    const char *msg = mox_error_message(mox_result_error(mox_op_result(op)));
    if (!strstr(msg, text))
        fail_msg("message '%s' lacks '%s'", msg, text);
    mox_op_drop(op);
}

static void bad_arguments_resolve_with_errors(void **state)
{
    (void)state;
    mox_buffer *b = conf_ramp(dev, 10, 1.0f, 1.0f);
    const float one = 1.0f;
    uint64_t before = mox_device_submission_count(dev);
    expect_refused(mox_buffer_fill(NULL, 0, 1, &one), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_fill: buffer is NULL");
    expect_refused(mox_buffer_fill(b, 0, 1, NULL), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_fill: value is NULL");
    expect_refused(mox_buffer_fill(b, 8, 3, &one), MOX_ERR_OUT_OF_RANGE,
                   "elements [8, 8+3) are outside the buffer of 10 elements");
    expect_refused(mox_buffer_fill(b, SIZE_MAX, 2, &one), MOX_ERR_OUT_OF_RANGE, "outside");
    expect_refused(mox_buffer_upload(NULL, 0, 1, &one), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_upload: buffer is NULL");
    expect_refused(mox_buffer_upload(b, 0, 1, NULL), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_upload: src is NULL");
    expect_refused(mox_buffer_upload(b, 11, 0, &one), MOX_ERR_OUT_OF_RANGE, "outside");
    /* An element of more than 128 bytes. */
    static const mox_type big = {"big", "[f32;33]", 132, 4};
    mox_buffer *large = NULL;
    assert_int_equal(mox_buffer_create(dev, &big, 4, &large), MOX_OK);
    float pattern[33] = {0};
    expect_refused(mox_buffer_fill(large, 0, 4, pattern), MOX_ERR_INVALID_ARGUMENT,
                   "elements of type 'big' are 132 bytes; a fill repeats elements of at most 128");
    /* The range first; then a fill of no element is OK whatever its size. */
    expect_refused(mox_buffer_fill(large, 3, 5, pattern), MOX_ERR_OUT_OF_RANGE, "outside");
    mox_op *none = mox_buffer_fill(large, 4, 0, pattern);
    assert_int_equal(mox_op_wait(none), MOX_OK);
    assert_ptr_equal(mox_result_buffer(mox_op_result(none), 0), large);
    mox_op_drop(none);
    mox_buffer_release(large);
    /* count 0: OK at once, yielding the buffer, NULL data allowed. */
    mox_op *ops[2] = {mox_buffer_fill(b, 10, 0, NULL), mox_buffer_upload(b, 3, 0, NULL)};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mox_op_poll(ops[i], no_waker), MOX_READY);
        assert_int_equal(mox_result_status(mox_op_result(ops[i])), MOX_OK);
        assert_ptr_equal(mox_result_buffer(mox_op_result(ops[i]), 0), b);
        mox_op_drop(ops[i]);
    }
    assert_int_equal(mox_device_submission_count(dev), before);
    /* Nothing was written. */
    float *got = conf_read(b);
    for (int i = 0; i < 10; i++)
        assert_true(got[i] == (float)(i + 1));
    free(got);
    mox_buffer_release(b);
}

/* The result's buffer chains into the next stage (A4, A7). */
static mox_status scale_filled(void *ctx, const mox_result *r, mox_op **next)
{
    mox_buffer *out = ctx;
    mox_buffer *b = mox_result_buffer(r, 0);
    uint32_t n = (uint32_t)mox_buffer_length(b);
    *next = conf_scale(dev, conf_cfg(n), b, out, 3.0f, n);
    return MOX_OK;
}

static void result_chains_with_then(void **state)
{
    (void)state;
    const uint32_t n = 500;
    mox_buffer *b = conf_zeros(dev, n), *out = conf_zeros(dev, n);
    const float two = 2.0f;
    mox_op *chain = NULL;
    assert_int_equal(mox_op_then(mox_buffer_fill(b, 0, n, &two), scale_filled, out, &chain), MOX_OK);
    assert_int_equal(conf_run(chain), MOX_OK);
    assert_true(conf_read1(out, 0) == 6.0f && conf_read1(out, n - 1) == 6.0f);
    mox_buffer_release(b);
    mox_buffer_release(out);
}

/* When an op resolves, every op it was ordered after (through a buffer)
 * has resolved too: a program that waits only for the last op of a chain
 * finds the earlier ones READY. (The core once raised an execution's
 * semaphore before publishing its op, so a dependent on another queue
 * could resolve first.) Many rounds, as the window was narrow. */
static void dependencies_resolve_before_their_dependents(void **state)
{
    (void)state;
    const uint32_t n = 64;
    mox_buffer *a = conf_zeros(dev, n), *c = conf_zeros(dev, n);
    float src[64];
    const float one = 1.0f;
    for (int round = 0; round < 400; round++) {
        for (uint32_t i = 0; i < n; i++)
            src[i] = (float)(round + (int)i);
        mox_op *ops[4] = {
            mox_buffer_upload(a, 0, n, src),
            mox_buffer_fill(c, 0, n / 2, &one),
            conf_scale(dev, conf_cfg(n), a, c, 2.0f, n / 2 + n / 4),
            mox_buffer_readback(c),
        };
        for (int i = 0; i < 4; i++)
            (void)mox_op_poll(ops[i], no_waker);
        assert_int_equal(mox_op_wait(ops[3]), MOX_OK);
        for (int i = 0; i < 3; i++)
            if (mox_op_poll(ops[i], no_waker) != MOX_READY)
                fail_msg("round %d: op %d is pending after the readback that follows it resolved",
                         round, i);
        const float *got = mox_result_bytes(mox_op_result(ops[3]), NULL);
        assert_true(got[0] == 2.0f * (float)round && got[n - 1] == 0.0f);
        for (int i = 0; i < 4; i++)
            mox_op_drop(ops[i]);
    }
    mox_buffer_release(a);
    mox_buffer_release(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_sets_the_range_for_every_element_size),
        cmocka_unit_test(fill_and_upload_are_lazy_and_dropping_writes_nothing),
        cmocka_unit_test(upload_copies_the_bytes_when_made),
        cmocka_unit_test(ordered_with_kernels_by_accesses),
        cmocka_unit_test(fill_is_gated_upload_is_not),
        cmocka_unit_test(fill_without_its_kernel_fails_with_module_load),
        cmocka_unit_test(bad_arguments_resolve_with_errors),
        cmocka_unit_test(result_chains_with_then),
        cmocka_unit_test(dependencies_resolve_before_their_dependents),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
