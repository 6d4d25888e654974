/* test_dialect.c - the device dialect's CPU mode run through the block
 * executor: index geometry, shared memory + barriers, every warp operation
 * against warp_ref.h, mox_fail, threads that return before a barrier, and
 * divergent cooperation (must fault, not hang). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu/fiber.h"
#include "test_module.h"
#include "test_rand.h"
#include "warp_ref.h"

#define GEOM_WORDS 15u

static uint32_t volume(mox_kdim3 d) { return d.x * d.y * d.z; }

/* ---------------- geometry ---------------- */

static void check_geometry(enum test_kernel k, mox_kdim3 grid, mox_kdim3 block, unsigned threads) {
    uint32_t nthreads = volume(grid) * volume(block);
    uint32_t *out = calloc((size_t)nthreads * GEOM_WORDS, sizeof *out);
    assert_non_null(out);
    void *args[] = {&out};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(k, grid, block, args, threads, 2, &d), 0);
    assert_int_equal(atomic_load(&d.fault), MOX__CPU_FAULT_NONE);
    for (uint32_t bz = 0; bz < grid.z; bz++)
        for (uint32_t by = 0; by < grid.y; by++)
            for (uint32_t bx = 0; bx < grid.x; bx++)
                for (uint32_t tz = 0; tz < block.z; tz++)
                    for (uint32_t ty = 0; ty < block.y; ty++)
                        for (uint32_t tx = 0; tx < block.x; tx++) {
                            uint32_t b = bx + grid.x * (by + grid.y * bz);
                            uint32_t t = tx + block.x * (ty + block.y * tz);
                            const uint32_t *o = out + ((size_t)b * volume(block) + t) * GEOM_WORDS;
                            uint32_t want[GEOM_WORDS] = {bx * block.x + tx, by * block.y + ty, bz * block.z + tz,
                                                         tx, ty, tz, bx, by, bz, block.x, block.y, block.z,
                                                         grid.x, grid.y, grid.z};
                            for (uint32_t w = 0; w < GEOM_WORDS; w++) assert_int_equal(o[w], want[w]);
                        }
    free(out);
}

static void test_geometry_serial(void **state) {
    (void)state;
    check_geometry(TK_GEOM, kdim3(7, 1, 1), kdim3(33, 1, 1), 1);
    check_geometry(TK_GEOM, kdim3(3, 4, 1), kdim3(5, 6, 1), 2);
    check_geometry(TK_GEOM, kdim3(2, 3, 4), kdim3(4, 3, 2), 2);
    check_geometry(TK_GEOM, kdim3(1, 1, 1), kdim3(1, 1, 1), 1);
}

static void test_geometry_fibers(void **state) {
    (void)state;
    check_geometry(TK_GEOM_COOP, kdim3(7, 1, 1), kdim3(33, 1, 1), 1);
    check_geometry(TK_GEOM_COOP, kdim3(3, 4, 1), kdim3(5, 6, 1), 2);
    check_geometry(TK_GEOM_COOP, kdim3(2, 3, 4), kdim3(4, 3, 2), 2);
    check_geometry(TK_GEOM_COOP, kdim3(2, 1, 1), kdim3(8, 8, 16), 2); /* 1024 threads */
}

/* ---------------- shared memory and barriers ---------------- */

static void test_block_reduce(void **state) {
    (void)state;
    uint32_t n = 256u * 13u + 17u, blocks = (n + 255u) / 256u;
    float *in = malloc(n * sizeof *in), *out = calloc(blocks, sizeof *out);
    assert_true(in && out);
    uint64_t seed = 1;
    for (uint32_t i = 0; i < n; i++) in[i] = (float)(rng_u32(&seed) % 1000u) / 7.0f;
    void *args[] = {&in, &out, &n};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_BLOCK_REDUCE, kdim3(blocks, 1, 1), kdim3(256, 1, 1), args, 2, 1, &d), 0);
    for (uint32_t b = 0; b < blocks; b++) {
        float s[256];
        for (uint32_t t = 0; t < 256u; t++) s[t] = b * 256u + t < n ? in[b * 256u + t] : 0.0f;
        for (uint32_t stride = 128; stride > 0; stride >>= 1)
            for (uint32_t t = 0; t < stride; t++) s[t] = s[t] + s[t + stride];
        assert_int_equal(ref_fbits(out[b]), ref_fbits(s[0]));
    }
    free(in);
    free(out);
}

/* A million elements on two threads: what CI's reduction example does
 * (fewer under TSan, where every fiber switch costs microseconds). */
#ifdef MOX_SANITIZE_THREAD
#define REDUCE_N (1u << 16)
#else
#define REDUCE_N (1u << 20)
#endif
static void test_warp_reduce_1m(void **state) {
    (void)state;
    uint32_t n = REDUCE_N, blocks = n / 256u;
    float *in = malloc(n * sizeof *in), *out = calloc(blocks, sizeof *out);
    assert_true(in && out);
    uint64_t seed = 2;
    for (uint32_t i = 0; i < n; i++) in[i] = (float)(rng_u32(&seed) % 2001u) / 1000.0f - 1.0f;
    void *args[] = {&in, &out, &n};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_WARP_REDUCE, kdim3(blocks, 1, 1), kdim3(256, 1, 1), args, 2, 16, &d), 0);
    for (uint32_t b = 0; b < blocks; b++) {
        float partial[32];
        for (uint32_t w = 0; w < 8u; w++) partial[w] = ref_butterfly(in + b * 256u + w * 32u, 32, REF_ADD);
        for (uint32_t w = 8; w < 32u; w++) partial[w] = 0.0f;
        assert_int_equal(ref_fbits(out[b]), ref_fbits(ref_butterfly(partial, 32, REF_ADD)));
    }
    free(in);
    free(out);
}

/* ---------------- warp operations ---------------- */

/* Float sums are arithmetic: a NaN result's payload depends on operand
 * order chosen by the compiler (x86 keeps an operand's payload, CUDA makes
 * 0x7fffffff), so any NaN matches any NaN. Min/max only select: exact. */
static int float_sum_op(uint32_t op) { return op == WOP_SUM_F || op == WOP_INCL_F || op == WOP_EXCL_F; }

static void check_warp_ops(mox_kdim3 block, uint32_t delta, uint32_t xmask, uint32_t pmask, uint64_t seed) {
    uint32_t grid = 3, tpb = volume(block), nthreads = grid * tpb;
    uint32_t *iu = malloc(nthreads * sizeof *iu);
    float *fv = malloc(nthreads * sizeof *fv);
    uint32_t *out = calloc((size_t)nthreads * WOP_COUNT, sizeof *out);
    uint32_t want[32 * WOP_COUNT];
    assert_true(iu && fv && out);
    for (uint32_t i = 0; i < nthreads; i++) {
        iu[i] = rng_u32(&seed);
        if (i % 7u == 3u) iu[i] |= 0x80000000u; /* negative as i32 */
        fv[i] = rng_float(&seed);
    }
    if (pmask == 0xffffffffu)
        for (uint32_t i = 0; i < nthreads; i++) iu[i] |= 1u; /* all true */
    void *args[] = {&iu, &fv, &out, &delta, &xmask, &pmask};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_WARP_OPS, kdim3(grid, 1, 1), block, args, 2, 1, &d), 0);
    assert_int_equal(atomic_load(&d.fault), MOX__CPU_FAULT_NONE);
    uint32_t warps = (tpb + 31u) / 32u;
    for (uint32_t b = 0; b < grid; b++)
        for (uint32_t w = 0; w < warps; w++) {
            uint32_t base = b * tpb + w * 32u;
            uint32_t n = tpb - w * 32u < 32u ? tpb - w * 32u : 32u;
            ref_warp_ops(iu + base, fv + base, n, delta, xmask, pmask, w, warps, want);
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t op = 0; op < WOP_COUNT; op++) {
                    uint32_t got = out[(size_t)(base + i) * WOP_COUNT + op], exp = want[i * WOP_COUNT + op];
                    if (got != exp && !(float_sum_op(op) && isnan(ref_bitsf(got)) && isnan(ref_bitsf(exp))))
                        fail_msg("block %ux%ux%u delta %u xmask %u pmask %#x: block %u warp %u lane %u op %u: "
                                 "got %#x want %#x",
                                 block.x, block.y, block.z, delta, xmask, pmask, b, w, i, op, got, exp);
                }
        }
    free(iu);
    free(fv);
    free(out);
}

static void test_warp_ops(void **state) {
    (void)state;
    const mox_kdim3 blocks[] = {kdim3(1, 1, 1), kdim3(31, 1, 1), kdim3(32, 1, 1), kdim3(35, 1, 1),
                                kdim3(5, 7, 1), kdim3(64, 1, 1), kdim3(4, 4, 4), kdim3(95, 1, 1)};
    const uint32_t deltas[] = {0, 1, 5, 31, 32, 33, 1000};
    const uint32_t xmasks[] = {0, 1, 13, 31, 32, 35};
    const uint32_t pmasks[] = {0, 0x10u, 0x7u, 0xffffffffu};
    uint64_t seed = 3;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++)
            check_warp_ops(blocks[b], deltas[k], xmasks[k % 6u], pmasks[k % 4u], seed++);
}

/* ---------------- failure ---------------- */

static void run_fail(enum test_kernel k, const uint32_t *codes, uint32_t blocks, uint32_t tpb, unsigned threads,
                     mox__cpu_dispatch *d) {
    uint32_t *ran = calloc((size_t)blocks * tpb, sizeof *ran);
    assert_non_null(ran);
    void *args[] = {&codes, &ran};
    assert_int_equal(harness_run(k, kdim3(blocks, 1, 1), kdim3(tpb, 1, 1), args, threads, 1, d), 0);
    for (uint32_t i = 0; i < blocks * tpb; i++) assert_int_equal(ran[i], 1); /* everyone went on */
    free(ran);
}

static void test_fail_first_code_wins(void **state) {
    (void)state;
    enum test_kernel kinds[] = {TK_FAIL_SOME, TK_FAIL_SOME_COOP};
    uint32_t codes[4 * 64] = {0};
    mox__cpu_dispatch d;
    for (int k = 0; k < 2; k++) {
        memset(codes, 0, sizeof codes);
        run_fail(kinds[k], codes, 4, 64, 2, &d);
        assert_int_equal(atomic_load(&d.fail_state), MOX_DISPATCH_OK);

        /* One thread, threads in order: gid 5 fails first. */
        codes[5] = 11, codes[9] = 22, codes[200] = 33;
        run_fail(kinds[k], codes, 4, 64, 1, &d);
        assert_int_equal(atomic_load(&d.fail_state), MOX_DISPATCH_FAILED);
        assert_int_equal(d.fail_code, 11);

        /* Two threads: one of the codes, whole. */
        run_fail(kinds[k], codes, 4, 64, 2, &d);
        assert_int_equal(atomic_load(&d.fail_state), MOX_DISPATCH_FAILED);
        assert_true(d.fail_code == 11 || d.fail_code == 22 || d.fail_code == 33);
    }
}

/* ---------------- cooperation bugs ---------------- */

static void test_early_return_does_not_hang(void **state) {
    if (!test_kernel_available(TK_EARLY_RETURN)) skip();
    (void)state;
    const uint32_t sizes[] = {1, 2, 31, 64, 95, 256};
    const uint32_t moduli[] = {1, 2, 3, 32};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t m = 0; m < sizeof moduli / sizeof moduli[0]; m++) {
            uint32_t tpb = sizes[s], modulo = moduli[m], blocks = 3;
            uint32_t *out = calloc((size_t)blocks * tpb, sizeof *out);
            assert_non_null(out);
            void *args[] = {&out, &modulo};
            mox__cpu_dispatch d;
            assert_int_equal(harness_run(TK_EARLY_RETURN, kdim3(blocks, 1, 1), kdim3(tpb, 1, 1), args, 2, 1, &d), 0);
            assert_int_equal(atomic_load(&d.fault), MOX__CPU_FAULT_NONE);
            for (uint32_t b = 0; b < blocks; b++)
                for (uint32_t t = 0; t < tpb; t++) {
                    uint32_t w0 = t / 32u * 32u, end = w0 + 32u < tpb ? w0 + 32u : tpb, live = 0;
                    for (uint32_t k = w0; k < end; k++) live += k % modulo != 0;
                    assert_int_equal(out[b * tpb + t], t % modulo == 0 ? 0u : live);
                }
            free(out);
        }
}

static void test_divergent_faults_and_recovers(void **state) {
    if (!test_kernel_available(TK_DIVERGENT)) skip();
    (void)state;
    uint32_t *out = calloc(4 * 64, sizeof *out);
    assert_non_null(out);
    void *args[] = {&out};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_DIVERGENT, kdim3(4, 1, 1), kdim3(64, 1, 1), args, 1, 1, &d), 0);
    assert_int_equal(atomic_load(&d.fault), MOX__CPU_FAULT_DIVERGENT);
    free(out);
    /* The same thread's fibers were abandoned mid-kernel and must work. */
    check_warp_ops(kdim3(64, 1, 1), 1, 1, 0x7u, 99);
    check_geometry(TK_GEOM_COOP, kdim3(3, 1, 1), kdim3(64, 1, 1), 1);
}

/* ---------------- executor edges ---------------- */

static void test_rejects_bad_ranges(void **state) {
    (void)state;
    const mox_cpu_module_entry *m = test_dialect_module();
    uint32_t *out = NULL;
    void *args[] = {&out};
    mox__cpu_dispatch d;
    mox__cpu_dispatch_init(&d, &m->kernels[TK_GEOM_COOP], m->lane_slot, kdim3(2, 1, 1), kdim3(1025, 1, 1), args);
    assert_int_equal(mox__cpu_run_blocks(&d, 0, 1), EINVAL);
    mox__cpu_dispatch_init(&d, &m->kernels[TK_GEOM], m->lane_slot, kdim3(2, 1, 1), kdim3(4, 1, 1), args);
    assert_int_equal(mox__cpu_run_blocks(&d, 1, 2), EINVAL);
    assert_int_equal(mox__cpu_run_blocks(&d, 3, 0), EINVAL);
    assert_int_equal(mox__cpu_run_blocks(&d, 2, 0), 0); /* empty range: nothing */
    assert_int_equal(mox__cpu_dispatch_block_count(&d), 2);
}

static void test_slot_restored_and_release(void **state) {
    (void)state;
    const mox_cpu_module_entry *m = test_dialect_module();
    mox_cpu_lane **slot = m->lane_slot();
    mox_cpu_lane sentinel;
    *slot = &sentinel;
    check_geometry(TK_GEOM_COOP, kdim3(2, 1, 1), kdim3(40, 1, 1), 1);
    assert_ptr_equal(*slot, &sentinel);
    check_geometry(TK_GEOM, kdim3(2, 1, 1), kdim3(40, 1, 1), 1);
    assert_ptr_equal(*slot, &sentinel);
    *slot = NULL;
    mox__cpu_thread_release();
    mox__cpu_thread_release(); /* twice is fine */
    check_geometry(TK_GEOM_COOP, kdim3(2, 1, 1), kdim3(40, 1, 1), 1);
}

/* dialect.test_dialect_stack_env runs this binary with
 * MOX_CPU_FIBER_STACK=512K; the plain run gets the default. */
static void test_fiber_stack_size(void **state) {
    (void)state;
    const char *env = getenv("MOX_CPU_FIBER_STACK");
    if (env != NULL && strcmp(env, "512K") == 0) {
        assert_int_equal(mox__fiber_stack_size(), 512u * 1024u);
    } else if (env == NULL) {
#if defined(MOX_SANITIZE_ADDRESS) || defined(MOX_SANITIZE_THREAD)
        assert_int_equal(mox__fiber_stack_size(), 1024u * 1024u);
#else
        assert_int_equal(mox__fiber_stack_size(), 256u * 1024u);
#endif
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_serial),
        cmocka_unit_test(test_geometry_fibers),
        cmocka_unit_test(test_block_reduce),
        cmocka_unit_test(test_warp_reduce_1m),
        cmocka_unit_test(test_warp_ops),
        cmocka_unit_test(test_fail_first_code_wins),
        cmocka_unit_test(test_early_return_does_not_hang),
        cmocka_unit_test(test_divergent_faults_and_recovers),
        cmocka_unit_test(test_rejects_bad_ranges),
        cmocka_unit_test(test_slot_restored_and_release),
        cmocka_unit_test(test_fiber_stack_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
