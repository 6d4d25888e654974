/* tests/cuda/test_cuda_gating.c - failure gating on the device (backend
 * only): mox_fail marks its dispatch FAILED with its code and the host flag;
 * dependents in the batch are GATED and do not run, independent ones run; a
 * clean batch is recognised without reading the status words; a later batch
 * that depends on a failed dispatch of a batch still running is gated on the
 * device, and so is one whose writer failed before it was submitted; an
 * instance that saw a failure is reset before it runs again. Exits 77
 * without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static fx F;
static CUdeviceptr a, b, c;

static unsigned long long stat(atomic_ullong *x)
{
    return atomic_load(x);
}

static void put(CUdeviceptr p, float v)
{
    fx_upload(&F, p, &v, sizeof v);
}

static float get(CUdeviceptr p)
{
    float v;
    fx_download(&F, &v, p, sizeof v);
    return v;
}

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    a = fx_alloc(&F, 256 * 4);
    b = fx_alloc(&F, 256 * 4);
    c = fx_alloc(&F, 256 * 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, a);
    fx_free(&F, b);
    fx_free(&F, c);
    fx_close(&F);
    return 0;
}

/* [0] maybe_fail(a, code, spin)  [1] finish(a -> b) after 0  [2] finish(c -> c) */
static void fail_batch(fx_disp d[3], uint32_t code, uint32_t spin)
{
    fx_set(&d[0], F.maybe_fail, 1, 64);
    fx_ptr(&d[0], a);
    fx_u32(&d[0], code);
    fx_u32(&d[0], spin);
    fx_set(&d[1], F.finish, 1, 64);
    fx_ptr(&d[1], a);
    fx_ptr(&d[1], b);
    fx_u32(&d[1], 1);
    fx_dep(&d[1], 0);
    fx_set(&d[2], F.finish, 1, 64);
    fx_ptr(&d[2], c);
    fx_ptr(&d[2], c);
    fx_u32(&d[2], 1);
}

static void failure_gates_dependents_in_the_batch(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(b, -1.0f);
    put(c, 10.0f);
    fx_disp d[3];
    fail_batch(d, 7, 0);
    unsigned long long reads0 = stat(&F.dev->stats.status_reads);
    fx_wait w;
    assert_int_equal(fx_submit(&F, d, 3, NULL, 0, &w, NULL), MOX_OK);
    fx_wait_for(&w);
    assert_int_equal(w.status, MOX_OK);
    assert_int_equal(w.states[0], MOX_DISPATCH_FAILED);
    assert_int_equal(w.codes[0], 7);
    assert_int_equal(w.states[1], MOX_DISPATCH_GATED);
    assert_int_equal(w.states[2], MOX_DISPATCH_OK);
    assert_true(get(b) == -1.0f); /* the gated dispatch did not run */
    assert_true(get(c) == 11.0f); /* the independent one did */
    assert_int_equal(stat(&F.dev->stats.status_reads), reads0 + 1);
}

static void clean_batch_needs_one_host_load(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(c, 0.0f);
    fx_disp d[3];
    fail_batch(d, 0, 0);
    unsigned long long reads0 = stat(&F.dev->stats.status_reads);
    unsigned long long resets0 = stat(&F.dev->stats.resets);
    fx_wait w;
    assert_int_equal(fx_submit(&F, d, 3, NULL, 0, &w, NULL), MOX_OK);
    fx_wait_for(&w);
    assert_int_equal(w.status, MOX_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(w.states[i], MOX_DISPATCH_OK);
    assert_true(get(a) == 1.0f);
    assert_true(get(b) == 2.0f);
    assert_int_equal(stat(&F.dev->stats.status_reads), reads0);
    /* The previous test left this plan's instance dirty: it was reset once
     * before running clean. */
    assert_int_equal(stat(&F.dev->stats.resets), resets0 + 1);
}

static void later_batch_is_gated_by_a_running_failure(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(b, -1.0f);
    /* Batch 1: one dispatch that spins ~20 ms, then fails. */
    fx_disp d1[1];
    fx_set(&d1[0], F.maybe_fail, 1, 32);
    fx_ptr(&d1[0], a);
    fx_u32(&d1[0], 9);
    fx_u32(&d1[0], 40u * 1000u * 1000u);
    fx_wait w1, w2;
    mox__cuda_sub *s1 = NULL;
    assert_int_equal(fx_submit(&F, d1, 1, NULL, 0, &w1, &s1), MOX_OK);
    /* Batch 2 reads a: gated on the device through batch 1's slot. */
    fx_disp d2[2];
    fx_set(&d2[0], F.finish, 1, 32);
    fx_ptr(&d2[0], a);
    fx_ptr(&d2[0], b);
    fx_u32(&d2[0], 1);
    fx_ext(&d2[0], s1, 0);
    fx_set(&d2[1], F.finish, 1, 32);
    fx_ptr(&d2[1], b);
    fx_ptr(&d2[1], c);
    fx_u32(&d2[1], 1);
    fx_dep(&d2[1], 0);
    assert_int_equal(fx_submit(&F, d2, 2, &s1, 1, &w2, NULL), MOX_OK);
    fx_wait_for(&w1);
    fx_wait_for(&w2);
    assert_int_equal(w1.states[0], MOX_DISPATCH_FAILED);
    assert_int_equal(w1.codes[0], 9);
    assert_int_equal(w2.status, MOX_OK);
    assert_int_equal(w2.states[0], MOX_DISPATCH_GATED);
    assert_int_equal(w2.states[1], MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);

    /* Batch 3, submitted after batch 1 finished: the backend knows the
     * outcome and points the dependency at the always-failed slot. */
    fx_disp d3[1];
    fx_set(&d3[0], F.finish, 1, 32);
    fx_ptr(&d3[0], a);
    fx_ptr(&d3[0], b);
    fx_u32(&d3[0], 1);
    fx_ext(&d3[0], s1, 0);
    fx_wait w3;
    assert_int_equal(fx_submit(&F, d3, 1, &s1, 1, &w3, NULL), MOX_OK);
    fx_wait_for(&w3);
    assert_int_equal(w3.states[0], MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    mox__cuda_sub_release(s1);
}

static void dependency_on_a_clean_earlier_batch_runs(void **state)
{
    (void)state;
    put(a, 0.0f);
    fx_disp d1[1];
    fx_set(&d1[0], F.maybe_fail, 1, 32);
    fx_ptr(&d1[0], a);
    fx_u32(&d1[0], 0);
    fx_u32(&d1[0], 1000u * 1000u);
    fx_wait w1, w2;
    mox__cuda_sub *s1 = NULL;
    assert_int_equal(fx_submit(&F, d1, 1, NULL, 0, &w1, &s1), MOX_OK);
    fx_disp d2[1];
    fx_set(&d2[0], F.finish, 1, 32);
    fx_ptr(&d2[0], a);
    fx_ptr(&d2[0], b);
    fx_u32(&d2[0], 1);
    fx_ext(&d2[0], s1, 0);
    assert_int_equal(fx_submit(&F, d2, 1, &s1, 1, &w2, NULL), MOX_OK);
    fx_wait_for(&w2);
    fx_wait_for(&w1);
    assert_int_equal(w1.states[0], MOX_DISPATCH_OK);
    assert_int_equal(w2.states[0], MOX_DISPATCH_OK);
    assert_true(get(b) == 2.0f); /* ordered after batch 1: it saw a == 1 */
    mox__cuda_sub_release(s1);
}

static void inherited_failure_is_gated(void **state)
{
    (void)state;
    put(b, -5.0f);
    fx_disp d[2];
    fx_set(&d[0], F.finish, 1, 32);
    fx_ptr(&d[0], a);
    fx_ptr(&d[0], b);
    fx_u32(&d[0], 1);
    d[0].d.inherited_failure = true;
    fx_set(&d[1], F.finish, 1, 32);
    fx_ptr(&d[1], c);
    fx_ptr(&d[1], c);
    fx_u32(&d[1], 1);
    fx_wait w;
    assert_int_equal(fx_submit(&F, d, 2, NULL, 0, &w, NULL), MOX_OK);
    fx_wait_for(&w);
    assert_int_equal(w.states[0], MOX_DISPATCH_GATED);
    assert_int_equal(w.states[1], MOX_DISPATCH_OK);
    assert_true(get(b) == -5.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failure_gates_dependents_in_the_batch),
        cmocka_unit_test(clean_batch_needs_one_host_load),
        cmocka_unit_test(later_batch_is_gated_by_a_running_failure),
        cmocka_unit_test(dependency_on_a_clean_earlier_batch_runs),
        cmocka_unit_test(inherited_failure_is_gated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
