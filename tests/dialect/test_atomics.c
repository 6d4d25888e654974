/* test_atomics.c - every atomic intrinsic, u32 and i32, on the CPU: a
 * scripted sequence checks results and return values one by one; many
 * threads of many blocks on two pthreads check the totals (wrapping
 * arithmetic, min/max, bit ops, exchange as a permutation, CAS success and
 * failure); a shared-memory histogram checks block-local atomics. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/kernel.h>

#include "atomics_ref.h"
#include "test_module.h"
#include "test_rand.h"

static void test_atomics_script(void **state) {
    (void)state;
    mox_atomic_u32 wu = {0};
    mox_atomic_i32 wi = {0};
    uint32_t out[40];
    memset(out, 0xee, sizeof out);
    mox_atomic_u32 *pu = &wu;
    mox_atomic_i32 *pi = &wi;
    uint32_t *po = out;
    void *args[] = {&pu, &pi, &po};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_ATOMICS_SCRIPT, kdim3(1, 1, 1), kdim3(1, 1, 1), args, 1, 1, &d), 0);
    for (size_t k = 0; k < ATOMICS_SCRIPT_STEPS; k++) {
        if (out[k] != atomics_script_want[k])
            fail_msg("step %zu: got %#x want %#x", k, out[k], atomics_script_want[k]);
    }
    assert_int_equal(wu.value, 1u);
    assert_int_equal(wi.value, 0);
}

static void test_atomics_concurrent(void **state) {
    (void)state;
    const uint32_t blocks = 64, tpb = 96, n = blocks * tpb;
    mox_atomic_u32 cu[10] = {{0}, {0}, {0xffffffffu}, {0}, {0xffffffffu}, {0}, {0}, {0}, {0}, {5}};
    mox_atomic_i32 ci[10] = {{0}, {0}, {INT32_MAX}, {INT32_MIN}, {-1}, {0}, {0}, {0}, {0}, {-5}};
    mox_atomic_u32 *own_u = malloc(n * sizeof *own_u);
    mox_atomic_i32 *own_i = malloc(n * sizeof *own_i);
    uint32_t *vals = malloc(n * sizeof *vals), *res = calloc((size_t)n * 6u, sizeof *res);
    unsigned char *seen_u = calloc(n + 1u, 1), *seen_i = calloc(n + 1u, 1);
    assert_true(own_u && own_i && vals && res && seen_u && seen_i);
    uint64_t seed = 7;
    for (uint32_t g = 0; g < n; g++) {
        own_u[g].value = g;
        own_i[g].value = -(int32_t)g;
        vals[g] = rng_u32(&seed);
    }
    mox_atomic_u32 *a0 = cu, *a2 = own_u;
    mox_atomic_i32 *a1 = ci, *a3 = own_i;
    void *args[] = {&a0, &a1, &a2, &a3, &vals, &res};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_ATOMICS_GLOBAL, kdim3(blocks, 1, 1), kdim3(tpb, 1, 1), args, 2, 1, &d), 0);

    uint32_t sum = 0, mn = 0xffffffffu, mx = 0, and_ = 0xffffffffu, or_ = 0, xor_ = 0;
    int32_t smn = INT32_MAX, smx = INT32_MIN, sand = -1, sor = 0;
    for (uint32_t g = 0; g < n; g++) {
        uint32_t v = vals[g];
        int32_t sv = (int32_t)v;
        sum += v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
        and_ &= v | 0x80000001u;
        or_ |= v & 0x0f0f0f0fu;
        xor_ ^= v;
        smn = sv < smn ? sv : smn;
        smx = sv > smx ? sv : smx;
        sand &= sv | (int32_t)0x40000001;
        sor |= sv & 0x0f0f0f0f;
    }
    assert_int_equal(cu[0].value, sum);
    assert_int_equal(cu[1].value, 0u - sum);
    assert_int_equal(cu[2].value, mn);
    assert_int_equal(cu[3].value, mx);
    assert_int_equal(cu[4].value, and_);
    assert_int_equal(cu[5].value, or_);
    assert_int_equal(cu[6].value, xor_);
    assert_int_equal(cu[8].value, n);
    assert_int_equal(cu[9].value, 5u);
    assert_int_equal((uint32_t)ci[0].value, sum);
    assert_int_equal((uint32_t)ci[1].value, 0u - sum);
    assert_int_equal(ci[2].value, smn);
    assert_int_equal(ci[3].value, smx);
    assert_int_equal(ci[4].value, sand);
    assert_int_equal(ci[5].value, sor);
    assert_int_equal((uint32_t)ci[6].value, xor_);
    assert_int_equal(ci[8].value, -(int32_t)n);
    assert_int_equal(ci[9].value, -5);
    /* Exchange: the previous values and the final one are 0..n, once each. */
    seen_u[cu[7].value] = 1;
    seen_i[(uint32_t)ci[7].value] = 1;
    for (uint32_t g = 0; g < n; g++) {
        const uint32_t *r = res + (size_t)g * 6u;
        assert_true(r[0] <= n && !seen_u[r[0]]);
        seen_u[r[0]] = 1;
        assert_true(r[1] <= n && !seen_i[r[1]]);
        seen_i[r[1]] = 1;
        assert_int_equal(r[2], 0u); /* failed CAS reported false; own CAS ok */
        assert_int_equal(r[3], 5u);
        assert_int_equal(r[4], 0u);
        assert_int_equal(r[5], (uint32_t)-5);
        assert_int_equal(own_u[g].value, g * 3u);
        assert_int_equal(own_i[g].value, (int32_t)g);
    }
    free(own_u);
    free(own_i);
    free(vals);
    free(res);
    free(seen_u);
    free(seen_i);
}

static void test_shared_atomics(void **state) {
    (void)state;
    const uint32_t blocks = 50, tpb = 128, n = blocks * tpb;
    uint32_t *vals = malloc(n * sizeof *vals);
    mox_atomic_u32 hist[16] = {{0}};
    uint32_t want[16] = {0};
    assert_non_null(vals);
    uint64_t seed = 11;
    for (uint32_t g = 0; g < n; g++) {
        vals[g] = rng_u32(&seed) % 1000u;
        want[vals[g] % 16u]++;
    }
    mox_atomic_u32 *h = hist;
    void *args[] = {&vals, &h};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_SHARED_HIST, kdim3(blocks, 1, 1), kdim3(tpb, 1, 1), args, 2, 3, &d), 0);
    for (int b = 0; b < 16; b++) assert_int_equal(hist[b].value, want[b]);
    free(vals);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomics_script),
        cmocka_unit_test(test_atomics_concurrent),
        cmocka_unit_test(test_shared_atomics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
