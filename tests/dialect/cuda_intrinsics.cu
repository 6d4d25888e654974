// cuda_intrinsics.cu - every intrinsic of mox/kernel.h in CUDA mode, in the
// shape moxc generates (kernel sources, then gated __global__ entries), for
// the nvcc compile check.
#include "kernels_src.h"

#define ENTRY(name, params, call)                                               \
    extern "C" __global__ void mox_entry_##name(mox_gate gate, params) {        \
        if (mox__gate_enter(&gate)) return;                                     \
        MOX__GATE_PUBLISH(&gate);                                               \
        call;                                                                   \
        mox__gate_leave(&gate);                                                 \
    }
#define P(...) __VA_ARGS__

ENTRY(geom, uint32_t *out, geom(out))
ENTRY(block_reduce, P(const float *in, float *out, uint32_t n), block_reduce(in, out, n))
ENTRY(warp_reduce, P(const float *in, float *out, uint32_t n), warp_reduce(in, out, n))
ENTRY(warp_ops, P(const uint32_t *iu, const float *fv, uint32_t *out, uint32_t d, uint32_t x, uint32_t p),
      warp_ops(iu, fv, out, d, x, p))
ENTRY(atomics_global,
      P(mox_atomic_u32 *cu, mox_atomic_i32 *ci, mox_atomic_u32 *ou, mox_atomic_i32 *oi, const uint32_t *v, uint32_t *r),
      atomics_global(cu, ci, ou, oi, v, r))
ENTRY(atomics_script, P(mox_atomic_u32 *wu, mox_atomic_i32 *wi, uint32_t *out), atomics_script(wu, wi, out))
ENTRY(shared_hist, P(const uint32_t *v, mox_atomic_u32 *h), shared_hist(v, h))
ENTRY(fail_some, P(const uint32_t *codes, uint32_t *ran), fail_some(codes, ran))
ENTRY(f16_convert, P(const uint32_t *fb, uint16_t *ho, const uint16_t *hs, uint32_t *fo, uint32_t n),
      f16_convert(fb, ho, hs, fo, n))

// Math the dialect promises from <math.h>, in device code.
extern "C" __global__ void mox_entry_math(mox_gate gate, float *x) {
    if (mox__gate_enter(&gate)) return;
    float v = x[threadIdx.x];
    x[threadIdx.x] = sqrtf(v) + fmaf(v, v, 1.0f) + fabsf(v) + fminf(v, 1.0f) + fmaxf(v, 1.0f) + floorf(v) +
                     ceilf(v) + truncf(v) + rintf(v) + expf(v) + logf(v) + powf(v, 2.5f) + sinf(v) + cosf(v) +
                     tanhf(v) + erff(v);
    mox__gate_leave(&gate);
}
