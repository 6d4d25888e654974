/* tests/cuda/test_cuda_loader.c - the driver loader and the CUresult -> mox
 * error conversion, without a GPU: a missing library, a library that lacks a
 * symbol, and a fake driver that loads but has no device. Runs everywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_internal.h"

static void missing_library_is_reported(void **state)
{
    (void)state;
    mox__cuda_api api;
    char why[512];
    assert_int_equal(mox__cuda_api_load("/nonexistent/libcuda.so.1", &api, why, sizeof why), -1);
    assert_non_null(strstr(why, "/nonexistent/libcuda.so.1"));
    assert_null(api.cuInit);
}

static void library_name_follows_environment(void **state)
{
    (void)state;
    setenv("MOX_CUDA_LIBRARY", "/nonexistent.so", 1);
    assert_string_equal(mox__cuda_library_name(), "/nonexistent.so");
    unsetenv("MOX_CUDA_LIBRARY");
    assert_string_equal(mox__cuda_library_name(), "libcuda.so.1");
}

static void missing_symbol_is_reported(void **state)
{
    (void)state;
    mox__cuda_api api;
    char why[512];
    assert_int_equal(mox__cuda_api_load(FAKE_PARTIAL_PATH, &api, why, sizeof why), -1);
    /* The second entry of the table is the first one the fake lacks. */
    assert_non_null(strstr(why, "lacks cuGetErrorString"));
}

static void fake_driver_loads_every_symbol(void **state)
{
    (void)state;
    mox__cuda_api api;
    char why[512] = "";
    assert_int_equal(mox__cuda_api_load(FAKE_CUDA_PATH, &api, why, sizeof why), 0);
    assert_int_equal(api.driver_version, 13000);
#define CHECK_LOADED(field, symbol, ret, params) assert_non_null(api.field);
    MOX__CUDA_SYMBOLS(CHECK_LOADED)
#undef CHECK_LOADED
    int count = -1;
    assert_int_equal(api.cuDeviceGetCount(&count), CUDA_SUCCESS);
    assert_int_equal(count, 0);
    /* Everything else answers NOT_SUPPORTED in the fake. */
    CUdeviceptr p = 0;
    assert_int_equal(api.cuMemAlloc(&p, 16), CUDA_ERROR_NOT_SUPPORTED);
}

static void error_conversion_keeps_call_and_name(void **state)
{
    (void)state;
    mox__cuda_api api;
    char why[512];
    assert_int_equal(mox__cuda_api_load(FAKE_CUDA_PATH, &api, why, sizeof why), 0);
    assert_int_equal(mox__cuda_fail(&api, CUDA_ERROR_ILLEGAL_ADDRESS, "cuLaunchKernel", "(kernel k)"),
                     MOX_ERR_DEVICE_LOST);
    assert_string_equal(mox__cuda_last_message(),
                        "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                        "encountered) (kernel k)");
    assert_int_equal(mox__cuda_fail(&api, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", NULL),
                     MOX_ERR_ALLOCATION_FAILED);
    assert_non_null(strstr(mox__cuda_last_message(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY"));
    /* A code the driver cannot name keeps its number. */
    assert_int_equal(mox__cuda_fail(&api, 12345, "cuGraphLaunch", NULL), MOX_ERR_BACKEND);
    assert_string_equal(mox__cuda_last_message(), "cuGraphLaunch: CUDA_ERROR_12345");
    assert_string_equal(mox__cuda_error_name(NULL, 77), "CUDA_ERROR_77");
}

static void status_mapping(void **state)
{
    (void)state;
    assert_int_equal(mox__cuda_status_of(CUDA_SUCCESS), MOX_OK);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_OUT_OF_MEMORY), MOX_ERR_ALLOCATION_FAILED);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_NO_DEVICE), MOX_ERR_DEVICE_UNAVAILABLE);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_INSUFFICIENT_DRIVER), MOX_ERR_DEVICE_UNAVAILABLE);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_NO_BINARY_FOR_GPU), MOX_ERR_MODULE_LOAD);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_INVALID_IMAGE), MOX_ERR_MODULE_LOAD);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_NOT_FOUND), MOX_ERR_KERNEL_NOT_FOUND);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), MOX_ERR_INVALID_LAUNCH);
    assert_int_equal(mox__cuda_status_of(CUDA_ERROR_INVALID_VALUE), MOX_ERR_BACKEND);
    static const CUresult sticky[] = {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_INSTRUCTION,
                                      CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_LAUNCH_FAILED,
                                      CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ECC_UNCORRECTABLE};
    for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++) {
        assert_true(mox__cuda_error_is_sticky(sticky[i]));
        assert_int_equal(mox__cuda_status_of(sticky[i]), MOX_ERR_DEVICE_LOST);
    }
    assert_false(mox__cuda_error_is_sticky(CUDA_ERROR_NOT_READY));
    assert_false(mox__cuda_error_is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
}

/* The process-wide table honours MOX_CUDA_LIBRARY: with a missing library
 * the device is unavailable and says why. ctest also runs this program with
 * MOX_CUDA_LIBRARY set to the fake driver, which loads but has no device.
 * Must run before anything else in this process loads the table (cmocka
 * runs tests in order; it is first). */
static void unavailable_driver_gives_device_unavailable(void **state)
{
    (void)state;
    const char *preset = getenv("MOX_CUDA_LIBRARY");
    bool fake = preset && strstr(preset, "fake") != NULL;
    if (!fake)
        setenv("MOX_CUDA_LIBRARY", "/nonexistent.so", 1);
    mox__cuda_dev *dev = NULL;
    assert_int_equal(mox__cuda_dev_open(0, &dev), MOX_ERR_DEVICE_UNAVAILABLE);
    assert_null(dev);
    const char *why = NULL;
    if (fake) {
        assert_non_null(strstr(mox__cuda_last_message(), "no CUDA device 0 (0 found)"));
        assert_non_null(mox__cuda_api_get(&why));
    } else {
        assert_non_null(strstr(mox__cuda_last_message(), "/nonexistent.so"));
        assert_null(mox__cuda_api_get(&why));
        assert_non_null(strstr(why, "/nonexistent.so"));
        unsetenv("MOX_CUDA_LIBRARY");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unavailable_driver_gives_device_unavailable),
        cmocka_unit_test(missing_library_is_reported),
        cmocka_unit_test(library_name_follows_environment),
        cmocka_unit_test(missing_symbol_is_reported),
        cmocka_unit_test(fake_driver_loads_every_symbol),
        cmocka_unit_test(error_conversion_keeps_call_and_name),
        cmocka_unit_test(status_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
