/* buffers.c - buffers: zeroed creation, initial data, limits checked before
 * allocating, host read/write ranges, the readback op (A4), and host access
 * ordered after pending work (A6). */
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

static void created_zeroed(void **state)
{
    (void)state;
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_u32, 1000, &b), MOX_OK);
    assert_int_equal(mox_buffer_length(b), 1000);
    assert_ptr_equal(mox_buffer_type(b), &mox_type_u32);
    assert_ptr_equal(mox_buffer_device(b), dev);
    uint32_t v[1000];
    memset(v, 0xAB, sizeof v);
    assert_int_equal(mox_buffer_read(b, 0, 1000, v), MOX_OK);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], 0);
    assert_ptr_equal(mox_buffer_retain(b), b);
    mox_buffer_release(b);
    mox_buffer_release(b);
    mox_buffer_release(NULL);
}

static void create_from_and_ranges(void **state)
{
    (void)state;
    float src[10];
    for (int i = 0; i < 10; i++)
        src[i] = (float)i * 1.5f;
    mox_buffer *b = conf_buffer(dev, src, 10);
    float got[10] = {0};
    assert_int_equal(mox_buffer_read(b, 2, 5, got), MOX_OK);
    for (int i = 0; i < 5; i++)
        assert_true(got[i] == src[i + 2]);
    float w[3] = {-1.0f, -2.0f, -3.0f};
    assert_int_equal(mox_buffer_write(b, 7, 3, w), MOX_OK);
    assert_true(conf_read1(b, 9) == -3.0f);
    assert_true(conf_read1(b, 6) == src[6]);
    /* Ranges outside the buffer, including overflowing ones. */
    assert_int_equal(mox_buffer_read(b, 8, 3, got), MOX_ERR_OUT_OF_RANGE);
    assert_non_null(strstr(mox_error_last_message(), "outside the buffer"));
    assert_int_equal(mox_buffer_write(b, 11, 0, w), MOX_ERR_OUT_OF_RANGE);
    assert_int_equal(mox_buffer_read(b, SIZE_MAX, 2, got), MOX_ERR_OUT_OF_RANGE);
    assert_int_equal(mox_buffer_read(b, 10, 0, got), MOX_OK);
    assert_int_equal(mox_buffer_read(NULL, 0, 1, got), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_buffer_read(b, 0, 1, NULL), MOX_ERR_INVALID_ARGUMENT);
    mox_buffer_release(b);
}

static void invalid_creation_arguments(void **state)
{
    (void)state;
    mox_buffer *b = (mox_buffer *)1;
    assert_int_equal(mox_buffer_create(NULL, &mox_type_f32, 1, &b), MOX_ERR_INVALID_ARGUMENT);
    assert_null(b);
    assert_int_equal(mox_buffer_create(dev, NULL, 1, &b), MOX_ERR_INVALID_ARGUMENT);
    mox_type zero = {"z", "z", 0, 1};
    assert_int_equal(mox_buffer_create(dev, &zero, 1, &b), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, 1, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_buffer_create_from(dev, &mox_type_f32, 4, NULL, &b), MOX_ERR_INVALID_ARGUMENT);
}

/* A descriptor whose size or alignment is not what its signature lays out
 * (docs/abi.md), or whose signature does not parse, is no type: refused,
 * saying what is wrong, before anything is allocated. */
static void inconsistent_types_are_refused(void **state)
{
    (void)state;
    static const struct {
        mox_type t;
        const char *message;
    } bad[] = {
        {{"f32", "f32", 1, 1},
         "mox_buffer_create: element type 'f32': its size is 1 bytes, but its signature f32 has size 4 (docs/abi.md)"},
        {{"Pair", "Pair{x@0:u32,y@4:u8}", 2, 4},
         "mox_buffer_create: element type 'Pair': its size is 2 bytes, but its signature Pair{x@0:u32,y@4:u8} has "
         "size 8 (docs/abi.md)"},
        {{"Pair", "Pair{x@0:u32,y@4:u8}", 8, 8},
         "element type 'Pair': its alignment is 8, but its signature Pair{x@0:u32,y@4:u8} has alignment 4"},
        {{"Pair", "Pair{x@0:u32,y@2:u8}", 8, 4},
         "element type 'Pair': 'Pair{x@0:u32,y@2:u8}' is not a type signature (a field at offset 2 where the "
         "layout rules place it at 4 at character 14; docs/abi.md)"},
        {{"Junk", "not a signature", 4, 4},
         "element type 'Junk': 'not a signature' is not a type signature (an unknown scalar type at character 1"},
        {{"z", "z", 0, 1}, "element type 'z': 'z' is not a type signature"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mox_buffer *b = (mox_buffer *)1;
        assert_int_equal(mox_buffer_create(dev, &bad[i].t, 4, &b), MOX_ERR_INVALID_ARGUMENT);
        assert_null(b);
        if (!strstr(mox_error_last_message(), bad[i].message))
            fail_msg("message '%s' lacks '%s'", mox_error_last_message(), bad[i].message);
    }
    uint32_t data[2] = {1, 2};
    mox_buffer *b = (mox_buffer *)1;
    assert_int_equal(mox_buffer_create_from(dev, &bad[0].t, 2, data, &b), MOX_ERR_INVALID_ARGUMENT);
    assert_null(b);
    /* A consistent record type, and an alias of f32, are types. */
    static const mox_type pair = {"Pair", "Pair{x@0:u32,y@4:u8}", 8, 4}, alias = {"float", "f32", 4, 4};
    assert_int_equal(mox_buffer_create(dev, &pair, 4, &b), MOX_OK);
    assert_int_equal(mox_buffer_length(b), 4);
    mox_buffer_release(b);
    assert_int_equal(mox_buffer_create(dev, &alias, 4, &b), MOX_OK);
    mox_buffer_release(b);
}

static void overflow_and_limit_checked_first(void **state)
{
    (void)state;
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, SIZE_MAX / 2, &b), MOX_ERR_LENGTH_OVERFLOW);
    assert_null(b);
    assert_non_null(strstr(mox_error_last_message(), "overflows"));
    /* A 1 TiB element type: one element already exceeds any device. */
    mox_type huge = {"Huge", "[u8;4294967295]", 0xFFFFFFFFu, 1};
    uint64_t limit = mox_device_max_buffer_bytes(dev);
    size_t n = (size_t)(limit / huge.size) + 1;
    assert_int_equal(mox_buffer_create(dev, &huge, n, &b), MOX_ERR_BUFFER_TOO_LARGE);
    assert_non_null(strstr(mox_error_last_message(), "exceeds the device limit"));
    size_t f32s = (size_t)(limit / 4) + 1;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, f32s, &b), MOX_ERR_BUFFER_TOO_LARGE);
    /* The data pointer is not read when the size is rejected. */
    assert_int_equal(mox_buffer_create_from(dev, &mox_type_f32, f32s, (void *)16, &b),
                     MOX_ERR_BUFFER_TOO_LARGE);
}

static void zero_length_buffers(void **state)
{
    (void)state;
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, 0, &b), MOX_OK);
    assert_int_equal(mox_buffer_length(b), 0);
    assert_int_equal(mox_buffer_read(b, 0, 0, NULL), MOX_OK);
    mox_op *rb = mox_buffer_readback(b);
    assert_int_equal(mox_op_wait(rb), MOX_OK);
    size_t size = 99;
    mox_result_bytes(mox_op_result(rb), &size);
    assert_int_equal(size, 0);
    mox_op_drop(rb);
    /* A kernel may take it: an empty grid runs nothing. */
    assert_int_equal(conf_run(conf_fill(dev, conf_cfg(0), b, 1.0f, 0)), MOX_OK);
    mox_buffer_release(b);
}

static void readback_op_is_lazy_and_ordered(void **state)
{
    (void)state;
    const uint32_t n = 5000;
    mox_buffer *b = conf_zeros(dev, n);
    mox_op *fill = conf_fill(dev, conf_cfg(n), b, 4.5f, n);
    mox_op *rb = mox_buffer_readback(b);
    uint64_t subs = mox_device_submission_count(dev);
    /* The fill is submitted (the module is prepared: one poll submits) and
     * dropped before the readback is polled: the readback must still see
     * its result. */
    (void)mox_op_poll(fill, (mox_waker){NULL, NULL});
    assert_int_equal(mox_device_submission_count(dev), subs + 1);
    mox_op_drop(fill);
    assert_int_equal(mox_op_wait(rb), MOX_OK);
    assert_int_equal(mox_device_submission_count(dev), subs + 2);
    size_t size = 0;
    const float *v = mox_result_bytes(mox_op_result(rb), &size);
    assert_int_equal(size, n * sizeof(float));
    for (uint32_t i = 0; i < n; i++)
        assert_true(v[i] == 4.5f);
    /* The result outlives the op when retained. */
    const mox_result *r = mox_result_retain(mox_op_result(rb));
    mox_op_drop(rb);
    assert_true(((const float *)mox_result_bytes(r, NULL))[n - 1] == 4.5f);
    assert_null(mox_result_value(r));
    assert_int_equal(mox_result_buffer_count(r), 0);
    mox_result_release(r);
    mox_buffer_release(b);
}

static void readback_of_null_fails(void **state)
{
    (void)state;
    mox_op *op = mox_buffer_readback(NULL);
    assert_non_null(op);
    assert_int_equal(mox_op_wait(op), MOX_ERR_INVALID_ARGUMENT);
    mox_op_drop(op);
}

static void host_write_waits_for_readers(void **state)
{
    (void)state;
    /* A launch reads `in`; a host write to `in` right after must not change
     * what the launch read. */
    const uint32_t n = 20000;
    mox_buffer *in = conf_ramp(dev, n, 0.0f, 1.0f);
    mox_buffer *out = conf_zeros(dev, n);
    mox_op *op = conf_slow_copy(dev, conf_cfg(n), in, out, n, 2000);
    uint64_t subs = mox_device_submission_count(dev);
    (void)mox_op_poll(op, (mox_waker){NULL, NULL});
    assert_int_equal(mox_device_submission_count(dev), subs + 1);
    float *junk = calloc(n, sizeof *junk);
    assert_int_equal(mox_buffer_write(in, 0, n, junk), MOX_OK);
    free(junk);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_op_drop(op);
    float *v = conf_read(out);
    for (uint32_t i = 0; i < n; i++)
        assert_true(v[i] == (float)i);
    free(v);
    mox_buffer_release(in);
    mox_buffer_release(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(created_zeroed),
        cmocka_unit_test(create_from_and_ranges),
        cmocka_unit_test(invalid_creation_arguments),
        cmocka_unit_test(inconsistent_types_are_refused),
        cmocka_unit_test(overflow_and_limit_checked_first),
        cmocka_unit_test(zero_length_buffers),
        cmocka_unit_test(readback_op_is_lazy_and_ordered),
        cmocka_unit_test(readback_of_null_fails),
        cmocka_unit_test(host_write_waits_for_readers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
