/* test_cuda_settings.c - the CUDA backend's settings are checked when a
 * device opens (src/cuda/cuda_settings.c): every documented value opens,
 * and a word that is not the setting's, a number with other characters, a
 * sign, or beyond the setting's range is MOX_ERR_CONFIG naming the
 * variable, its values and what it got (docs/errors.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

typedef struct bad_value {
    const char *var, *value, *message;
} bad_value;

static void bad_values_are_config_errors(void **state)
{
    (void)state;
    static const bad_value cases[] = {
        {"MOX_CUDA_LAUNCH", "graphs", "MOX_CUDA_LAUNCH must be graph or stream (got 'graphs')"},
        {"MOX_CUDA_SPIN_US", "abc", "MOX_CUDA_SPIN_US must be a number of microseconds (0 to 60000000), not 'abc'"},
        {"MOX_CUDA_SPIN_US", "-1", "MOX_CUDA_SPIN_US must be a number of microseconds"},
        {"MOX_CUDA_SPIN_US", "60000001", "MOX_CUDA_SPIN_US must be a number of microseconds"},
        {"MOX_CUDA_SPIN_US", "200us", "MOX_CUDA_SPIN_US must be a number of microseconds"},
        {"MOX_CUDA_POLL_NS", "1e3", "MOX_CUDA_POLL_NS must be a number of nanoseconds (0 to 1000000000), not '1e3'"},
        {"MOX_CUDA_NAP_US", "+5", "MOX_CUDA_NAP_US must be a number of microseconds (0 to 60000000), not '+5'"},
        {"MOX_CUDA_NAP_US", " 5", "MOX_CUDA_NAP_US must be a number of microseconds (0 to 60000000), not ' 5'"},
        {"MOX_CUDA_COALESCE", "off", "MOX_CUDA_COALESCE must be 0 or 1 (got 'off')"},
        {"MOX_CUDA_DEFER_DEPTH", "two", "MOX_CUDA_DEFER_DEPTH must be a number of launches (0 to 1000000), not 'two'"},
        {"MOX_CUDA_UPLOAD_NODE_KIB", "16385", "MOX_CUDA_UPLOAD_NODE_KIB must be a number of KiB (0 to 16384), not '16385'"},
        {"MOX_CUDA_UPLOAD_NODE_KIB", "1M", "MOX_CUDA_UPLOAD_NODE_KIB must be a number of KiB (0 to 16384), not '1M'"},
        {"MOX_CUDA_STATS", "yes", "MOX_CUDA_STATS must be 0 or 1 (got 'yes')"},
        {"MOX_CUDA_PDL", "on", "MOX_CUDA_PDL must be off, end or start (got 'on')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mox_error *err = fx_open_error(cases[i].var, cases[i].value);
        assert_non_null(err);
        assert_int_equal(mox_error_code(err), MOX_ERR_CONFIG);
        if (!strstr(mox_error_message(err), cases[i].message))
            fail_msg("%s=%s: got '%s'", cases[i].var, cases[i].value, mox_error_message(err));
        mox_error_release(err);
    }
}

static void documented_values_open(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"MOX_CUDA_LAUNCH", "graph"},   {"MOX_CUDA_LAUNCH", "stream"}, {"MOX_CUDA_LAUNCH", ""},
        {"MOX_CUDA_SPIN_US", "0"},      {"MOX_CUDA_SPIN_US", "60000000"}, {"MOX_CUDA_POLL_NS", "250"},
        {"MOX_CUDA_NAP_US", "1000"},    {"MOX_CUDA_COALESCE", "0"},    {"MOX_CUDA_COALESCE", "1"},
        {"MOX_CUDA_DEFER_DEPTH", "0"},  {"MOX_CUDA_DEFER_DEPTH", "4"}, {"MOX_CUDA_STATS", "0"},
        {"MOX_CUDA_STATS", "1"},        {"MOX_CUDA_EVENTS", "blocking"}, {"MOX_CUDA_PDL", "end"},
        {"MOX_CUDA_UPLOAD_NODE_KIB", "0"}, {"MOX_CUDA_UPLOAD_NODE_KIB", "16384"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mox_error *err = fx_open_error(cases[i][0], cases[i][1]);
        if (err)
            fail_msg("%s=%s: %s", cases[i][0], cases[i][1], mox_error_message(err));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_values_are_config_errors),
        cmocka_unit_test(documented_values_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
