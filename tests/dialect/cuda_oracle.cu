// cuda_oracle.cu - the CUDA mode of mox/kernel.h on a real GPU, checked
// against the same references the CPU tests use (so CPU == GPU bit for bit
// where the docs promise it): every warp operation including partial warps
// and multi-dimensional blocks, f16 conversions (all halves, ties, a stride
// of floats), the atomic script, reductions, the gate (dependency gating,
// mox_fail first code wins, host flag, NULL status) and the math table
// (exact functions exact; others within their bounds, measured in ULPs and
// printed). Exits 77 when there is no GPU.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include <cmocka.h> // a C library whose header has no extern "C"
}
#include <cuda_runtime.h>

#include "cuda_intrinsics.cu"

#include "atomics_ref.h"
#include "f16_ref.h"
#include "test_rand.h"
#include "warp_ref.h"

#define CK(call)                                                                                  \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) fail_msg("%s: %s", #call, cudaGetErrorName(e_));                    \
    } while (0)

static mox_gate no_gate(void) {
    mox_gate g;
    memset(&g, 0, sizeof g);
    return g;
}

template <typename T> static T *dev_copy(const T *host, size_t n) {
    T *d = NULL;
    CK(cudaMalloc((void **)&d, n * sizeof(T) + 1));
    if (host) CK(cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice));
    else CK(cudaMemset(d, 0, n * sizeof(T)));
    return d;
}
template <typename T> static void host_copy(T *host, const T *dev, size_t n) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host, dev, n * sizeof(T), cudaMemcpyDeviceToHost));
}

static int float_sum_op(uint32_t op) { return op == WOP_SUM_F || op == WOP_INCL_F || op == WOP_EXCL_F; }

static void check_warp_ops(dim3 block, uint32_t delta, uint32_t xmask, uint32_t pmask, uint64_t seed) {
    uint32_t grid = 3, tpb = block.x * block.y * block.z, n = grid * tpb;
    uint32_t *iu = (uint32_t *)malloc(n * 4), *out = (uint32_t *)malloc((size_t)n * WOP_COUNT * 4);
    float *fv = (float *)malloc(n * 4);
    uint32_t want[32 * WOP_COUNT];
    for (uint32_t i = 0; i < n; i++) {
        iu[i] = rng_u32(&seed);
        if (i % 7u == 3u) iu[i] |= 0x80000000u;
        fv[i] = rng_float(&seed);
    }
    if (pmask == 0xffffffffu)
        for (uint32_t i = 0; i < n; i++) iu[i] |= 1u;
    uint32_t *d_iu = dev_copy(iu, n), *d_out = dev_copy<uint32_t>(NULL, (size_t)n * WOP_COUNT);
    float *d_fv = dev_copy(fv, n);
    mox_entry_warp_ops<<<grid, block>>>(no_gate(), d_iu, d_fv, d_out, delta, xmask, pmask);
    CK(cudaGetLastError());
    host_copy(out, d_out, (size_t)n * WOP_COUNT);
    uint32_t warps = (tpb + 31u) / 32u;
    for (uint32_t b = 0; b < grid; b++)
        for (uint32_t w = 0; w < warps; w++) {
            uint32_t base = b * tpb + w * 32u, lanes = tpb - w * 32u < 32u ? tpb - w * 32u : 32u;
            ref_warp_ops(iu + base, fv + base, lanes, delta, xmask, pmask, w, warps, want);
            for (uint32_t i = 0; i < lanes; i++)
                for (uint32_t op = 0; op < WOP_COUNT; op++) {
                    uint32_t got = out[(size_t)(base + i) * WOP_COUNT + op], exp = want[i * WOP_COUNT + op];
                    if (got != exp && !(float_sum_op(op) && isnan(ref_bitsf(got)) && isnan(ref_bitsf(exp))))
                        fail_msg("GPU block %ux%ux%u delta %u xmask %u pmask %#x: block %u warp %u lane %u op %u: "
                                 "got %#x want %#x",
                                 block.x, block.y, block.z, delta, xmask, pmask, b, w, i, op, got, exp);
                }
        }
    cudaFree(d_iu), cudaFree(d_out), cudaFree(d_fv);
    free(iu), free(out), free(fv);
}

static void test_warp_ops(void **state) {
    (void)state;
    const dim3 blocks[] = {dim3(1), dim3(31), dim3(32), dim3(35), dim3(5, 7, 1), dim3(64), dim3(4, 4, 4),
                           dim3(95), dim3(3, 5, 7)};
    const uint32_t deltas[] = {0, 1, 5, 31, 32, 33, 1000};
    const uint32_t xmasks[] = {0, 1, 13, 31, 32, 35};
    const uint32_t pmasks[] = {0, 0x10u, 0x7u, 0xffffffffu};
    uint64_t seed = 3;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++)
            check_warp_ops(blocks[b], deltas[k], xmasks[k % 6u], pmasks[k % 4u], seed++);
}

static void test_f16(void **state) {
    (void)state;
    const uint32_t n = 1u << 22;
    uint32_t *fb = (uint32_t *)malloc(n * 4), *fo = (uint32_t *)malloc(n * 4);
    uint16_t *ho = (uint16_t *)malloc(n * 2), *hs = (uint16_t *)malloc(65536 * 2);
    uint32_t k = 0;
    for (uint32_t h = 0; h < 0x7c00u && k + 12 <= n; h++)
        for (uint32_t s = 0; s < 2; s++) {
            double sg = s ? -1.0 : 1.0, next = h == 0x7bffu ? 65536.0 : half_value(h + 1u);
            uint32_t b = ref_fbits((float)(half_value(h) * sg));
            uint32_t mid = ref_fbits((float)((half_value(h) + next) / 2.0 * sg));
            fb[k++] = b, fb[k++] = b - 1u, fb[k++] = b + 1u, fb[k++] = mid, fb[k++] = mid - 1u, fb[k++] = mid + 1u;
        }
    for (uint64_t b = 0; k < n; b += 4099u) fb[k++] = (uint32_t)(b * 2654435761u + 0x7f7ff000u * (b & 1));
    fb[0] = 0x7fc00000u, fb[1] = 0xffc00001u, fb[2] = 0x7f800001u, fb[3] = 0x33000000u;
    for (uint32_t h = 0; h < 65536u; h++) hs[h] = (uint16_t)h;
    uint32_t *d_fb = dev_copy(fb, n), *d_fo = dev_copy<uint32_t>(NULL, n);
    uint16_t *d_ho = dev_copy<uint16_t>(NULL, n), *d_hs = dev_copy(hs, 65536);
    mox_entry_f16_convert<<<n / 256u, 256>>>(no_gate(), d_fb, d_ho, d_hs, d_fo, n);
    CK(cudaGetLastError());
    host_copy(ho, d_ho, n);
    host_copy(fo, d_fo, n);
    for (uint32_t i = 0; i < n; i++) {
        if (ho[i] != ref_from_f32(fb[i])) fail_msg("GPU f16_from_f32(%#x) = %#x want %#x", fb[i], ho[i], ref_from_f32(fb[i]));
        if (fo[i] != ref_to_f32(i % 65536u)) fail_msg("GPU f16_to_f32(%#x) = %#x want %#x", i % 65536u, fo[i], ref_to_f32(i % 65536u));
    }
    cudaFree(d_fb), cudaFree(d_fo), cudaFree(d_ho), cudaFree(d_hs);
    free(fb), free(fo), free(ho), free(hs);
}

static void test_atomic_script(void **state) {
    (void)state;
    mox_atomic_u32 *wu = dev_copy<mox_atomic_u32>(NULL, 1);
    mox_atomic_i32 *wi = dev_copy<mox_atomic_i32>(NULL, 1);
    uint32_t *d_out = dev_copy<uint32_t>(NULL, 40), out[40];
    mox_entry_atomics_script<<<1, 1>>>(no_gate(), wu, wi, d_out);
    CK(cudaGetLastError());
    host_copy(out, d_out, 40);
    for (size_t k = 0; k < ATOMICS_SCRIPT_STEPS; k++)
        if (out[k] != atomics_script_want[k]) fail_msg("GPU atomic step %zu: got %#x want %#x", k, out[k], atomics_script_want[k]);
    cudaFree(wu), cudaFree(wi), cudaFree(d_out);
}

static void test_reductions(void **state) {
    (void)state;
    uint32_t n = 1u << 20, blocks = n / 256u;
    float *in = (float *)malloc(n * 4), *out = (float *)malloc(blocks * 4);
    uint64_t seed = 2;
    for (uint32_t i = 0; i < n; i++) in[i] = (float)(rng_u32(&seed) % 2001u) / 1000.0f - 1.0f;
    float *d_in = dev_copy(in, n), *d_out = dev_copy<float>(NULL, blocks);
    mox_entry_warp_reduce<<<blocks, 256>>>(no_gate(), d_in, d_out, n);
    host_copy(out, d_out, blocks);
    for (uint32_t b = 0; b < blocks; b++) {
        float partial[32] = {0};
        for (uint32_t w = 0; w < 8u; w++) partial[w] = ref_butterfly(in + b * 256u + w * 32u, 32, REF_ADD);
        assert_int_equal(ref_fbits(out[b]), ref_fbits(ref_butterfly(partial, 32, REF_ADD)));
    }
    mox_entry_block_reduce<<<blocks, 256>>>(no_gate(), d_in, d_out, n);
    host_copy(out, d_out, blocks);
    for (uint32_t b = 0; b < blocks; b++) {
        float s[256];
        for (uint32_t t = 0; t < 256u; t++) s[t] = in[b * 256u + t];
        for (uint32_t stride = 128; stride > 0; stride >>= 1)
            for (uint32_t t = 0; t < stride; t++) s[t] = s[t] + s[t + stride];
        assert_int_equal(ref_fbits(out[b]), ref_fbits(s[0]));
    }
    cudaFree(d_in), cudaFree(d_out);
    free(in), free(out);
}

static void test_gate(void **state) {
    (void)state;
    const uint32_t blocks = 8, tpb = 64, n = blocks * tpb;
    uint32_t *status = dev_copy<uint32_t>(NULL, 8), *deps = NULL, dep0 = 0;
    uint32_t *flag_host = NULL, *flag_dev = NULL;
    CK(cudaHostAlloc((void **)&flag_host, 4, cudaHostAllocMapped));
    *flag_host = 0;
    CK(cudaHostGetDevicePointer((void **)&flag_dev, flag_host, 0));
    deps = dev_copy(&dep0, 1);
    uint32_t codes[8 * 64] = {0}, ran[8 * 64], st[8];
    codes[77] = 5, codes[300] = 6, codes[301] = 7;
    uint32_t *d_codes = dev_copy(codes, n), *d_ran = dev_copy<uint32_t>(NULL, n);
    uint32_t *d_geom = dev_copy<uint32_t>(NULL, (size_t)n * GEOM_WORDS);

    mox_gate g0 = {status, NULL, flag_dev, 0, 0, {0, 0, 0, 0}};
    mox_entry_fail_some<<<blocks, tpb>>>(g0, d_codes, d_ran); /* dispatch 0 fails */
    mox_gate g1 = {status, deps, flag_dev, 1, 1, {0, 0, 0, 0}};
    mox_entry_geom<<<blocks, tpb>>>(g1, d_geom); /* depends on 0: gated */
    mox_gate g2 = {status, NULL, flag_dev, 2, 0, {0, 0, 0, 0}};
    mox_entry_geom<<<blocks, tpb>>>(g2, d_geom); /* independent: runs */
    host_copy(st, status, 8);
    host_copy(ran, d_ran, n);
    assert_int_equal(st[0], MOX_DISPATCH_FAILED);
    assert_true(st[1] == 5 || st[1] == 6 || st[1] == 7);
    assert_int_equal(st[2], MOX_DISPATCH_GATED);
    assert_int_equal(st[4], MOX_DISPATCH_OK);
    assert_int_equal(*(volatile uint32_t *)flag_host, 1);
    for (uint32_t i = 0; i < n; i++) assert_int_equal(ran[i], 1);
    uint32_t geom0[GEOM_WORDS];
    host_copy(geom0, d_geom + (size_t)(n - 1) * GEOM_WORDS, GEOM_WORDS);
    assert_int_equal(geom0[3], tpb - 1); /* dispatch 2 wrote it */

    /* One failing thread: exactly its code. */
    memset(codes, 0, sizeof codes);
    codes[130] = 99;
    CK(cudaMemcpy(d_codes, codes, n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(status, 0, 8 * 4));
    mox_entry_fail_some<<<blocks, tpb>>>(g0, d_codes, d_ran);
    host_copy(st, status, 8);
    assert_int_equal(st[0], MOX_DISPATCH_FAILED);
    assert_int_equal(st[1], 99);

    /* No status array: mox_fail records nothing and does not fault. */
    mox_entry_fail_some<<<blocks, tpb>>>(no_gate(), d_codes, d_ran);
    CK(cudaDeviceSynchronize());
    cudaFree(status), cudaFree(deps), cudaFree(d_codes), cudaFree(d_ran), cudaFree(d_geom);
    cudaFreeHost(flag_host);
}

/* ---- math: CPU (glibc) vs GPU ---- */

__global__ void math_kernel(int fn, const float *x, const float *y, float *out, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], r;
    switch (fn) {
    case 0: r = a + b; break;
    case 1: r = a * b; break;
    case 2: r = a / b; break;
    case 3: r = sqrtf(a); break;
    case 4: r = fmaf(a, b, a); break;
    case 5: r = fminf(a, b); break;
    case 6: r = fmaxf(a, b); break;
    case 7: r = floorf(a); break;
    case 8: r = ceilf(a); break;
    case 9: r = truncf(a); break;
    case 10: r = rintf(a); break;
    case 11: r = fabsf(a); break;
    case 12: r = (float)(int32_t)a; break;
    case 13: r = expf(a); break;
    case 14: r = logf(a); break;
    case 15: r = sinf(a); break;
    case 16: r = cosf(a); break;
    case 17: r = tanhf(a); break;
    case 18: r = erff(a); break;
    case 19: r = powf(a, b); break;
    case 20: r = exp2f(a); break;
    case 21: r = log2f(a); break;
    case 22: r = tanf(a); break;
    case 23: r = atanf(a); break;
    case 24: r = exp10f(a); break;
    default: r = 0; break;
    }
    out[i] = r;
}

static float host_math(int fn, float a, float b) {
    switch (fn) {
    case 0: return a + b;
    case 1: return a * b;
    case 2: return a / b;
    case 3: return sqrtf(a);
    case 4: return fmaf(a, b, a);
    case 5: return fminf(a, b);
    case 6: return fmaxf(a, b);
    case 7: return floorf(a);
    case 8: return ceilf(a);
    case 9: return truncf(a);
    case 10: return rintf(a);
    case 11: return fabsf(a);
    case 12: return (float)(int32_t)a;
    case 13: return expf(a);
    case 14: return logf(a);
    case 15: return sinf(a);
    case 16: return cosf(a);
    case 17: return tanhf(a);
    case 18: return erff(a);
    case 19: return powf(a, b);
    case 20: return exp2f(a);
    case 21: return log2f(a);
    case 22: return tanf(a);
    case 23: return atanf(a);
    default: return exp10f(a);
    }
}

static int64_t ordered(float f) {
    int32_t i;
    memcpy(&i, &f, 4);
    return i < 0 ? -(int64_t)(i & 0x7fffffff) : (int64_t)i;
}

static void test_math(void **state) {
    (void)state;
    static const char *names[] = {"+", "*", "/", "sqrtf", "fmaf", "fminf", "fmaxf", "floorf", "ceilf", "truncf",
                                  "rintf", "fabsf", "(float)(int)", "expf", "logf", "sinf", "cosf", "tanhf",
                                  "erff", "powf", "exp2f", "log2f", "tanf", "atanf", "exp10f"};
    const int exact_count = 13; /* the first 13 must be bit-identical */
    const uint32_t n = 1u << 20;
    float *x = (float *)malloc(n * 4), *y = (float *)malloc(n * 4), *out = (float *)malloc(n * 4);
    float *dx = dev_copy<float>(NULL, n), *dy = dev_copy<float>(NULL, n), *dout = dev_copy<float>(NULL, n);
    printf("| function | inputs | max ULP difference CPU vs GPU |\n|---|---|---|\n");
    for (int fn = 0; fn < 25; fn++) {
        uint64_t seed = 100u + (uint64_t)fn;
        for (uint32_t i = 0; i < n; i++) {
            /* log-uniform magnitudes over a useful range; integers for the int conversion */
            uint32_t r = rng_u32(&seed);
            float mag = ldexpf(1.0f + (float)(r & 0xffffu) / 65536.0f, (int)((r >> 16) % 60u) - 30);
            x[i] = (r >> 31) && fn != 3 && fn != 14 && fn != 21 ? -mag : mag;
            y[i] = fn == 19 ? (float)((int)(rng_u32(&seed) % 17u) - 8) * 0.37f : rng_float(&seed);
            if (fn >= 15 && fn <= 16) x[i] = fmodf(x[i], 100.0f);
            if (fn == 13 || fn == 20) x[i] = fmodf(x[i], 80.0f);
            if (fn == 24) x[i] = fmodf(x[i], 38.0f);
            if (fn == 19) x[i] = fabsf(fmodf(x[i], 50.0f));
        }
        CK(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, y, n * 4, cudaMemcpyHostToDevice));
        math_kernel<<<n / 256u, 256>>>(fn, dx, dy, dout, n);
        host_copy(out, dout, n);
        int64_t worst = 0;
        for (uint32_t i = 0; i < n; i++) {
            float c = host_math(fn, x[i], y[i]), g = out[i];
            if (isnan(c) && isnan(g)) continue;
            int64_t d = ordered(c) - ordered(g);
            if (d < 0) d = -d;
            if (d > worst) worst = d;
        }
        printf("| %s | %u | %lld |\n", names[fn], n, (long long)worst);
        if (fn < exact_count && worst != 0) fail_msg("%s differs between CPU and GPU by %lld ULP", names[fn], (long long)worst);
        if (worst > 16) fail_msg("%s differs between CPU and GPU by %lld ULP", names[fn], (long long)worst);
    }
    cudaFree(dx), cudaFree(dy), cudaFree(dout);
    free(x), free(y), free(out);
}

int main(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no CUDA device: skipping\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warp_ops),  cmocka_unit_test(test_f16),   cmocka_unit_test(test_atomic_script),
        cmocka_unit_test(test_reductions), cmocka_unit_test(test_gate), cmocka_unit_test(test_math),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
