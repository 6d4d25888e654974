/* mox/kernel_cuda_math.h - the CUDA side of the dialect's fast-math and
 * integer intrinsics; included by mox/kernel_cuda.h. Each is the CUDA
 * intrinsic of the same meaning (mox_fast_expf is __expf, ...): the fast
 * variants use the GPU's approximate hardware paths whatever nvcc's
 * -prec-div/-prec-sqrt/-fmad flags say. */
#ifndef MOX_KERNEL_CUDA_MATH_H
#define MOX_KERNEL_CUDA_MATH_H

#ifndef MOX_KERNEL_CUDA_H
#error "include <mox/kernel.h>, not <mox/kernel_cuda_math.h>"
#endif

/* ---- fast math ---- */

MOX__FN(float) mox_rsqrtf(float x) { return rsqrtf(x); }
MOX__FN(float) mox_fast_expf(float x) { return __expf(x); }
MOX__FN(float) mox_fast_logf(float x) { return __logf(x); }
MOX__FN(float) mox_fast_log2f(float x) { return __log2f(x); }
MOX__FN(float) mox_fast_log10f(float x) { return __log10f(x); }
MOX__FN(float) mox_fast_sinf(float x) { return __sinf(x); }
MOX__FN(float) mox_fast_cosf(float x) { return __cosf(x); }
MOX__FN(float) mox_fast_tanf(float x) { return __tanf(x); }
MOX__FN(float) mox_fast_powf(float x, float y) { return __powf(x, y); }
MOX__FN(float) mox_fast_divf(float x, float y) { return __fdividef(x, y); }

/* ---- classification ----
 * In C (the CPU) <math.h>'s isnormal and fpclassify are macros over
 * __builtin_isnormal / __builtin_fpclassify; in C++ they are constexpr
 * host functions nvcc refuses in device code. These compute the same
 * results from the bits (subnormals are kept on both sides), with the
 * host's FP_* values. */
MOX__FN(int) mox__isnormal(float x) {
    uint32_t e = (__float_as_uint(x) >> 23) & 0xffu;
    return e != 0u && e != 0xffu;
}
MOX__FN(int) mox__fpclassify(float x) {
    uint32_t b = __float_as_uint(x) & 0x7fffffffu;
    if (b == 0u) return FP_ZERO;
    if (b < 0x00800000u) return FP_SUBNORMAL;
    if (b < 0x7f800000u) return FP_NORMAL;
    return b == 0x7f800000u ? FP_INFINITE : FP_NAN;
}
#undef isnormal
#undef fpclassify
#define isnormal(x) mox__isnormal(x)
#define fpclassify(x) mox__fpclassify(x)

/* ---- integers ---- */

MOX__FN(uint32_t) mox_popc_u32(uint32_t x) { return (uint32_t)__popc(x); }
MOX__FN(uint32_t) mox_clz_u32(uint32_t x) { return (uint32_t)__clz(mox__u2i(x)); }
MOX__FN(uint32_t) mox_ffs_u32(uint32_t x) { return (uint32_t)__ffs(mox__u2i(x)); }
MOX__FN(uint32_t) mox_brev_u32(uint32_t x) { return __brev(x); }
MOX__FN(uint32_t) mox_mul24_u32(uint32_t a, uint32_t b) { return __umul24(a, b); }
MOX__FN(int32_t) mox_mul24_i32(int32_t a, int32_t b) { return __mul24(a, b); }
MOX__FN(uint32_t) mox_mulhi_u32(uint32_t a, uint32_t b) { return __umulhi(a, b); }
MOX__FN(int32_t) mox_mulhi_i32(int32_t a, int32_t b) { return __mulhi(a, b); }
MOX__FN(uint32_t) mox_min_u32(uint32_t a, uint32_t b) { return umin(a, b); }
MOX__FN(uint32_t) mox_max_u32(uint32_t a, uint32_t b) { return umax(a, b); }
MOX__FN(int32_t) mox_min_i32(int32_t a, int32_t b) { return min(a, b); }
MOX__FN(int32_t) mox_max_i32(int32_t a, int32_t b) { return max(a, b); }

#endif
