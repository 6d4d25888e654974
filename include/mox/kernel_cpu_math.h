/* mox/kernel_cpu_math.h - the CPU side of the dialect's fast-math and
 * integer intrinsics; included by mox/kernel_cpu.h.
 *
 * The fast variants compute the accurate single-precision libm function (a
 * CPU has no cheaper approximation to offer): their results differ from the
 * GPU's by the GPU approximation's error (docs/kernel-language.md). The
 * integer intrinsics give exactly CUDA's bits. */
#ifndef MOX_KERNEL_CPU_MATH_H
#define MOX_KERNEL_CPU_MATH_H

#ifndef MOX_KERNEL_CPU_H
#error "include <mox/kernel.h>, not <mox/kernel_cpu_math.h>"
#endif

/* ---- fast math ---- */

static inline float mox_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline float mox_fast_expf(float x) { return expf(x); }
static inline float mox_fast_logf(float x) { return logf(x); }
static inline float mox_fast_log2f(float x) { return log2f(x); }
static inline float mox_fast_log10f(float x) { return log10f(x); }
static inline float mox_fast_sinf(float x) { return sinf(x); }
static inline float mox_fast_cosf(float x) { return cosf(x); }
static inline float mox_fast_tanf(float x) { return tanf(x); }
static inline float mox_fast_powf(float x, float y) { return powf(x, y); }
static inline float mox_fast_divf(float x, float y) { return x / y; }

/* ---- integers ---- */

static inline uint32_t mox_popc_u32(uint32_t x) { return (uint32_t)__builtin_popcount(x); }
static inline uint32_t mox_clz_u32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : 32u; }
static inline uint32_t mox_ffs_u32(uint32_t x) { return x ? (uint32_t)__builtin_ctz(x) + 1u : 0u; }
static inline uint32_t mox_brev_u32(uint32_t x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
/* The low 24 bits of each operand (sign-extended from bit 23 for i32),
 * multiplied; the low 32 bits of the 48-bit product. */
static inline uint32_t mox_mul24_u32(uint32_t a, uint32_t b) {
    return (uint32_t)((uint64_t)(a & 0xffffffu) * (b & 0xffffffu));
}
static inline int64_t mox__sext24(int32_t v) {
    return (int64_t)((mox__i2u(v) & 0xffffffu) ^ 0x800000u) - 0x800000;
}
static inline int32_t mox_mul24_i32(int32_t a, int32_t b) {
    return mox__u2i((uint32_t)(uint64_t)(mox__sext24(a) * mox__sext24(b)));
}
/* The high 32 bits of the 64-bit product. */
static inline uint32_t mox_mulhi_u32(uint32_t a, uint32_t b) {
    return (uint32_t)(((uint64_t)a * b) >> 32);
}
static inline int32_t mox_mulhi_i32(int32_t a, int32_t b) {
    return mox__u2i((uint32_t)((uint64_t)((int64_t)a * b) >> 32));
}
static inline uint32_t mox_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t mox_max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline int32_t mox_min_i32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t mox_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }

#endif
