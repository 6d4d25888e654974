/* fiber_stack_setting.c - MOX_CPU_FIBER_STACK is checked when a CPU device
 * opens: a size below 16 KiB, a sign, or another suffix than K or M is
 * MOX_ERR_CONFIG naming the value (docs/errors.md); sizes it accepts open. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/mox.h>

static mox_status open_with_stack(const char *value)
{
    setenv("MOX_CPU_FIBER_STACK", value, 1);
    mox_device_options opts;
    memset(&opts, 0, sizeof opts);
    opts.backend = MOX_BACKEND_CPU;
    mox_device *dev = NULL;
    mox_status st = mox_device_open_with(&opts, &dev);
    unsetenv("MOX_CPU_FIBER_STACK");
    if (dev)
        mox_device_release(dev);
    return st;
}

static void bad_sizes_are_config_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"12k", "64Q", "-65536", "+65536", " 65536", "lots", "1M2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(open_with_stack(bad[i]), MOX_ERR_CONFIG);
        char want[128];
        snprintf(want, sizeof want, "not '%s'", bad[i]);
        assert_non_null(strstr(mox_error_last_message(),
                               "MOX_CPU_FIBER_STACK must be a number of bytes (at least 16384, "
                               "optional K or M suffix)"));
        assert_non_null(strstr(mox_error_last_message(), want));
    }
}

static void accepted_sizes_open(void **state)
{
    (void)state;
    assert_int_equal(open_with_stack("128K"), MOX_OK);
    assert_int_equal(open_with_stack("1M"), MOX_OK);
    assert_int_equal(open_with_stack("16384"), MOX_OK);
    assert_int_equal(open_with_stack(""), MOX_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_sizes_are_config_errors),
        cmocka_unit_test(accepted_sizes_open),
    };
    return cmocka_run_group_tests_name("cpu_fiber_stack_setting", tests, NULL, NULL);
}
