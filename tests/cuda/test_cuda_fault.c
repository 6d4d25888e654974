/* tests/cuda/test_cuda_fault.c - a sticky fault (illegal address) completes
 * every submission in flight with MOX_ERR_DEVICE_LOST instead of hanging,
 * also those held back for coalescing; later submissions complete with it
 * at once; a device opened afresh works. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static void spin_sub(fx_sub *s, fx *f, CUdeviceptr p, uint32_t cycles)
{
    fx_spin_sub(s, f, p, 0, cycles);
}

static void sticky_fault_loses_the_device(void **state)
{
    (void)state;
    fx F;
    fx_open(&F);
    CUdeviceptr p = fx_alloc(&F, 1024);
    enum { BEHIND = 6 };
    fx_sub first, bad, behind[BEHIND];
    /* A long clean launch, the faulting one behind it on the same stream,
     * then more behind that (some of which wait in the pending list). */
    spin_sub(&first, &F, p, 20u * 1000u * 1000u);
    fx_submit(&F, &first);
    fx_sub_init(&bad);
    fx_kernel(&bad, &F, FX_FAULT, 1, 32);
    fx_ptr(&bad, p);
    fx_u32(&bad, 0);
    fx_after(&bad, &first);
    fx_submit(&F, &bad);
    for (int i = 0; i < BEHIND; i++) {
        spin_sub(&behind[i], &F, p, 1000);
        fx_after(&behind[i], i ? &behind[i - 1] : &bad);
        fx_submit(&F, &behind[i]);
    }
    fx_wait(&first);
    fx_wait(&bad);
    for (int i = 0; i < BEHIND; i++) {
        fx_wait(&behind[i]);
        assert_int_equal(behind[i].status, MOX_ERR_DEVICE_LOST);
    }
    assert_int_equal(bad.status, MOX_ERR_DEVICE_LOST);
    assert_int_equal(fx_state(&bad, 0), MOX_DISPATCH_GATED);
    assert_non_null(strstr(bad.message, "CUDA_ERROR_ILLEGAL_ADDRESS"));
    assert_true(atomic_load(&F.dev->lost));
    /* Anything new completes with it too, from the backend's thread. */
    fx_sub late;
    spin_sub(&late, &F, p, 1000);
    fx_submit(&F, &late);
    fx_wait(&late);
    assert_int_equal(late.status, MOX_ERR_DEVICE_LOST);
    fx_free(&F, p);
    fx_close(&F);

    /* Reopened: the faulted primary context is reset, so this is a fresh
     * one. Should a driver refuse any new context in this process, the open
     * must say so (DEVICE_LOST), never hand out a dead device. */
    mox__backend *probe = NULL;
    mox__backend_info info;
    mox__backend_config cfg = {.context_id = 2, .ordinal = -1};
    mox_error *err = mox__cuda_backend_open(&cfg, &probe, &info);
    if (err) {
        assert_int_equal(mox_error_code(err), MOX_ERR_DEVICE_LOST);
        assert_non_null(strstr(mox_error_message(err), "keeps this process's device lost"));
        print_message("reopen refused by the driver: %s\n", mox_error_message(err));
        mox_error_release(err);
        skip();
    }
    probe->vt->destroy(probe);
    fx G;
    fx_open(&G);
    CUdeviceptr q = fx_alloc(&G, 1024);
    fx_sub ok;
    spin_sub(&ok, &G, q, 1000);
    fx_submit(&G, &ok);
    fx_wait(&ok);
    assert_int_equal(ok.status, MOX_OK);
    float got = -1.0f;
    fx_get(&G, &got, q, sizeof got);
    assert_true(got == 1.0f);
    assert_false(atomic_load(&G.dev->lost));
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
