/* lang_intrinsics.c - every fast-math and integer intrinsic of the dialect
 * applied to input arrays (module "lang"); test_intrinsics.c compares the
 * results with host references on each backend. */
#include <mox/kernel.h>

#define INT_OPS 12u
#define FAST_OPS 10u

static uint32_t intr_gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

MOX_KERNEL void int_ops(const uint32_t *a, const uint32_t *b, uint32_t *out, uint32_t n) {
    uint32_t i = intr_gid();
    if (i >= n)
        return;
    uint32_t x = a[i], y = b[i];
    int32_t sx = (int32_t)x, sy = (int32_t)y;
    uint32_t *o = out + INT_OPS * i;
    o[0] = mox_popc_u32(x);
    o[1] = mox_clz_u32(x);
    o[2] = mox_ffs_u32(x);
    o[3] = mox_brev_u32(x);
    o[4] = mox_mul24_u32(x, y);
    o[5] = (uint32_t)mox_mul24_i32(sx, sy);
    o[6] = mox_mulhi_u32(x, y);
    o[7] = (uint32_t)mox_mulhi_i32(sx, sy);
    o[8] = mox_min_u32(x, y);
    o[9] = mox_max_u32(x, y);
    o[10] = (uint32_t)mox_min_i32(sx, sy);
    o[11] = (uint32_t)mox_max_i32(sx, sy);
}

/* op selects the function, so each gets inputs from its own range. */
MOX_KERNEL void fast_ops(const float *x, const float *y, float *out, uint32_t op, uint32_t n) {
    uint32_t i = intr_gid();
    if (i >= n)
        return;
    float a = x[i], b = y[i], r;
    switch (op) {
    case 0: r = mox_rsqrtf(a); break;
    case 1: r = mox_fast_expf(a); break;
    case 2: r = mox_fast_logf(a); break;
    case 3: r = mox_fast_log2f(a); break;
    case 4: r = mox_fast_log10f(a); break;
    case 5: r = mox_fast_sinf(a); break;
    case 6: r = mox_fast_cosf(a); break;
    case 7: r = mox_fast_tanf(a); break;
    case 8: r = mox_fast_powf(a, b); break;
    default: r = mox_fast_divf(a, b); break;
    }
    out[i] = r;
}

/* C11 spellings the CUDA translation unit maps to C++ (kernel_cuda.h) and
 * <math.h>'s classification macros, which it implements from the bits:
 * nvcc compiles this file in the test build, so a regression fails there. */
_Static_assert(sizeof(uint32_t) == 4, "uint32_t has 4 bytes");

#define CLASSIFY_WORDS 4u

MOX_KERNEL void classify(const float *x, uint32_t *out, uint32_t n) {
    _Static_assert(_Alignof(float) == 4, "float is 4-byte aligned");
    uint32_t i = intr_gid();
    if (i >= n)
        return;
    _Bool normal = isnormal(x[i]);
    uint32_t *o = out + CLASSIFY_WORDS * i;
    o[0] = normal;
    o[1] = (uint32_t)fpclassify(x[i]);
    o[2] = (uint32_t)_Alignof(mox_float4);
    o[3] = (uint32_t)(isnan(x[i]) ? 1u : 0u) + (isinf(x[i]) ? 2u : 0u) + (isfinite(x[i]) ? 4u : 0u) +
           (signbit(x[i]) ? 8u : 0u);
}

/* exp10f, a GNU extension kernel.h declares (CUDA has it). */
MOX_KERNEL void exp10(const float *x, float *out, uint32_t n) {
    uint32_t i = intr_gid();
    if (i < n)
        out[i] = exp10f(x[i]);
}
