/* test_intrinsics.c - the dialect's integer intrinsics give CUDA's bits
 * (against plain-C references of their definitions) and its fast-math
 * intrinsics stay within their documented error on the running backend
 * (the CPU computes the libm function; the GPU's approximations are
 * checked against CUDA's published bounds). Prints the largest difference
 * from glibc per function, in ULPs: the "measured" column of
 * docs/kernel-language.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang_support.h"

#define INT_OPS 12u
#define FAST_OPS 10u
#define NI 4096u
#define NF (1u << 18)

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint32_t ref_int(unsigned op, uint32_t x, uint32_t y)
{
    int64_t sx = (int32_t)x, sy = (int32_t)y;
    uint32_t r = 0;
    switch (op) {
    case 0: for (unsigned b = 0; b < 32; b++) r += (x >> b) & 1u; return r;
    case 1: while (r < 32 && !(x & (0x80000000u >> r))) r++; return r;
    case 2: for (unsigned b = 0; b < 32; b++) if (x & (1u << b)) return b + 1; return 0;
    case 3: for (unsigned b = 0; b < 32; b++) r |= ((x >> b) & 1u) << (31 - b); return r;
    case 4: return (uint32_t)((uint64_t)(x % (1u << 24)) * (y % (1u << 24)));
    case 5: {
        int64_t a = (int64_t)(x % (1u << 24)), c = (int64_t)(y % (1u << 24));
        a -= a >= (1 << 23) ? (1 << 24) : 0;
        c -= c >= (1 << 23) ? (1 << 24) : 0;
        return (uint32_t)(uint64_t)(a * c);
    }
    case 6: return (uint32_t)(((uint64_t)x * y) >> 32);
    case 7: return (uint32_t)((uint64_t)(sx * sy) >> 32);
    case 8: return x < y ? x : y;
    case 9: return x > y ? x : y;
    case 10: return (uint32_t)(sx < sy ? sx : sy);
    default: return (uint32_t)(sx > sy ? sx : sy);
    }
}

static void test_integer_intrinsics(void **state)
{
    mox_device *dev = *state;
    static const uint32_t edges[] = {0u, 1u, 2u, 3u, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x800000u,
                                     0x7fffffu, 0xffffffu, 0x1000000u, 0xff800000u, 0x55555555u, 0xaaaaaaaau};
    const size_t ne = sizeof edges / sizeof edges[0];
    uint32_t *a = malloc(NI * 4), *b = malloc(NI * 4), *out = malloc((size_t)NI * INT_OPS * 4);
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < NI; i++) {
        a[i] = i < ne * ne ? edges[i / ne] : (uint32_t)rng(&s);
        b[i] = i < ne * ne ? edges[i % ne] : (uint32_t)(rng(&s) >> (rng(&s) % 32u));
    }
    mox_buffer *ba = lang_buffer(dev, &mox_type_u32, NI, a), *bb = lang_buffer(dev, &mox_type_u32, NI, b);
    mox_buffer *bo = lang_buffer(dev, &mox_type_u32, (size_t)NI * INT_OPS, NULL);
    assert_int_equal(lang_run(lang_int_ops(dev, lang_cfg(NI), ba, bb, bo, NI)), MOX_OK);
    lang_read(bo, out);
    static const char *names[INT_OPS] = {"popc_u32", "clz_u32", "ffs_u32", "brev_u32", "mul24_u32", "mul24_i32",
                                         "mulhi_u32", "mulhi_i32", "min_u32", "max_u32", "min_i32", "max_i32"};
    for (uint32_t i = 0; i < NI; i++)
        for (unsigned op = 0; op < INT_OPS; op++) {
            uint32_t want = ref_int(op, a[i], b[i]), got = out[(size_t)i * INT_OPS + op];
            if (got != want)
                fail_msg("mox_%s(0x%08x, 0x%08x) = 0x%08x, expected 0x%08x", names[op], a[i], b[i], got, want);
        }
    mox_buffer_release(ba);
    mox_buffer_release(bb);
    mox_buffer_release(bo);
    free(a);
    free(b);
    free(out);
}

/* ---- fast math ---- */

static int64_t ordered(float f)
{
    int32_t i;
    memcpy(&i, &f, 4);
    return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static int64_t ulps(float a, float b)
{
    int64_t d = ordered(a) - ordered(b);
    return d < 0 ? -d : d;
}

typedef struct fast_case {
    const char *name;
    float lo, hi;  /* |x| range (log-uniform when lo > 0) */
    bool positive; /* only x > 0 */
    float ylo, yhi; /* second operand range (uniform), for pow and div */
} fast_case;

static const fast_case cases[FAST_OPS] = {
    {"mox_rsqrtf", 1e-30f, 1e30f, true, 0, 0},      {"mox_fast_expf", 1e-6f, 80.0f, false, 0, 0},
    {"mox_fast_logf", 1e-30f, 1e30f, true, 0, 0},   {"mox_fast_log2f", 1e-30f, 1e30f, true, 0, 0},
    {"mox_fast_log10f", 1e-30f, 1e30f, true, 0, 0}, {"mox_fast_sinf", 1e-6f, 3.14159265f, false, 0, 0},
    {"mox_fast_cosf", 1e-6f, 3.14159265f, false, 0, 0}, {"mox_fast_tanf", 1e-6f, 1.5f, false, 0, 0},
    {"mox_fast_powf", 1e-3f, 50.0f, true, -8.0f, 8.0f}, {"mox_fast_divf", 1e-30f, 1e30f, false, -1e30f, 1e30f},
};

static float host_fast(unsigned op, float a, float b)
{
    switch (op) {
    case 0: return 1.0f / sqrtf(a);
    case 1: return expf(a);
    case 2: return logf(a);
    case 3: return log2f(a);
    case 4: return log10f(a);
    case 5: return sinf(a);
    case 6: return cosf(a);
    case 7: return tanf(a);
    case 8: return powf(a, b);
    default: return a / b;
    }
}

/* CUDA's published error of each approximation (Programming Guide, the
 * intrinsic functions table), plus glibc's own error of the reference
 * (1 ULP, 2 for log10f and tanf) and a little margin where an absolute
 * bound meets the reference's rounding. True when `got` is within it. */
static bool within_bound(unsigned op, float a, float b, float got, float ref)
{
    int64_t u = ulps(got, ref);
    double abs_err = fabs((double)got - (double)ref);
    switch (op) {
    case 0: return u <= 3;
    case 1: return u <= 3 + (int64_t)floor(fabs(1.173 * a));
    case 2: return (a >= 0.5f && a <= 2.0f) ? abs_err <= ldexp(1.0, -21) : u <= 4;
    case 3: return (a >= 0.5f && a <= 2.0f) ? abs_err <= ldexp(1.5, -22) : u <= 3;
    case 4: return (a >= 0.5f && a <= 2.0f) ? abs_err <= ldexp(1.0, -23) : u <= 5;
    case 5: return abs_err <= ldexp(1.0, -21);
    case 6: return abs_err <= ldexp(1.3, -21);
    /* tan = sin / cos: relative to the result near the poles */
    case 7: return abs_err <= ldexp(1.0, -20) * (1.0 + fabs((double)ref) * fabs((double)ref));
    /* pow = exp2(y * log2(x)): the log's error (absolute near x = 1,
     * relative elsewhere) scaled by |y|, plus exp2's own */
    case 8: return fabs((double)got / (double)ref - 1.0) <=
                   ldexp(1.0, -21) * (2.0 + fabs((double)b) * (1.0 + fabs(log2((double)a))));
    default: return fabsf(b) > 0x1p126f || u <= 3;
    }
}

static void fast_inputs(unsigned op, float *x, float *y, uint32_t n)
{
    uint64_t s = 1000u + op;
    const fast_case *c = &cases[op];
    for (uint32_t i = 0; i < n; i++) {
        double t = (double)(rng(&s) % 1000000u) / 1e6;
        float mag = (float)(c->lo * pow((double)c->hi / c->lo, t));
        x[i] = c->positive || (rng(&s) & 1u) ? mag : -mag;
        double v = (double)(rng(&s) % 1000000u) / 1e6;
        y[i] = (float)(c->ylo + (c->yhi - c->ylo) * v);
        if (op == 9 && fabsf(y[i]) < 1e-30f)
            y[i] = 1.0f;
    }
}

static void test_fast_math(void **state)
{
    mox_device *dev = *state;
    float *x = malloc(NF * 4), *y = malloc(NF * 4), *out = malloc(NF * 4);
    mox_buffer *bx = lang_buffer(dev, &mox_type_f32, NF, NULL), *by = lang_buffer(dev, &mox_type_f32, NF, NULL);
    mox_buffer *bo = lang_buffer(dev, &mox_type_f32, NF, NULL);
    printf("| intrinsic | inputs | max ULP difference from glibc |\n|---|---|---|\n");
    for (unsigned op = 0; op < FAST_OPS; op++) {
        fast_inputs(op, x, y, NF);
        assert_int_equal(mox_buffer_write(bx, 0, NF, x), MOX_OK);
        assert_int_equal(mox_buffer_write(by, 0, NF, y), MOX_OK);
        assert_int_equal(lang_run(lang_fast_ops(dev, lang_cfg(NF), bx, by, bo, op, NF)), MOX_OK);
        lang_read(bo, out);
        int64_t worst = 0;
        for (uint32_t i = 0; i < NF; i++) {
            float ref = host_fast(op, x[i], y[i]);
            if (isnan(ref) && isnan(out[i]))
                continue;
            if (!within_bound(op, x[i], y[i], out[i], ref))
                fail_msg("%s(%a, %a) = %a, glibc %a: beyond its documented error", cases[op].name, (double)x[i],
                         (double)y[i], (double)out[i], (double)ref);
            int64_t u = ulps(out[i], ref);
            worst = u > worst ? u : worst;
        }
        printf("| %s | %u | %lld |\n", cases[op].name, NF, (long long)worst);
    }
    mox_buffer_release(bx);
    mox_buffer_release(by);
    mox_buffer_release(bo);
    free(x);
    free(y);
    free(out);
}

/* ---- classification and C11 spellings ---- */

/* isnormal, fpclassify (and isnan/isinf/isfinite/signbit) on every class
 * of float, with _Bool, _Static_assert and _Alignof in the kernel: the
 * CPU's C and the CUDA translation unit's C++ give glibc's answers. */
static void test_classify(void **state)
{
    mox_device *dev = *state;
    static const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x00800000u,
                                    0x80800000u, 0x3f800000u, 0xc2f60000u, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x1e3ce508u};
    enum { N = sizeof bits / sizeof bits[0] };
    float x[N];
    memcpy(x, bits, sizeof x);
    uint32_t out[N * 4];
    mox_buffer *bx = lang_buffer(dev, &mox_type_f32, N, x), *bo = lang_buffer(dev, &mox_type_u32, N * 4, NULL);
    assert_int_equal(lang_run(lang_classify(dev, lang_cfg(N), bx, bo, N)), MOX_OK);
    lang_read(bo, out);
    for (unsigned i = 0; i < N; i++) {
        uint32_t want[4] = {isnormal(x[i]) ? 1u : 0u, (uint32_t)fpclassify(x[i]), 16u,
                            (isnan(x[i]) ? 1u : 0u) + (isinf(x[i]) ? 2u : 0u) + (isfinite(x[i]) ? 4u : 0u) +
                                (signbit(x[i]) ? 8u : 0u)};
        for (unsigned w = 0; w < 4; w++)
            if (out[i * 4 + w] != want[w])
                fail_msg("classify(0x%08x) word %u = %u, expected %u", bits[i], w, out[i * 4 + w], want[w]);
    }
    mox_buffer_release(bx);
    mox_buffer_release(bo);
}

/* exp10f: glibc's on the CPU (bit for bit), CUDA's within the 3 ULP the
 * two libraries' errors allow (docs/kernel-language.md). */
static void test_exp10f(void **state)
{
    mox_device *dev = *state;
    enum { N = 4096 };
    float *x = malloc(N * 4), *out = malloc(N * 4);
    uint64_t s = 77u;
    for (uint32_t i = 0; i < N; i++)
        x[i] = (float)((double)(rng(&s) % 2000001u) / 1e6 - 1.0) * 38.0f;
    x[0] = 0.0f, x[1] = 1.0f, x[2] = -1.0f, x[3] = 2.0f;
    mox_buffer *bx = lang_buffer(dev, &mox_type_f32, N, x), *bo = lang_buffer(dev, &mox_type_f32, N, NULL);
    assert_int_equal(lang_run(lang_exp10(dev, lang_cfg(N), bx, bo, N)), MOX_OK);
    lang_read(bo, out);
    bool cpu = mox_device_backend(dev) == MOX_BACKEND_CPU;
    for (uint32_t i = 0; i < N; i++) {
        float ref = exp10f(x[i]);
        if (cpu ? memcmp(&ref, &out[i], 4) != 0 : ulps(ref, out[i]) > 3)
            fail_msg("exp10f(%a) = %a, glibc %a", (double)x[i], (double)out[i], (double)ref);
    }
    assert_true(out[1] == 10.0f && out[3] == 100.0f && out[0] == 1.0f);
    mox_buffer_release(bx);
    mox_buffer_release(bo);
    free(x);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_intrinsics),
        cmocka_unit_test(test_fast_math),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_exp10f),
    };
    return cmocka_run_group_tests(tests, lang_setup, lang_teardown);
}
