/* kernels.c - the dialect test kernels moxc accepts, written the way users
 * write them: a kernel source moxc builds (the work-group executor's run of
 * the dialect tests, CMakeLists.txt), and included through kernels_src.h by
 * test_module.c (CPU, hand-written entry table) and by cuda_oracle.cu /
 * cuda_intrinsics.cu (nvcc). Common subset of C11 and C++17. */
#include <mox/kernel.h>

#include "warp_ref.h"

#define GEOM_WORDS 15u

MOX_DEVICE static inline uint32_t k_block_linear(void) {
    mox_dim3 b = mox_block_idx(), g = mox_grid_dim();
    return b.x + g.x * (b.y + g.y * b.z);
}
MOX_DEVICE static inline uint32_t k_thread_linear(void) {
    mox_dim3 t = mox_thread_idx(), d = mox_block_dim();
    return t.x + d.x * (t.y + d.y * t.z);
}
MOX_DEVICE static inline uint32_t k_gid(void) {
    mox_dim3 d = mox_block_dim();
    return k_block_linear() * (d.x * d.y * d.z) + k_thread_linear();
}

/* Every thread writes its global xyz, thread xyz, block xyz and both dims. */
MOX_KERNEL void geom(uint32_t *out) {
    mox_dim3 t = mox_thread_idx(), b = mox_block_idx(), d = mox_block_dim(), g = mox_grid_dim();
    uint32_t *o = out + (size_t)k_gid() * GEOM_WORDS;
    o[0] = b.x * d.x + t.x;
    o[1] = b.y * d.y + t.y;
    o[2] = b.z * d.z + t.z;
    o[3] = t.x, o[4] = t.y, o[5] = t.z;
    o[6] = b.x, o[7] = b.y, o[8] = b.z;
    o[9] = d.x, o[10] = d.y, o[11] = d.z;
    o[12] = g.x, o[13] = g.y, o[14] = g.z;
}

/* Shared-memory tree reduction with a barrier per level. */
MOX_KERNEL MOX_BLOCK(256, 1, 1) void block_reduce(const float *in, float *out, uint32_t n) {
    MOX_SHARED(float, s, 256);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * 256u + t;
    s[t] = i < n ? in[i] : 0.0f;
    mox_barrier();
    for (uint32_t stride = 128u; stride > 0u; stride >>= 1) {
        if (t < stride) s[t] = s[t] + s[t + stride];
        mox_barrier();
    }
    if (t == 0) out[mox_block_idx().x] = s[0];
}

/* The usual two-level reduction: warp sums, then a warp sum of those. */
MOX_KERNEL MOX_BLOCK(256, 1, 1) void warp_reduce(const float *in, float *out, uint32_t n) {
    MOX_SHARED(float, partial, 8);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * 256u + t;
    float v = mox_warp_sum_f32(i < n ? in[i] : 0.0f);
    if (mox_lane_id() == 0) partial[mox_warp_id()] = v;
    mox_barrier();
    float w = mox_warp_sum_f32(mox_lane_id() < mox_warps_per_block() ? partial[mox_lane_id()] : 0.0f);
    if (t == 0) out[mox_block_idx().x] = w;
}

/* Every warp intrinsic once per thread; warp_ref.h says what to expect. */
MOX_KERNEL void warp_ops(const uint32_t *iu, const float *fv, uint32_t *out, uint32_t delta, uint32_t xmask,
                         uint32_t pmask) {
    uint32_t gid = k_gid();
    uint32_t u = iu[gid];
    int32_t si = (int32_t)u;
    float f = fv[gid];
    uint32_t *o = out + (size_t)gid * WOP_COUNT;
    uint64_t ballot;
    o[WOP_SUM_F] = mox_f32_to_bits(mox_warp_sum_f32(f));
    o[WOP_MIN_F] = mox_f32_to_bits(mox_warp_min_f32(f));
    o[WOP_MAX_F] = mox_f32_to_bits(mox_warp_max_f32(f));
    o[WOP_SUM_U] = mox_warp_sum_u32(u);
    o[WOP_MIN_U] = mox_warp_min_u32(u);
    o[WOP_MAX_U] = mox_warp_max_u32(u);
    o[WOP_SUM_I] = (uint32_t)mox_warp_sum_i32(si);
    o[WOP_MIN_I] = (uint32_t)mox_warp_min_i32(si);
    o[WOP_MAX_I] = (uint32_t)mox_warp_max_i32(si);
    o[WOP_AND_U] = mox_warp_and_u32(u);
    o[WOP_OR_U] = mox_warp_or_u32(u);
    o[WOP_XOR_U] = mox_warp_xor_u32(u);
    o[WOP_AND_I] = (uint32_t)mox_warp_and_i32(si);
    o[WOP_OR_I] = (uint32_t)mox_warp_or_i32(si);
    o[WOP_XOR_I] = (uint32_t)mox_warp_xor_i32(si);
    o[WOP_INCL_F] = mox_f32_to_bits(mox_warp_inclusive_sum_f32(f));
    o[WOP_EXCL_F] = mox_f32_to_bits(mox_warp_exclusive_sum_f32(f));
    o[WOP_INCL_U] = mox_warp_inclusive_sum_u32(u);
    o[WOP_EXCL_U] = mox_warp_exclusive_sum_u32(u);
    o[WOP_INCL_I] = (uint32_t)mox_warp_inclusive_sum_i32(si);
    o[WOP_EXCL_I] = (uint32_t)mox_warp_exclusive_sum_i32(si);
    o[WOP_SHFL_F] = mox_f32_to_bits(mox_warp_shuffle_f32(f, WOP_SRC_LANE(u)));
    o[WOP_SHFL_U] = mox_warp_shuffle_u32(u, WOP_SRC_LANE(u));
    o[WOP_SHFL_I] = (uint32_t)mox_warp_shuffle_i32(si, WOP_SRC_LANE(u));
    o[WOP_UP_F] = mox_f32_to_bits(mox_warp_shuffle_up_f32(f, delta));
    o[WOP_UP_U] = mox_warp_shuffle_up_u32(u, delta);
    o[WOP_UP_I] = (uint32_t)mox_warp_shuffle_up_i32(si, delta);
    o[WOP_DOWN_F] = mox_f32_to_bits(mox_warp_shuffle_down_f32(f, delta));
    o[WOP_DOWN_U] = mox_warp_shuffle_down_u32(u, delta);
    o[WOP_DOWN_I] = (uint32_t)mox_warp_shuffle_down_i32(si, delta);
    o[WOP_XOR_F] = mox_f32_to_bits(mox_warp_shuffle_xor_f32(f, xmask));
    o[WOP_XORS_U] = mox_warp_shuffle_xor_u32(u, xmask);
    o[WOP_XORS_I] = (uint32_t)mox_warp_shuffle_xor_i32(si, xmask);
    o[WOP_ANY] = mox_warp_any((u & pmask) != 0) ? 1u : 0u;
    o[WOP_ALL] = mox_warp_all((u & pmask) != 0) ? 1u : 0u;
    ballot = mox_warp_ballot((u & pmask) != 0);
    o[WOP_BALLOT_LO] = (uint32_t)ballot;
    o[WOP_BALLOT_HI] = (uint32_t)(ballot >> 32);
    o[WOP_LANE] = mox_lane_id();
    o[WOP_WARP] = mox_warp_id();
    o[WOP_WARPS] = mox_warps_per_block();
}

/* Counters: [0] add, [1] sub, [2] min, [3] max, [4] and, [5] or, [6] xor,
 * [7] exchange, [8] CAS increment, [9] never equal to a CAS's expected. */
#define ATOMIC_COUNTERS 10u

/* Device-buffer atomics from many threads. own_u/own_i: one word per
 * thread (a CAS that must succeed). res: 4 words per thread. */
MOX_KERNEL void atomics_global(mox_atomic_u32 *cu, mox_atomic_i32 *ci, mox_atomic_u32 *own_u, mox_atomic_i32 *own_i,
                               const uint32_t *vals, uint32_t *res) {
    uint32_t gid = k_gid();
    uint32_t v = vals[gid];
    int32_t sv = (int32_t)v;
    uint32_t *r = res + (size_t)gid * 6u;
    mox_atomic_add_u32(&cu[0], v);
    mox_atomic_sub_u32(&cu[1], v);
    mox_atomic_min_u32(&cu[2], v);
    mox_atomic_max_u32(&cu[3], v);
    mox_atomic_and_u32(&cu[4], v | 0x80000001u);
    mox_atomic_or_u32(&cu[5], v & 0x0f0f0f0fu);
    mox_atomic_xor_u32(&cu[6], v);
    r[0] = mox_atomic_exchange_u32(&cu[7], gid + 1u);
    mox_atomic_add_i32(&ci[0], sv);
    mox_atomic_sub_i32(&ci[1], sv);
    mox_atomic_min_i32(&ci[2], sv);
    mox_atomic_max_i32(&ci[3], sv);
    mox_atomic_and_i32(&ci[4], sv | (int32_t)0x40000001);
    mox_atomic_or_i32(&ci[5], sv & 0x0f0f0f0f);
    mox_atomic_xor_i32(&ci[6], sv);
    r[1] = (uint32_t)mox_atomic_exchange_i32(&ci[7], (int32_t)gid + 1);
    {
        uint32_t e = mox_atomic_load_u32(&cu[8]);
        while (!mox_atomic_cas_u32(&cu[8], &e, e + 1u)) {
        }
        int32_t f = mox_atomic_load_i32(&ci[8]);
        while (!mox_atomic_cas_i32(&ci[8], &f, f - 1)) {
        }
    }
    {
        uint32_t e = 0xdeadbeefu; /* cu[9] holds 5: must fail and report 5 */
        r[2] = mox_atomic_cas_u32(&cu[9], &e, 7u) ? 1u : 0u;
        r[3] = e;
        int32_t f = -77; /* ci[9] holds -5 */
        r[4] = mox_atomic_cas_i32(&ci[9], &f, 7) ? 1u : 0u;
        r[5] = (uint32_t)f;
    }
    {
        uint32_t e = gid; /* own_u[gid] holds gid: must succeed */
        if (!mox_atomic_cas_u32(&own_u[gid], &e, gid * 3u) || e != gid) r[2] |= 2u;
        int32_t f = -(int32_t)gid;
        if (!mox_atomic_cas_i32(&own_i[gid], &f, (int32_t)gid) || f != -(int32_t)gid) r[4] |= 2u;
    }
}

/* A scripted sequence of every operation on one word, returns recorded. */
MOX_KERNEL void atomics_script(mox_atomic_u32 *wu, mox_atomic_i32 *wi, uint32_t *out) {
    uint32_t k = 0;
    uint32_t e;
    int32_t f;
    mox_atomic_store_u32(wu, 10u);
    out[k++] = mox_atomic_load_u32(wu);
    out[k++] = mox_atomic_add_u32(wu, 0xfffffffbu); /* 10 -> 5 (wraps) */
    out[k++] = mox_atomic_sub_u32(wu, 7u);          /* 5 -> 0xfffffffe */
    out[k++] = mox_atomic_min_u32(wu, 100u);        /* -> 100 */
    out[k++] = mox_atomic_max_u32(wu, 50u);         /* stays 100 */
    out[k++] = mox_atomic_max_u32(wu, 0x80000000u); /* -> 0x80000000 */
    out[k++] = mox_atomic_and_u32(wu, 0xc0000000u); /* -> 0x80000000 */
    out[k++] = mox_atomic_or_u32(wu, 0x0000000fu);  /* -> 0x8000000f */
    out[k++] = mox_atomic_xor_u32(wu, 0x80000003u); /* -> 0x0000000c */
    out[k++] = mox_atomic_exchange_u32(wu, 42u);    /* -> 42 */
    e = 41u;
    out[k++] = mox_atomic_cas_u32(wu, &e, 1u) ? 1u : 0u; /* fails */
    out[k++] = e;                                         /* 42 */
    out[k++] = mox_atomic_cas_u32(wu, &e, 1u) ? 1u : 0u; /* succeeds */
    out[k++] = e;                                         /* 42 */
    out[k++] = mox_atomic_load_u32(wu);                   /* 1 */
    mox_atomic_store_i32(wi, -10);
    out[k++] = (uint32_t)mox_atomic_load_i32(wi);
    out[k++] = (uint32_t)mox_atomic_add_i32(wi, INT32_MIN); /* -10 + MIN wraps to 0x7ffffff6 */
    out[k++] = (uint32_t)mox_atomic_sub_i32(wi, -20);       /* wraps to 0x8000000a */
    out[k++] = (uint32_t)mox_atomic_min_i32(wi, 3);         /* stays negative */
    out[k++] = (uint32_t)mox_atomic_max_i32(wi, 3);         /* -> 3 */
    out[k++] = (uint32_t)mox_atomic_and_i32(wi, -2);        /* -> 2 */
    out[k++] = (uint32_t)mox_atomic_or_i32(wi, -16);        /* -> -14 */
    out[k++] = (uint32_t)mox_atomic_xor_i32(wi, -1);        /* -> 13 */
    out[k++] = (uint32_t)mox_atomic_exchange_i32(wi, -9);   /* -> -9 */
    f = 9;
    out[k++] = mox_atomic_cas_i32(wi, &f, 0) ? 1u : 0u; /* fails */
    out[k++] = (uint32_t)f;                              /* -9 */
    out[k++] = mox_atomic_cas_i32(wi, &f, 0) ? 1u : 0u; /* succeeds */
    out[k++] = (uint32_t)mox_atomic_load_i32(wi);        /* 0 */
    out[k] = k;
}

/* Shared-memory atomics: a per-block histogram of 16 bins, added to the
 * global one. */
MOX_KERNEL MOX_BLOCK(128, 1, 1) void shared_hist(const uint32_t *vals, mox_atomic_u32 *hist) {
    MOX_SHARED(mox_atomic_u32, h, 16);
    uint32_t t = mox_thread_idx().x;
    if (t < 16u) mox_atomic_store_u32(&h[t], 0u);
    mox_barrier();
    mox_atomic_add_u32(&h[vals[k_gid()] % 16u], 1u);
    mox_barrier();
    if (t < 16u) mox_atomic_add_u32(&hist[t], mox_atomic_load_u32(&h[t]));
}

/* Threads with a nonzero code fail the dispatch with it. */
MOX_KERNEL void fail_some(const uint32_t *codes, uint32_t *ran) {
    uint32_t gid = k_gid();
    if (codes[gid] != 0u) mox_fail(codes[gid]);
    ran[gid] = 1u; /* mox_fail returns: the thread goes on */
}

/* f16 conversions applied on the device side. */
MOX_KERNEL void f16_convert(const uint32_t *fbits, uint16_t *half_out, const uint16_t *halves, uint32_t *f_out,
                            uint32_t n) {
    uint32_t i = k_gid();
    if (i >= n) return;
    half_out[i] = mox_f16_to_bits(mox_f16_from_f32(mox_f32_from_bits(fbits[i])));
    f_out[i] = mox_f32_to_bits(mox_f16_to_f32(mox_f16_from_bits(halves[i % 65536u])));
}
