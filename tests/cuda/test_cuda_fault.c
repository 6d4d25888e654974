/* tests/cuda/test_cuda_fault.c - a sticky fault (illegal address) fails
 * every submission in flight with MOX_ERR_DEVICE_LOST instead of hanging,
 * later submissions fail at once, the device reports it, and a device
 * opened afresh works. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static void sticky_fault_loses_the_device(void **state)
{
    (void)state;
    fx F;
    fx_open(&F);
    CUdeviceptr p = fx_alloc(&F, 1024);
    /* A long clean batch first, then the faulting one behind it. */
    fx_disp d1[1];
    fx_set(&d1[0], F.spin, 1, 32);
    fx_ptr(&d1[0], p);
    fx_u32(&d1[0], 0);
    fx_u32(&d1[0], 20u * 1000u * 1000u);
    fx_disp d2[1];
    fx_set(&d2[0], F.fault, 1, 32);
    fx_ptr(&d2[0], p);
    fx_u32(&d2[0], 0);
    fx_wait w1, w2;
    mox__cuda_sub *s1 = NULL;
    assert_int_equal(fx_submit(&F, d1, 1, NULL, 0, &w1, &s1), MOX_OK);
    assert_int_equal(fx_submit(&F, d2, 1, &s1, 1, &w2, NULL), MOX_OK);
    fx_wait_for(&w2);
    fx_wait_for(&w1);
    assert_int_equal(w2.status, MOX_ERR_DEVICE_LOST);
    assert_int_equal(atomic_load(&F.dev->health), MOX_ERR_DEVICE_LOST);
    assert_non_null(strstr(F.dev->lost_message, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    /* Nothing new is accepted. */
    fx_wait w3;
    assert_int_equal(fx_submit(&F, d1, 1, NULL, 0, &w3, NULL), MOX_ERR_DEVICE_LOST);
    assert_non_null(strstr(mox__cuda_last_message(), "CUDA device lost"));
    mox__cuda_sub_release(s1);
    fx_free(&F, p);
    fx_close(&F);

    /* Reopened (the primary context was released, so it is a fresh one). */
    fx G;
    fx_open(&G);
    CUdeviceptr q = fx_alloc(&G, 1024);
    float zero = 0.0f, got = -1.0f;
    fx_upload(&G, q, &zero, sizeof zero);
    fx_disp d[1];
    fx_set(&d[0], G.spin, 1, 32);
    fx_ptr(&d[0], q);
    fx_u32(&d[0], 0);
    fx_u32(&d[0], 1000);
    fx_wait w;
    assert_int_equal(fx_submit(&G, d, 1, NULL, 0, &w, NULL), MOX_OK);
    fx_wait_for(&w);
    assert_int_equal(w.status, MOX_OK);
    fx_download(&G, &got, q, sizeof got);
    assert_true(got == 1.0f);
    assert_int_equal(atomic_load(&G.dev->health), MOX_OK);
    fx_free(&G, q);
    fx_close(&G);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sticky_fault_loses_the_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
