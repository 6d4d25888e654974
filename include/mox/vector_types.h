/* mox/vector_types.h - the dialect's vector types and mox_f16, shared by
 * kernels, host programs and generated bindings (mox/types.h and
 * mox/kernel.h include it).
 *
 * Sizes and alignments are CUDA's, so a buffer of mox_float4 is a buffer of
 * float4 and records holding vectors lay out the same on the host, the CPU
 * backend and the GPU:
 *
 *   type                                  lanes  size  align   ABI element
 *   mox_float2 / mox_int2 / mox_uint2        2     8      8    f32x2 i32x2 u32x2
 *   mox_float3 / mox_int3 / mox_uint3        3    12      4    f32x3 i32x3 u32x3
 *   mox_float4 / mox_int4 / mox_uint4        4    16     16    f32x4 i32x4 u32x4
 *   mox_half2 (two mox_f16)                  2     4      4    f16x2
 *
 * Under nvcc the float, int and uint vectors are CUDA's own float2 ... uint4
 * (so loading or storing a whole vector is one ld/st.global.v2/.v4), and
 * mox_half2 is layout-identical to __half2 with mox_f16 lanes. Components
 * are .x .y .z .w; there are no vector operators (as in CUDA): build values
 * with mox_make_<type>() and compute lane by lane. */
#ifndef MOX_VECTOR_TYPES_H
#define MOX_VECTOR_TYPES_H

#include <stdint.h>

/* Records that over-align a member write C11's `_Alignas(N)`; nvcc compiles
 * the CUDA translation unit as C++, and C++ hosts may include the same
 * record headers, so in C++ the C11 spelling means `alignas`. */
#if defined(__cplusplus) && !defined(_Alignas)
#define _Alignas(x) alignas(x)
#endif

/* IEEE binary16 bits (a storage type); kernels convert with
 * mox_f16_to_f32 / mox_f16_from_f32. moxc recognises this name. */
typedef struct mox_f16 {
    uint16_t bits;
} mox_f16;

#if defined(__CUDACC__)

#include <vector_types.h>

typedef float2 mox_float2;
typedef float3 mox_float3;
typedef float4 mox_float4;
typedef int2 mox_int2;
typedef int3 mox_int3;
typedef int4 mox_int4;
typedef uint2 mox_uint2;
typedef uint3 mox_uint3;
typedef uint4 mox_uint4;
typedef struct alignas(4) mox_half2 {
    mox_f16 x, y;
} mox_half2;

#define MOX__VFN static __host__ __device__ __forceinline__

#else

/* The over-alignment sits on the first member: C11 has no aligned struct
 * types, and an aligned first member gives the struct its alignment. */
#define MOX__VEC2(name, T, align) typedef struct name { _Alignas(align) T x; T y; } name;
#define MOX__VEC3(name, T) typedef struct name { T x, y, z; } name;
#define MOX__VEC4(name, T) typedef struct name { _Alignas(16) T x; T y, z, w; } name;
MOX__VEC2(mox_float2, float, 8)
MOX__VEC3(mox_float3, float)
MOX__VEC4(mox_float4, float)
MOX__VEC2(mox_int2, int32_t, 8)
MOX__VEC3(mox_int3, int32_t)
MOX__VEC4(mox_int4, int32_t)
MOX__VEC2(mox_uint2, uint32_t, 8)
MOX__VEC3(mox_uint3, uint32_t)
MOX__VEC4(mox_uint4, uint32_t)
MOX__VEC2(mox_half2, mox_f16, 4)
#undef MOX__VEC2
#undef MOX__VEC3
#undef MOX__VEC4

#define MOX__VFN static inline

#endif

/* Constructors (CUDA's make_float4 ...), usable in kernels and host code. */
#define MOX__MAKE2(name, T)                                                    \
    MOX__VFN mox_##name mox_make_##name(T x, T y) {                            \
        mox_##name v;                                                          \
        v.x = x;                                                               \
        v.y = y;                                                               \
        return v;                                                              \
    }
#define MOX__MAKE3(name, T)                                                    \
    MOX__VFN mox_##name mox_make_##name(T x, T y, T z) {                       \
        mox_##name v;                                                          \
        v.x = x;                                                               \
        v.y = y;                                                               \
        v.z = z;                                                               \
        return v;                                                              \
    }
#define MOX__MAKE4(name, T)                                                    \
    MOX__VFN mox_##name mox_make_##name(T x, T y, T z, T w) {                  \
        mox_##name v;                                                          \
        v.x = x;                                                               \
        v.y = y;                                                               \
        v.z = z;                                                               \
        v.w = w;                                                               \
        return v;                                                              \
    }
MOX__MAKE2(float2, float)
MOX__MAKE3(float3, float)
MOX__MAKE4(float4, float)
MOX__MAKE2(int2, int32_t)
MOX__MAKE3(int3, int32_t)
MOX__MAKE4(int4, int32_t)
MOX__MAKE2(uint2, uint32_t)
MOX__MAKE3(uint3, uint32_t)
MOX__MAKE4(uint4, uint32_t)
MOX__MAKE2(half2, mox_f16)
#undef MOX__MAKE2
#undef MOX__MAKE3
#undef MOX__MAKE4

#endif
