/* mox/kernel_cuda.h - the device dialect's CUDA implementation; included by
 * mox/kernel.h when nvcc compiles kernels_cuda.cu (as C++). The gate the
 * generated __global__ entries use is in mox/kernel_cuda_gate.h, the math
 * intrinsics in mox/kernel_cuda_math.h (both included at the end).
 *
 * Warps: a block's threads form warps of 32 consecutive linear indices
 * (x + dim.x * (y + dim.y * z)), exactly as the hardware groups them. The
 * last warp is partial when the block's thread count is not a multiple of
 * 32: its missing lanes do not exist, so every *_sync call uses the mask of
 * the existing lanes and never takes a value from a missing lane (the
 * identity, or the caller's own value, stands in for it). The CPU side
 * (kernel_cpu.h) computes the same bits.
 */
#ifndef MOX_KERNEL_CUDA_H
#define MOX_KERNEL_CUDA_H

#ifndef MOX_KERNEL_H
#error "include <mox/kernel.h>, not <mox/kernel_cuda.h>"
#endif

#include <cuda_fp16.h>

/* Kernel sources are C11, where `restrict` is a keyword; nvcc compiles them
 * as C++, which spells it __restrict__. */
#ifndef restrict
#define restrict __restrict__
#endif

/* C11 keywords C++ spells differently: _Bool, _Static_assert (the C11
 * two-argument form) and _Alignof (of a type) mean the same there as bool,
 * static_assert and alignof. GCC's <stdbool.h> maps _Bool the same way in
 * C++. */
#ifndef _Bool
#define _Bool bool
#endif
#ifndef _Static_assert
#define _Static_assert static_assert
#endif
#ifndef _Alignof
#define _Alignof alignof
#endif

/* ---- indices ---- */

MOX__FN(mox_dim3) mox__dim3(uint32_t x, uint32_t y, uint32_t z) {
    mox_dim3 d;
    d.x = x;
    d.y = y;
    d.z = z;
    return d;
}
MOX__FN(mox_dim3) mox_thread_idx(void) { return mox__dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
MOX__FN(mox_dim3) mox_block_idx(void) { return mox__dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
MOX__FN(mox_dim3) mox_block_dim(void) { return mox__dim3(blockDim.x, blockDim.y, blockDim.z); }
MOX__FN(mox_dim3) mox_grid_dim(void) { return mox__dim3(gridDim.x, gridDim.y, gridDim.z); }

MOX__FN(void) mox_barrier(void) { __syncthreads(); }

/* The block's dynamic shared memory (MOX_SHARED_DYNAMIC), sized by the
 * launch's shared_bytes; 16-byte aligned for vector types. */
extern __shared__ __align__(16) unsigned char mox__dynamic_smem[];

MOX__FN(uint32_t) mox__linear(void) {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
MOX__FN(uint32_t) mox_lane_id(void) { return mox__linear() % MOX_WARP_SIZE; }
MOX__FN(uint32_t) mox_warp_size(void) { return MOX_WARP_SIZE; }
MOX__FN(uint32_t) mox_warp_id(void) { return mox__linear() / MOX_WARP_SIZE; }
MOX__FN(uint32_t) mox_warps_per_block(void) {
    return (blockDim.x * blockDim.y * blockDim.z + MOX_WARP_SIZE - 1u) / MOX_WARP_SIZE;
}

/* ---- bits ---- */

MOX__FN(uint32_t) mox_f32_to_bits(float f) { return __float_as_uint(f); }
MOX__FN(float) mox_f32_from_bits(uint32_t u) { return __uint_as_float(u); }
MOX__FN(uint32_t) mox__i2u(int32_t v) { return (uint32_t)v; }
MOX__FN(int32_t) mox__u2i(uint32_t u) { return (int32_t)u; } /* C++17 nvcc: modular */

/* ---- warp geometry ---- */

typedef struct mox__warp_geo {
    uint32_t lane; /* the caller's lane */
    uint32_t n;    /* lanes that exist in the caller's warp */
    uint32_t mask; /* their bits */
} mox__warp_geo;

MOX__FN(mox__warp_geo) mox__warp(void) {
    mox__warp_geo g;
    uint32_t linear = mox__linear();
    uint32_t left = blockDim.x * blockDim.y * blockDim.z - (linear & ~(MOX_WARP_SIZE - 1u));
    g.lane = linear % MOX_WARP_SIZE;
    g.n = left < MOX_WARP_SIZE ? left : MOX_WARP_SIZE;
    g.mask = g.n == MOX_WARP_SIZE ? 0xffffffffu : ((1u << g.n) - 1u);
    return g;
}

/* ---- warp: reductions ----
 * Float: xor butterfly, offsets 16, 8, 4, 2, 1, each lane computing
 * own + partner (identity for a partner that does not exist), then lane 0's
 * value is broadcast. Without the broadcast the lanes of a partial warp
 * would disagree (a lane >= 16 can have a partner whose own partner was
 * missing); for full warps it only pins NaN payloads. */

#define MOX__WARP_TREE_F32(v, combine, identity)                                \
    do {                                                                        \
        mox__warp_geo g_ = mox__warp();                                         \
        _Pragma("unroll") for (uint32_t o_ = 16u; o_ > 0u; o_ >>= 1) {          \
            float p_ = __shfl_xor_sync(g_.mask, v, o_);                         \
            if ((g_.lane ^ o_) >= g_.n) p_ = (identity);                        \
            v = combine(v, p_);                                                 \
        }                                                                       \
        v = __shfl_sync(g_.mask, v, 0);                                         \
    } while (0)

MOX__FN(float) mox__add_f32(float a, float b) { return __fadd_rn(a, b); }

MOX__FN(float) mox_warp_sum_f32(float v) {
    MOX__WARP_TREE_F32(v, mox__add_f32, -0.0f);
    return v;
}
MOX__FN(float) mox_warp_min_f32(float v) {
    MOX__WARP_TREE_F32(v, mox__min_f32, mox_f32_from_bits(MOX__F32_QNAN));
    return v;
}
MOX__FN(float) mox_warp_max_f32(float v) {
    MOX__WARP_TREE_F32(v, mox__max_f32, mox_f32_from_bits(MOX__F32_QNAN));
    return v;
}
#undef MOX__WARP_TREE_F32

/* Integer reductions are associative; sm_80+ reduces in one instruction
 * (REDUX), which accepts a partial mask. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define MOX__HAVE_REDUX 1
#endif

#ifdef MOX__HAVE_REDUX
MOX__FN(uint32_t) mox_warp_sum_u32(uint32_t v) { return __reduce_add_sync(mox__warp().mask, v); }
MOX__FN(int32_t) mox_warp_sum_i32(int32_t v) { return (int32_t)__reduce_add_sync(mox__warp().mask, (unsigned)v); }
MOX__FN(uint32_t) mox_warp_min_u32(uint32_t v) { return __reduce_min_sync(mox__warp().mask, v); }
MOX__FN(int32_t) mox_warp_min_i32(int32_t v) { return __reduce_min_sync(mox__warp().mask, (int)v); }
MOX__FN(uint32_t) mox_warp_max_u32(uint32_t v) { return __reduce_max_sync(mox__warp().mask, v); }
MOX__FN(int32_t) mox_warp_max_i32(int32_t v) { return __reduce_max_sync(mox__warp().mask, (int)v); }
MOX__FN(uint32_t) mox_warp_and_u32(uint32_t v) { return __reduce_and_sync(mox__warp().mask, v); }
MOX__FN(uint32_t) mox_warp_or_u32(uint32_t v) { return __reduce_or_sync(mox__warp().mask, v); }
MOX__FN(uint32_t) mox_warp_xor_u32(uint32_t v) { return __reduce_xor_sync(mox__warp().mask, v); }
#else
/* Pre-Ampere: a butterfly whose missing partners give the identity; the
 * result is the same for any order, broadcast from lane 0 like floats. */
#define MOX__WARP_TREE_U(T, v, expr, identity)                                  \
    do {                                                                        \
        mox__warp_geo g_ = mox__warp();                                         \
        for (uint32_t o_ = 16u; o_ > 0u; o_ >>= 1) {                            \
            T p_ = __shfl_xor_sync(g_.mask, v, o_);                             \
            if ((g_.lane ^ o_) >= g_.n) p_ = (identity);                        \
            v = (expr);                                                         \
        }                                                                       \
        v = __shfl_sync(g_.mask, v, 0);                                         \
    } while (0)
MOX__FN(uint32_t) mox_warp_sum_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, v + p_, 0u); return v; }
MOX__FN(int32_t) mox_warp_sum_i32(int32_t v) { return (int32_t)mox_warp_sum_u32((uint32_t)v); }
MOX__FN(uint32_t) mox_warp_min_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, p_ < v ? p_ : v, 0xffffffffu); return v; }
MOX__FN(int32_t) mox_warp_min_i32(int32_t v) { MOX__WARP_TREE_U(int32_t, v, p_ < v ? p_ : v, INT32_MAX); return v; }
MOX__FN(uint32_t) mox_warp_max_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, p_ > v ? p_ : v, 0u); return v; }
MOX__FN(int32_t) mox_warp_max_i32(int32_t v) { MOX__WARP_TREE_U(int32_t, v, p_ > v ? p_ : v, INT32_MIN); return v; }
MOX__FN(uint32_t) mox_warp_and_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, v & p_, 0xffffffffu); return v; }
MOX__FN(uint32_t) mox_warp_or_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, v | p_, 0u); return v; }
MOX__FN(uint32_t) mox_warp_xor_u32(uint32_t v) { MOX__WARP_TREE_U(uint32_t, v, v ^ p_, 0u); return v; }
#undef MOX__WARP_TREE_U
#endif
MOX__FN(int32_t) mox_warp_and_i32(int32_t v) { return (int32_t)mox_warp_and_u32((uint32_t)v); }
MOX__FN(int32_t) mox_warp_or_i32(int32_t v) { return (int32_t)mox_warp_or_u32((uint32_t)v); }
MOX__FN(int32_t) mox_warp_xor_i32(int32_t v) { return (int32_t)mox_warp_xor_u32((uint32_t)v); }

/* ---- warp: scans ----
 * Hillis-Steele, shuffle-up offsets 1, 2, 4, 8, 16: a lane >= d adds the
 * value of lane - d on its left (t + v); lanes < d keep theirs. Sources are
 * always below the caller, so they exist even in a partial warp. */

MOX__FN(float) mox_warp_inclusive_sum_f32(float v) {
    mox__warp_geo g = mox__warp();
#pragma unroll
    for (uint32_t d = 1u; d < MOX_WARP_SIZE; d <<= 1) {
        float t = __shfl_up_sync(g.mask, v, d);
        if (g.lane >= d) v = __fadd_rn(t, v);
    }
    return v;
}
MOX__FN(float) mox_warp_exclusive_sum_f32(float v) {
    mox__warp_geo g = mox__warp();
    float t = __shfl_up_sync(g.mask, mox_warp_inclusive_sum_f32(v), 1u);
    return g.lane == 0 ? 0.0f : t;
}
MOX__FN(uint32_t) mox_warp_inclusive_sum_u32(uint32_t v) {
    mox__warp_geo g = mox__warp();
#pragma unroll
    for (uint32_t d = 1u; d < MOX_WARP_SIZE; d <<= 1) {
        uint32_t t = __shfl_up_sync(g.mask, v, d);
        if (g.lane >= d) v = t + v;
    }
    return v;
}
/* Integer sums wrap, so inclusive - own value is the exclusive sum exactly:
 * one shuffle fewer than taking the left neighbour's inclusive sum. */
MOX__FN(uint32_t) mox_warp_exclusive_sum_u32(uint32_t v) {
    return mox_warp_inclusive_sum_u32(v) - v;
}
MOX__FN(int32_t) mox_warp_inclusive_sum_i32(int32_t v) { return (int32_t)mox_warp_inclusive_sum_u32((uint32_t)v); }
MOX__FN(int32_t) mox_warp_exclusive_sum_i32(int32_t v) { return (int32_t)mox_warp_exclusive_sum_u32((uint32_t)v); }

/* ---- warp: shuffles ----
 * The hardware only looks at the low 5 bits of the lane operand and reads
 * garbage from lanes outside the mask; both cases are replaced by the
 * caller's own value, the documented result. */

#define MOX__SHUFFLES(T)                                                        \
    MOX__FN(T) mox__shfl_idx(T v, uint32_t src) {                               \
        mox__warp_geo g = mox__warp();                                          \
        T r = __shfl_sync(g.mask, v, (int)(src & 31u));                         \
        return src < g.n ? r : v;                                               \
    }                                                                           \
    MOX__FN(T) mox__shfl_up(T v, uint32_t delta) {                              \
        mox__warp_geo g = mox__warp();                                          \
        T r = __shfl_up_sync(g.mask, v, delta & 31u);                           \
        return delta <= g.lane ? r : v;                                         \
    }                                                                           \
    MOX__FN(T) mox__shfl_down(T v, uint32_t delta) {                            \
        mox__warp_geo g = mox__warp();                                          \
        T r = __shfl_down_sync(g.mask, v, delta & 31u);                         \
        return delta < MOX_WARP_SIZE && g.lane + delta < g.n ? r : v;           \
    }                                                                           \
    MOX__FN(T) mox__shfl_xor(T v, uint32_t lane_mask) {                         \
        mox__warp_geo g = mox__warp();                                          \
        T r = __shfl_xor_sync(g.mask, v, (int)(lane_mask & 31u));               \
        return (g.lane ^ lane_mask) < g.n ? r : v;                              \
    }
MOX__SHUFFLES(float)
MOX__SHUFFLES(uint32_t)
MOX__SHUFFLES(int32_t)
#undef MOX__SHUFFLES

#define MOX__SHUFFLE_NAMES(sfx, T)                                                              \
    MOX__FN(T) mox_warp_shuffle_##sfx(T v, uint32_t s) { return mox__shfl_idx(v, s); }          \
    MOX__FN(T) mox_warp_shuffle_up_##sfx(T v, uint32_t d) { return mox__shfl_up(v, d); }        \
    MOX__FN(T) mox_warp_shuffle_down_##sfx(T v, uint32_t d) { return mox__shfl_down(v, d); }    \
    MOX__FN(T) mox_warp_shuffle_xor_##sfx(T v, uint32_t m) { return mox__shfl_xor(v, m); }
MOX__SHUFFLE_NAMES(f32, float)
MOX__SHUFFLE_NAMES(u32, uint32_t)
MOX__SHUFFLE_NAMES(i32, int32_t)
#undef MOX__SHUFFLE_NAMES

/* ---- warp: votes ---- */

MOX__FN(bool) mox_warp_any(bool p) { return __any_sync(mox__warp().mask, p) != 0; }
MOX__FN(bool) mox_warp_all(bool p) { return __all_sync(mox__warp().mask, p) != 0; }
MOX__FN(uint64_t) mox_warp_ballot(bool p) { return (uint64_t)__ballot_sync(mox__warp().mask, p); }

/* ---- atomics: relaxed, device scope. Plain volatile accesses are the
 * relaxed load/store of the CUDA memory model for aligned 32-bit words. ---- */

#define MOX__ATOMICS(sfx, T, A)                                                                    \
    MOX__FN(T) mox_atomic_load_##sfx(const A *p) { return *(const volatile T *)&p->value; }        \
    MOX__FN(void) mox_atomic_store_##sfx(A *p, T v) { *(volatile T *)&p->value = v; }             \
    MOX__FN(T) mox_atomic_exchange_##sfx(A *p, T v) { return atomicExch(&p->value, v); }          \
    MOX__FN(T) mox_atomic_add_##sfx(A *p, T v) { return atomicAdd(&p->value, v); }                \
    MOX__FN(T) mox_atomic_sub_##sfx(A *p, T v) { return atomicSub(&p->value, v); }                \
    MOX__FN(T) mox_atomic_min_##sfx(A *p, T v) { return atomicMin(&p->value, v); }                \
    MOX__FN(T) mox_atomic_max_##sfx(A *p, T v) { return atomicMax(&p->value, v); }                \
    MOX__FN(T) mox_atomic_and_##sfx(A *p, T v) { return atomicAnd(&p->value, v); }                \
    MOX__FN(T) mox_atomic_or_##sfx(A *p, T v) { return atomicOr(&p->value, v); }                  \
    MOX__FN(T) mox_atomic_xor_##sfx(A *p, T v) { return atomicXor(&p->value, v); }                \
    MOX__FN(bool) mox_atomic_cas_##sfx(A *p, T *expected, T desired) {                             \
        T seen = atomicCAS(&p->value, *expected, desired);                                         \
        bool ok = seen == *expected;                                                               \
        *expected = seen;                                                                          \
        return ok;                                                                                 \
    }
MOX__ATOMICS(u32, uint32_t, mox_atomic_u32)
MOX__ATOMICS(i32, int32_t, mox_atomic_i32)
#undef MOX__ATOMICS

/* ---- f16 ----
 * cvt.rn.f16.f32 and cvt.f32.f16; any NaN becomes the canonical NaN
 * (0x7fff / 0x7fffffff). The selects pin that down rather than relying on
 * the hardware's NaN rule, so the CPU conversion can match exactly. */

MOX__FN(mox_f16) mox_f16_from_bits(uint16_t bits) {
    mox_f16 h;
    h.bits = bits;
    return h;
}
MOX__FN(uint16_t) mox_f16_to_bits(mox_f16 h) { return h.bits; }
MOX__FN(mox_f16) mox_f16_from_f32(float f) {
    uint16_t b = __half_as_ushort(__float2half_rn(f));
    return mox_f16_from_bits(f != f ? (uint16_t)0x7fffu : b);
}
MOX__FN(float) mox_f16_to_f32(mox_f16 h) {
    float f = __half2float(__ushort_as_half(h.bits));
    return f != f ? mox_f32_from_bits(MOX__F32_QNAN) : f;
}

#include <mox/kernel_cuda_gate.h>
#include <mox/kernel_cuda_math.h>

#endif
