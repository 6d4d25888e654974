/* mox/kernel.h - the device dialect: what kernel sources include.
 *
 * One header, three modes, chosen by the compiler that reads it:
 *   __MOXC__    moxc's front end (libclang, C11): markers become `annotate`
 *               attributes and every intrinsic is a plain prototype, so the
 *               front end sees names and types but no implementation.
 *   __CUDACC__  nvcc compiling kernels_cuda.cu as C++ (mox/kernel_cuda.h).
 *   otherwise   the host C compiler building kernels_cpu.so
 *               (mox/kernel_cpu.h): intrinsics talk to the CPU block
 *               executor through the running thread's mox_cpu_lane.
 *
 * Kernel sources are the common subset of C11 and C++17 (see
 * docs/kernel-language.md): both backends compile the very same text.
 * Every intrinsic has the same result bits on both sides; the few places
 * where that cannot hold (NaN payloads, transcendental math) are documented.
 */
#ifndef MOX_KERNEL_H
#define MOX_KERNEL_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <math.h>
#ifndef __cplusplus
/* exp10f belongs to the dialect's math (CUDA has it); glibc declares it
 * only under _GNU_SOURCE, but libm always exports it. */
float exp10f(float x);
#endif

#include <mox/kernel_abi.h>
/* mox_dim3 comes from the host header so that a translation unit that sees
 * both (a test, a tool) has one definition; it has the same layout as
 * mox_kdim3. It also brings mox_f16 and the vector types
 * (mox/vector_types.h). */
#include <mox/types.h>

/* Storage-only types. moxc recognises these typedef names; do not rename.
 * Atomic buffers and shared atomics are arrays of mox_atomic_u32/i32 and
 * are only touched through the mox_atomic_* intrinsics. */
typedef struct mox_atomic_u32 {
    uint32_t value;
} mox_atomic_u32;
typedef struct mox_atomic_i32 {
    int32_t value;
} mox_atomic_i32;

#define MOX_WARP_SIZE 32u

/* The NaN both backends produce (CUDA's canonical NaN); also the identity
 * of the float warp min/max. */
#define MOX__F32_QNAN 0x7fffffffu

#define MOX__STR(x) #x
#define MOX__XSTR(x) MOX__STR(x)

#if defined(__MOXC__)

/* ---------------- moxc front end ---------------- */

#define MOX_KERNEL __attribute__((annotate("mox_kernel")))
/* The arguments are macro-expanded then stringised: moxc evaluates the
 * text of each as an integer constant expression. */
#define MOX_BLOCK(x, y, z) \
    __attribute__((annotate("mox_block:" MOX__XSTR(x) "," MOX__XSTR(y) "," MOX__XSTR(z))))
#define MOX_SHARED(T, name, N) static __attribute__((annotate("mox_shared"))) T name[N]
#define MOX_TABLE(T, name, N) __attribute__((annotate("mox_table:" MOX__XSTR(N)))) const T name[N]
#define MOX_SHARED_DYNAMIC(T, name) \
    __attribute__((annotate("mox_shared_dynamic"))) T *const name = (T *)mox__dynamic_shared()
/* moxc checks that a helper defined in a header carries it. */
#define MOX_DEVICE __attribute__((annotate("mox_device")))

#define MOX__FN(ret) ret
#define MOX__DECL_ONLY 1

#elif defined(__CUDACC__)

#define MOX_KERNEL __device__
/* The generated __global__ entry carries __launch_bounds__ instead. */
#define MOX_BLOCK(x, y, z)
#define MOX_SHARED(T, name, N) __shared__ T name[N]
/* The entry receives the table by value as a __grid_constant__ parameter
 * (the constant bank) and passes the kernel its address. */
#define MOX_TABLE(T, name, N) const T name[N]
/* All dynamic shared memory of a block starts at one 16-byte aligned
 * extern __shared__ array (kernel_cuda.h), sized by the launch. */
#define MOX_SHARED_DYNAMIC(T, name) T *const name = (T *)(void *)mox__dynamic_smem
#define MOX_DEVICE __device__
#define MOX__FN(ret) static __device__ __forceinline__ ret

#else

#define MOX_KERNEL
#define MOX_BLOCK(x, y, z)
/* Block-shared memory on the CPU is thread-local static storage: a worker
 * thread runs one block at a time, and every thread of that block is a
 * fiber on that same worker, so the worker's copy is exactly the block's
 * shared memory. Like CUDA shared memory it is not initialised between
 * blocks (it keeps whatever the previous block on that worker left). */
#ifdef __cplusplus
#define MOX_SHARED(T, name, N) static thread_local T name[N]
#else
#define MOX_SHARED(T, name, N) static _Thread_local T name[N]
#endif
/* The kernel reads the table in place, in the launch's copy of it. */
#define MOX_TABLE(T, name, N) const T name[N]
/* The executor gives each block its dynamic shared memory in the lane. */
#define MOX_SHARED_DYNAMIC(T, name) T *const name = (T *)mox__dynamic_shared()
#define MOX_DEVICE
#define MOX__FN(ret) static inline ret

#endif

/* ---------------- intrinsics ----------------
 * In __MOXC__ mode these are the declarations moxc resolves calls against;
 * in the other modes the same list is defined by the backend header. */
#ifdef MOX__DECL_ONLY
#define MOX__I(ret, name_and_params) ret name_and_params;
#else
#define MOX__I(ret, name_and_params)
#endif

/* Indices and sizes: CUDA's threadIdx, blockIdx, blockDim, gridDim. */
MOX__I(mox_dim3, mox_thread_idx(void))
MOX__I(mox_dim3, mox_block_idx(void))
MOX__I(mox_dim3, mox_block_dim(void))
MOX__I(mox_dim3, mox_grid_dim(void))

/* Waits until every thread of the block arrived; orders shared memory. */
MOX__I(void, mox_barrier(void))

/* Warps are 32 consecutive linear thread indices
 * (x + dim.x * (y + dim.y * z)); the last warp of a block may be partial. */
MOX__I(uint32_t, mox_lane_id(void))
MOX__I(uint32_t, mox_warp_size(void))
MOX__I(uint32_t, mox_warp_id(void))
MOX__I(uint32_t, mox_warps_per_block(void))

/* Reductions over the warp's active lanes, result on every lane. */
MOX__I(float, mox_warp_sum_f32(float v))
MOX__I(uint32_t, mox_warp_sum_u32(uint32_t v))
MOX__I(int32_t, mox_warp_sum_i32(int32_t v))
MOX__I(float, mox_warp_min_f32(float v))
MOX__I(uint32_t, mox_warp_min_u32(uint32_t v))
MOX__I(int32_t, mox_warp_min_i32(int32_t v))
MOX__I(float, mox_warp_max_f32(float v))
MOX__I(uint32_t, mox_warp_max_u32(uint32_t v))
MOX__I(int32_t, mox_warp_max_i32(int32_t v))
MOX__I(uint32_t, mox_warp_and_u32(uint32_t v))
MOX__I(int32_t, mox_warp_and_i32(int32_t v))
MOX__I(uint32_t, mox_warp_or_u32(uint32_t v))
MOX__I(int32_t, mox_warp_or_i32(int32_t v))
MOX__I(uint32_t, mox_warp_xor_u32(uint32_t v))
MOX__I(int32_t, mox_warp_xor_i32(int32_t v))

/* Prefix sums over the active lanes in lane order. */
MOX__I(float, mox_warp_inclusive_sum_f32(float v))
MOX__I(uint32_t, mox_warp_inclusive_sum_u32(uint32_t v))
MOX__I(int32_t, mox_warp_inclusive_sum_i32(int32_t v))
MOX__I(float, mox_warp_exclusive_sum_f32(float v))
MOX__I(uint32_t, mox_warp_exclusive_sum_u32(uint32_t v))
MOX__I(int32_t, mox_warp_exclusive_sum_i32(int32_t v))

/* Shuffles: a source lane that is not active yields the caller's own v. */
MOX__I(float, mox_warp_shuffle_f32(float v, uint32_t src_lane))
MOX__I(uint32_t, mox_warp_shuffle_u32(uint32_t v, uint32_t src_lane))
MOX__I(int32_t, mox_warp_shuffle_i32(int32_t v, uint32_t src_lane))
MOX__I(float, mox_warp_shuffle_up_f32(float v, uint32_t delta))
MOX__I(uint32_t, mox_warp_shuffle_up_u32(uint32_t v, uint32_t delta))
MOX__I(int32_t, mox_warp_shuffle_up_i32(int32_t v, uint32_t delta))
MOX__I(float, mox_warp_shuffle_down_f32(float v, uint32_t delta))
MOX__I(uint32_t, mox_warp_shuffle_down_u32(uint32_t v, uint32_t delta))
MOX__I(int32_t, mox_warp_shuffle_down_i32(int32_t v, uint32_t delta))
MOX__I(float, mox_warp_shuffle_xor_f32(float v, uint32_t lane_mask))
MOX__I(uint32_t, mox_warp_shuffle_xor_u32(uint32_t v, uint32_t lane_mask))
MOX__I(int32_t, mox_warp_shuffle_xor_i32(int32_t v, uint32_t lane_mask))

/* Votes over the active lanes; ballot bit i = lane i, other bits zero. */
MOX__I(bool, mox_warp_any(bool p))
MOX__I(bool, mox_warp_all(bool p))
MOX__I(uint64_t, mox_warp_ballot(bool p))

/* Atomics (relaxed; read-modify-writes return the previous value; integer
 * arithmetic wraps). CAS is strong: on failure *expected gets the value
 * seen. */
MOX__I(uint32_t, mox_atomic_load_u32(const mox_atomic_u32 *p))
MOX__I(void, mox_atomic_store_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_exchange_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_add_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_sub_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_min_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_max_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_and_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_or_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(uint32_t, mox_atomic_xor_u32(mox_atomic_u32 *p, uint32_t v))
MOX__I(bool, mox_atomic_cas_u32(mox_atomic_u32 *p, uint32_t *expected, uint32_t desired))
MOX__I(int32_t, mox_atomic_load_i32(const mox_atomic_i32 *p))
MOX__I(void, mox_atomic_store_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_exchange_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_add_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_sub_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_min_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_max_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_and_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_or_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(int32_t, mox_atomic_xor_i32(mox_atomic_i32 *p, int32_t v))
MOX__I(bool, mox_atomic_cas_i32(mox_atomic_i32 *p, int32_t *expected, int32_t desired))

/* binary16: from_f32 rounds to nearest even (overflow to inf, any NaN to
 * 0x7fff); to_f32 is exact (any NaN to 0x7fffffff). */
MOX__I(mox_f16, mox_f16_from_f32(float f))
MOX__I(float, mox_f16_to_f32(mox_f16 h))
MOX__I(mox_f16, mox_f16_from_bits(uint16_t bits))
MOX__I(uint16_t, mox_f16_to_bits(mox_f16 h))
MOX__I(uint32_t, mox_f32_to_bits(float f))
MOX__I(float, mox_f32_from_bits(uint32_t bits))

/* Fast math (CUDA's __expf family): the GPU uses its approximate hardware
 * paths, the CPU the accurate libm function; docs/kernel-language.md gives
 * each one's error bound. */
MOX__I(float, mox_rsqrtf(float x))
MOX__I(float, mox_fast_expf(float x))
MOX__I(float, mox_fast_logf(float x))
MOX__I(float, mox_fast_log2f(float x))
MOX__I(float, mox_fast_log10f(float x))
MOX__I(float, mox_fast_sinf(float x))
MOX__I(float, mox_fast_cosf(float x))
MOX__I(float, mox_fast_tanf(float x))
MOX__I(float, mox_fast_powf(float x, float y))
MOX__I(float, mox_fast_divf(float x, float y))

/* Integer intrinsics, the same bits on both backends (CUDA's __popc, __clz,
 * __ffs, __brev, __umul24/__mul24, __umulhi/__mulhi, min, max). */
MOX__I(uint32_t, mox_popc_u32(uint32_t x))
MOX__I(uint32_t, mox_clz_u32(uint32_t x))
MOX__I(uint32_t, mox_ffs_u32(uint32_t x))
MOX__I(uint32_t, mox_brev_u32(uint32_t x))
MOX__I(uint32_t, mox_mul24_u32(uint32_t a, uint32_t b))
MOX__I(int32_t, mox_mul24_i32(int32_t a, int32_t b))
MOX__I(uint32_t, mox_mulhi_u32(uint32_t a, uint32_t b))
MOX__I(int32_t, mox_mulhi_i32(int32_t a, int32_t b))
MOX__I(uint32_t, mox_min_u32(uint32_t a, uint32_t b))
MOX__I(uint32_t, mox_max_u32(uint32_t a, uint32_t b))
MOX__I(int32_t, mox_min_i32(int32_t a, int32_t b))
MOX__I(int32_t, mox_max_i32(int32_t a, int32_t b))

/* Records a device-side failure of this dispatch (first code wins) and
 * returns; the calling thread goes on unless it returns itself. */
MOX__I(void, mox_fail(uint32_t code))

/* The block's dynamic shared memory (what MOX_SHARED_DYNAMIC points at). */
MOX__I(void *, mox__dynamic_shared(void))

#undef MOX__I

#if !defined(MOX__DECL_ONLY)

/* ---------------- shared by both backends ----------------
 * Helpers whose results must be bit-identical on CPU and GPU live here,
 * compiled once per side from the same text. */

/* The combiner of mox_warp_min_f32: fminf's NaN rule (a NaN operand is
 * ignored unless both are NaN) plus a fixed zero order (-0 < +0), so the
 * result never depends on operand order or on a libm. */
MOX__FN(float) mox__min_f32(float a, float b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a < b) return a;
    if (b < a) return b;
    return signbit(a) ? a : b;
}
MOX__FN(float) mox__max_f32(float a, float b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a > b) return a;
    if (b > a) return b;
    return signbit(a) ? b : a;
}

#if defined(__CUDACC__)
#include <mox/kernel_cuda.h>
#else
#include <mox/kernel_cpu.h>
#endif

#endif /* !MOX__DECL_ONLY */

#endif
