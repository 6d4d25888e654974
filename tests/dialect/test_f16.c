/* test_f16.c - the CPU's software binary16 conversions against an
 * independent reference built from ldexp and a nearest-value search: all
 * 65536 halves to float, and from float every half value, every midpoint
 * between neighbours (ties to even) and its float neighbours, specials, and
 * a stride through all 2^32 float patterns. Also the conversion kernel
 * through the executor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/kernel.h>

#include "test_module.h"
#include "f16_ref.h"
#include "warp_ref.h"

static uint32_t cpu_from(uint32_t bits) { return mox_f16_to_bits(mox_f16_from_f32(mox_f32_from_bits(bits))); }

static void check_from(uint32_t bits) {
    uint32_t got = cpu_from(bits), want = ref_from_f32(bits);
    if (got != want) fail_msg("f16_from_f32(%#010x): got %#06x want %#06x", bits, got, want);
}

static void test_to_f32_all_halves(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 65536u; h++) {
        uint32_t got = mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits((uint16_t)h)));
        if (got != ref_to_f32(h)) fail_msg("f16_to_f32(%#06x): got %#010x want %#010x", h, got, ref_to_f32(h));
    }
}

static void test_from_f32_halves_and_ties(void **state) {
    (void)state;
    for (uint32_t h = 0; h < 0x7c00u; h++) {
        for (uint32_t s = 0; s < 2; s++) {
            double v = half_value(h) * (s ? -1.0 : 1.0);
            uint32_t b = ref_fbits((float)v);
            assert_int_equal(cpu_from(b), h | (s << 15)); /* exact values round-trip */
            check_from(b);
            check_from(b - 1u);
            check_from(b + 1u);
            /* the midpoint to the next half is exact in float: a tie */
            double next = h == 0x7bffu ? 65536.0 : half_value(h + 1u);
            uint32_t mid = ref_fbits((float)((half_value(h) + next) / 2.0 * (s ? -1.0 : 1.0)));
            check_from(mid);
            check_from(mid - 1u);
            check_from(mid + 1u);
        }
    }
}

static void test_from_f32_specials(void **state) {
    (void)state;
    assert_int_equal(cpu_from(0x7fc00000u), 0x7fffu);
    assert_int_equal(cpu_from(0xffc00000u), 0x7fffu);
    assert_int_equal(cpu_from(0x7f800001u), 0x7fffu); /* signalling */
    assert_int_equal(cpu_from(0x7f800000u), 0x7c00u);
    assert_int_equal(cpu_from(0xff800000u), 0xfc00u);
    assert_int_equal(cpu_from(ref_fbits(65504.0f)), 0x7bffu);
    assert_int_equal(cpu_from(ref_fbits(65519.99f)), 0x7bffu);
    assert_int_equal(cpu_from(ref_fbits(65520.0f)), 0x7c00u);
    assert_int_equal(cpu_from(ref_fbits(1e10f)), 0x7c00u);
    assert_int_equal(cpu_from(0x80000000u), 0x8000u);
    assert_int_equal(cpu_from(0x00000001u), 0x0000u);
    assert_int_equal(cpu_from(0x33000000u), 0x0000u); /* 2^-25: tie to even 0 */
    assert_int_equal(cpu_from(0x33000001u), 0x0001u);
    assert_int_equal(cpu_from(0xb3400000u), 0x8001u); /* -1.5 * 2^-25 */
    assert_int_equal(cpu_from(ref_fbits(1.0f)), 0x3c00u);
    assert_int_equal(mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits(0x7e00u))), 0x7fffffffu);
    assert_int_equal(mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits(0xfc01u))), 0x7fffffffu);
    assert_int_equal(mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits(0x0001u))), 0x33800000u);
    assert_int_equal(mox_f16_to_bits(mox_f16_from_bits(0xabcdu)), 0xabcdu);
    assert_int_equal(mox_f32_to_bits(mox_f32_from_bits(0x12345678u)), 0x12345678u);
}

static void test_from_f32_stride(void **state) {
    (void)state;
    for (uint64_t b = 0; b <= 0xffffffffull; b += 4099u) check_from((uint32_t)b);
    for (uint32_t b = 0x38000000u; b < 0x38900000u; b += 7u) check_from(b); /* subnormal/normal edge */
}

#if defined(__FLT16_MAX__) && defined(__x86_64__)
/* The compiler's own _Float16 (libgcc/F16C, round to nearest even). */
static void test_against_compiler_float16(void **state) {
    (void)state;
    for (uint64_t b = 0; b <= 0xffffffffull; b += 65537u) {
        float f = ref_bitsf((uint32_t)b);
        if (isnan(f)) continue;
        _Float16 h = (_Float16)f;
        uint16_t hb;
        memcpy(&hb, &h, sizeof hb);
        assert_int_equal(cpu_from((uint32_t)b), hb);
        assert_int_equal(mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits(hb))), ref_fbits((float)h));
    }
}
#endif

static void test_f16_kernel(void **state) {
    (void)state;
    uint32_t n = 65536u;
    uint32_t *fb = malloc(n * sizeof *fb), *fo = malloc(n * sizeof *fo);
    uint16_t *ho = malloc(n * sizeof *ho), *hs = malloc(n * sizeof *hs);
    assert_true(fb && fo && ho && hs);
    for (uint32_t i = 0; i < n; i++) {
        fb[i] = i * 65537u + 12345u;
        hs[i] = (uint16_t)i;
    }
    void *args[] = {&fb, &ho, &hs, &fo, &n};
    mox__cpu_dispatch d;
    assert_int_equal(harness_run(TK_F16_CONVERT, kdim3(n / 256u, 1, 1), kdim3(256, 1, 1), args, 2, 8, &d), 0);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(ho[i], ref_from_f32(fb[i]));
        assert_int_equal(fo[i], ref_to_f32(i));
    }
    free(fb);
    free(fo);
    free(ho);
    free(hs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_f32_all_halves),
        cmocka_unit_test(test_from_f32_halves_and_ties),
        cmocka_unit_test(test_from_f32_specials),
        cmocka_unit_test(test_from_f32_stride),
#if defined(__FLT16_MAX__) && defined(__x86_64__)
        cmocka_unit_test(test_against_compiler_float16),
#endif
        cmocka_unit_test(test_f16_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
