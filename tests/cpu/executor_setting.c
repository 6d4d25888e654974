/* executor_setting.c - MOX_CPU_EXECUTOR: a value other than "fibers" (or
 * unset) makes opening a CPU device fail with MOX_ERR_CONFIG and a message
 * naming the value. ctest runs it with MOX_CPU_EXECUTOR=sideways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include <mox/mox.h>

static void bad_setting_is_a_config_error(void **state) {
    (void)state;
    mox_device_options opts;
    memset(&opts, 0, sizeof opts);
    opts.backend = MOX_BACKEND_CPU;
    mox_device *dev = NULL;
    assert_int_equal(mox_device_open_with(&opts, &dev), MOX_ERR_CONFIG);
    assert_null(dev);
    assert_non_null(strstr(mox_error_last_message(), "MOX_CPU_EXECUTOR must be 'fibers' (or unset), not 'sideways'"));
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(bad_setting_is_a_config_error)};
    return cmocka_run_group_tests_name("cpu_executor_setting", tests, NULL, NULL);
}
