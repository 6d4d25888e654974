/* errors.c - rule A10: status names, the thread-local last error, error
 * objects (refcounted, with kernel, fail code, cause), and "a function that
 * fails returns its code and never calls the user's callback". */
#include <string.h>

#include "support.h"

static void status_names(void **state)
{
    (void)state;
    assert_string_equal(mox_status_name(MOX_OK), "MOX_OK");
    assert_string_equal(mox_status_name(MOX_ERR_GATED), "MOX_ERR_GATED");
    assert_string_equal(mox_status_name(MOX_ERR_STATE), "MOX_ERR_STATE");
    for (int s = 0; s < MOX_STATUS_COUNT_; s++) {
        const char *n = mox_status_name((mox_status)s);
        assert_non_null(n);
        assert_true(strncmp(n, "MOX_", 4) == 0);
        assert_string_not_equal(n, "MOX_STATUS_UNKNOWN");
        for (int t = 0; t < s; t++)
            assert_string_not_equal(n, mox_status_name((mox_status)t));
    }
    assert_string_equal(mox_status_name(MOX_STATUS_COUNT_), "MOX_STATUS_UNKNOWN");
    assert_string_equal(mox_status_name((mox_status)-1), "MOX_STATUS_UNKNOWN");
}

static void *fail_on_other_thread(void *p)
{
    (void)p;
    mox_buffer *b;
    mox_buffer_create(NULL, &mox_type_f32, 1, &b); /* INVALID_ARGUMENT here only */
    return NULL;
}

static void last_error_is_per_thread(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, SIZE_MAX / 2, &b), MOX_ERR_LENGTH_OVERFLOW);
    mox_error *e = mox_error_last();
    assert_non_null(e);
    assert_int_equal(mox_error_code(e), MOX_ERR_LENGTH_OVERFLOW);
    assert_string_equal(mox_error_message(e), mox_error_last_message());
    assert_null(mox_error_kernel(e));
    assert_int_equal(mox_error_fail_code(e), 0);
    assert_null(mox_error_cause(e));
    pthread_t t;
    pthread_create(&t, NULL, fail_on_other_thread, NULL);
    pthread_join(t, NULL);
    mox_error *again = mox_error_last();
    assert_ptr_equal(again, e); /* untouched by the other thread's failure */
    mox_error_release(again);
    /* A later success does not clear it; a later failure replaces it. */
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, 4, &b), MOX_OK);
    again = mox_error_last();
    assert_ptr_equal(again, e);
    mox_error_release(again);
    assert_int_equal(mox_buffer_read(b, 5, 1, &(float){0}), MOX_ERR_OUT_OF_RANGE);
    mox_error *newer = mox_error_last();
    assert_int_equal(mox_error_code(newer), MOX_ERR_OUT_OF_RANGE);
    /* The old error stays valid while we hold it. */
    assert_int_equal(mox_error_code(e), MOX_ERR_LENGTH_OVERFLOW);
    mox_error_release(e);
    mox_error_release(newer);
    mox_error_release(NULL);
    assert_ptr_equal(mox_error_retain(NULL), NULL);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void null_safe_accessors(void **state)
{
    (void)state;
    assert_int_equal(mox_error_code(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_string_equal(mox_error_message(NULL), "");
    assert_null(mox_error_cause(NULL));
    assert_null(mox_error_kernel(NULL));
    assert_int_equal(mox_error_fail_code(NULL), 0);
    assert_int_equal(mox_result_status(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_null(mox_result_error(NULL));
    assert_int_equal(mox_result_buffer_count(NULL), 0);
    assert_null(mox_result_buffer(NULL, 0));
    assert_null(mox_result_bytes(NULL, NULL));
    assert_null(mox_result_value(NULL));
    assert_null(mox_result_retain(NULL));
    mox_result_release(NULL);
    assert_int_equal(mox_buffer_length(NULL), 0);
    assert_null(mox_buffer_type(NULL));
    assert_null(mox_buffer_device(NULL));
    assert_string_equal(mox_device_name(NULL), "");
    assert_int_equal(mox_device_event_fd(NULL), -1);
    assert_int_equal(mox_device_submission_count(NULL), 0);
}

static int called;
static mox_status count_then(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    (void)in;
    (void)next;
    called++;
    return MOX_OK;
}
static mox_status count_record(void *ctx, mox_batch *b)
{
    (void)ctx;
    (void)b;
    called++;
    return MOX_OK;
}

static void failing_calls_never_call_back(void **state)
{
    (void)state;
    called = 0;
    mox_op *out = NULL;
    assert_int_equal(mox_op_then(NULL, count_then, NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    mox_op *s = mox_sequence(NULL, count_record, NULL);
    assert_int_equal(conf_run(s), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(called, 0);
    assert_non_null(strstr(mox_error_last_message(), "mox_op_then"));
}

static void types(void **state)
{
    (void)state;
    assert_true(mox_type_equal(&mox_type_f32, &mox_type_f32));
    assert_false(mox_type_equal(&mox_type_f32, &mox_type_u32));
    mox_type alias = {"float", "f32", 4, 4};
    assert_true(mox_type_equal(&alias, &mox_type_f32));
    assert_false(mox_type_equal(NULL, &mox_type_f32));
    assert_false(mox_type_equal(NULL, NULL));
    assert_string_equal(mox_type_f16.signature, "f16");
    assert_int_equal(mox_type_i8.size, 1);
    assert_int_equal(mox_type_u16.align, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_names),
        cmocka_unit_test(last_error_is_per_thread),
        cmocka_unit_test(null_safe_accessors),
        cmocka_unit_test(failing_calls_never_call_back),
        cmocka_unit_test(types),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
