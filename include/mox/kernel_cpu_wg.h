/* mox/kernel_cpu_wg.h - the context of moxc's work-group functions. The
 * generated kernels_cpu.c includes it after the kernel sources and the
 * fiber entries, right before the work-group functions: from here on the
 * dialect's thread geometry reads the loop variables of the function being
 * compiled instead of the thread-local lane, so the host compiler sees the
 * thread index as the induction variable of the loop and can vectorize
 * across threads. Users never include it.
 *
 * What a work-group function has in scope (mox_cpu_group_fn):
 *   mox__g                        the block (const mox_cpu_group *)
 *   mox__bi, mox__gd              its block index and the grid's dimensions,
 *                                 copied: a store through a kernel's pointer
 *                                 cannot change them, so the compiler keeps
 *                                 them out of the loops
 *   mox__bx, mox__by, mox__bz     the block's dimensions (constants for
 *                                 kernels with MOX_BLOCK), mox__nt their
 *                                 product, mox__nw its warps
 *   mox__x, mox__y, mox__z        the thread index, inside a thread or lane loop
 *   mox__t                        the linear thread index (in a warp loop
 *                                 outside its lane loops: the warp's first)
 * Barriers and warp collectives are steps between the loops, never calls:
 * a call that reaches the compiler is moxc's bug and must not compile.
 */
#ifndef MOX_KERNEL_CPU_WG_H
#define MOX_KERNEL_CPU_WG_H

#ifndef MOX_KERNEL_CPU_H
#error "include <mox/kernel.h> (CPU mode) first"
#endif

static inline mox_dim3 mox__wg_dim3(uint32_t x, uint32_t y, uint32_t z) {
    mox_dim3 d;
    d.x = x;
    d.y = y;
    d.z = z;
    return d;
}

/* Shared memory is a local array of the call: the whole block runs in it. */
#undef MOX_SHARED
#define MOX_SHARED(T, name, N) T name[N] __attribute__((aligned(16)))
/* Dynamic shared memory: the block's, from the executor (mox_cpu_group). */
#undef MOX_SHARED_DYNAMIC
#define MOX_SHARED_DYNAMIC(T, name) T *const name = (T *)mox__g->dynamic_shared

#define mox_thread_idx() mox__wg_dim3(mox__x, mox__y, mox__z)
#define mox_block_idx() mox__dim3(mox__bi)
#define mox_block_dim() mox__wg_dim3(mox__bx, mox__by, mox__bz)
#define mox_grid_dim() mox__dim3(mox__gd)
#define mox_lane_id() (mox__t % MOX_WARP_SIZE)
#define mox_warp_id() (mox__t / MOX_WARP_SIZE)
#define mox_warps_per_block() mox__nw

/* ISA variants. On x86-64 each work-group function is compiled twice: for
 * the baseline (SSE2) and for x86-64-v3 (AVX2, FMA, BMI2; FP contraction
 * stays off, so both give the same bits), and mox_cpu_module() hands out
 * the table the CPU can run. MOX__WG_DEFINE(K) defines mox__group_K (and
 * mox__group_K_v3) around the always-inline body mox__wg_K. */
#if defined(__x86_64__) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 11))
#define MOX__WG_V3 1
#define MOX__WG_DEFINE(K)                                                                            \
    static void mox__group_##K(void *const *mox__args, const mox_cpu_group *mox__g) {                \
        mox__wg_##K(mox__args, mox__g);                                                               \
    }                                                                                                 \
    __attribute__((target("arch=x86-64-v3"))) static void mox__group_##K##_v3(                        \
        void *const *mox__args, const mox_cpu_group *mox__g) {                                        \
        mox__wg_##K(mox__args, mox__g);                                                               \
    }
/* x86-64-v3 as both compilers can ask for it (every CPU with these also
 * has the level's F16C, LZCNT and MOVBE). */
static inline bool mox__wg_have_v3(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
}
#else
#define MOX__WG_V3 0
#define MOX__WG_DEFINE(K)                                                                            \
    static void mox__group_##K(void *const *mox__args, const mox_cpu_group *mox__g) {                \
        mox__wg_##K(mox__args, mox__g);                                                               \
    }
#endif

#define mox_barrier() mox__barrier_outside_a_step
#define mox_warp_sum_f32(v) mox__warp_op_outside_a_step
#define mox_warp_sum_u32(v) mox__warp_op_outside_a_step
#define mox_warp_sum_i32(v) mox__warp_op_outside_a_step
#define mox_warp_min_f32(v) mox__warp_op_outside_a_step
#define mox_warp_min_u32(v) mox__warp_op_outside_a_step
#define mox_warp_min_i32(v) mox__warp_op_outside_a_step
#define mox_warp_max_f32(v) mox__warp_op_outside_a_step
#define mox_warp_max_u32(v) mox__warp_op_outside_a_step
#define mox_warp_max_i32(v) mox__warp_op_outside_a_step
#define mox_warp_and_u32(v) mox__warp_op_outside_a_step
#define mox_warp_and_i32(v) mox__warp_op_outside_a_step
#define mox_warp_or_u32(v) mox__warp_op_outside_a_step
#define mox_warp_or_i32(v) mox__warp_op_outside_a_step
#define mox_warp_xor_u32(v) mox__warp_op_outside_a_step
#define mox_warp_xor_i32(v) mox__warp_op_outside_a_step
#define mox_warp_inclusive_sum_f32(v) mox__warp_op_outside_a_step
#define mox_warp_inclusive_sum_u32(v) mox__warp_op_outside_a_step
#define mox_warp_inclusive_sum_i32(v) mox__warp_op_outside_a_step
#define mox_warp_exclusive_sum_f32(v) mox__warp_op_outside_a_step
#define mox_warp_exclusive_sum_u32(v) mox__warp_op_outside_a_step
#define mox_warp_exclusive_sum_i32(v) mox__warp_op_outside_a_step
#define mox_warp_shuffle_f32(v, l) mox__warp_op_outside_a_step
#define mox_warp_shuffle_u32(v, l) mox__warp_op_outside_a_step
#define mox_warp_shuffle_i32(v, l) mox__warp_op_outside_a_step
#define mox_warp_shuffle_up_f32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_up_u32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_up_i32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_down_f32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_down_u32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_down_i32(v, d) mox__warp_op_outside_a_step
#define mox_warp_shuffle_xor_f32(v, m) mox__warp_op_outside_a_step
#define mox_warp_shuffle_xor_u32(v, m) mox__warp_op_outside_a_step
#define mox_warp_shuffle_xor_i32(v, m) mox__warp_op_outside_a_step
#define mox_warp_any(p) mox__warp_op_outside_a_step
#define mox_warp_all(p) mox__warp_op_outside_a_step
#define mox_warp_ballot(p) mox__warp_op_outside_a_step

#endif
