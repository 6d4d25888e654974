/* kernels_src.h - the dialect test kernels: those moxc accepts
 * (kernels.c), plus two that break its uniformity rules on purpose, for the
 * fiber executor's behaviour under such bugs. Included by test_module.c
 * (CPU, with an entry table like moxc's kernels_cpu.c) and by
 * cuda_oracle.cu / cuda_intrinsics.cu (nvcc, like kernels_cuda.cu). Common
 * subset of C11 and C++17. */
#include "kernels.c"

/* Threads with t % modulo == 0 return before a barrier and a warp op (a
 * kernel bug moxc rejects); the others must still get through, the
 * returned ones counting as arrived and contributing 0 to the warp sum. */
MOX_KERNEL void early_return(uint32_t *out, uint32_t modulo) {
    uint32_t t = k_thread_linear();
    if (t % modulo == 0u) return;
    mox_barrier();
    out[k_gid()] = mox_warp_sum_u32(1u);
}

/* Odd threads wait at a barrier while even ones wait in a warp exchange:
 * nobody can proceed (a kernel bug moxc rejects). */
MOX_KERNEL void divergent(uint32_t *out) {
    uint32_t t = k_thread_linear();
    if (t & 1u)
        mox_barrier();
    else
        out[k_gid()] = mox_warp_sum_u32(1u);
}

