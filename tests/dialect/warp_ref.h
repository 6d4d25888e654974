/* warp_ref.h - reference semantics of the warp intrinsics, written from
 * docs/kernel-language.md and independently of mox/kernel_cpu.h: the float
 * reductions and scans simulate the CUDA shuffle sequence lane by lane.
 * Host code (C and C++); shared by the CPU tests and the GPU oracle test. */
#ifndef MOX_TEST_WARP_REF_H
#define MOX_TEST_WARP_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Outputs of the warp_ops test kernel, per thread, in this order. */
enum {
    WOP_SUM_F, WOP_MIN_F, WOP_MAX_F,
    WOP_SUM_U, WOP_MIN_U, WOP_MAX_U,
    WOP_SUM_I, WOP_MIN_I, WOP_MAX_I,
    WOP_AND_U, WOP_OR_U, WOP_XOR_U,
    WOP_AND_I, WOP_OR_I, WOP_XOR_I,
    WOP_INCL_F, WOP_EXCL_F, WOP_INCL_U, WOP_EXCL_U, WOP_INCL_I, WOP_EXCL_I,
    WOP_SHFL_F, WOP_SHFL_U, WOP_SHFL_I,
    WOP_UP_F, WOP_UP_U, WOP_UP_I,
    WOP_DOWN_F, WOP_DOWN_U, WOP_DOWN_I,
    WOP_XOR_F, WOP_XORS_U, WOP_XORS_I,
    WOP_ANY, WOP_ALL, WOP_BALLOT_LO, WOP_BALLOT_HI,
    WOP_LANE, WOP_WARP, WOP_WARPS,
    WOP_COUNT
};

/* The per-lane source lane of the indexed shuffle in the test kernel:
 * varying, and sometimes past the warp. */
#define WOP_SRC_LANE(u) ((u) % 40u)

static inline uint32_t ref_fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float ref_bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline int32_t ref_i(uint32_t u) {
    int32_t i;
    memcpy(&i, &u, sizeof i);
    return i;
}

/* min/max as documented: a NaN operand loses unless both are NaN; -0 < +0. */
static inline float ref_min(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == b) return signbit(a) ? a : b;
    return fminf(a, b);
}
static inline float ref_max(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == b) return signbit(a) ? b : a;
    return fmaxf(a, b);
}

enum { REF_ADD, REF_MIN, REF_MAX };

static inline float ref_combine(int op, float a, float b) {
    return op == REF_ADD ? a + b : op == REF_MIN ? ref_min(a, b) : ref_max(a, b);
}

/* The CUDA xor butterfly, simulated for every existing lane: at offset o
 * lane i computes v[i] op v[i ^ o] (identity when i ^ o does not exist),
 * all lanes at once; then everyone takes lane 0's value. */
static inline float ref_butterfly(const float *v0, uint32_t n, int op) {
    float v[32], nv[32];
    float id = op == REF_ADD ? -0.0f : ref_bitsf(0x7fffffffu);
    for (uint32_t i = 0; i < n; i++) v[i] = v0[i];
    for (uint32_t o = 16; o > 0; o >>= 1) {
        for (uint32_t i = 0; i < n; i++) nv[i] = ref_combine(op, v[i], (i ^ o) < n ? v[i ^ o] : id);
        for (uint32_t i = 0; i < n; i++) v[i] = nv[i];
    }
    return v[0];
}

/* Hillis-Steele with simultaneous shuffle-ups of 1, 2, 4, 8, 16. */
static inline void ref_scan_f(const float *v0, uint32_t n, float *incl) {
    float v[32], nv[32];
    for (uint32_t i = 0; i < n; i++) v[i] = v0[i];
    for (uint32_t d = 1; d < 32; d <<= 1) {
        for (uint32_t i = 0; i < n; i++) nv[i] = i >= d ? v[i - d] + v[i] : v[i];
        for (uint32_t i = 0; i < n; i++) v[i] = nv[i];
    }
    for (uint32_t i = 0; i < n; i++) incl[i] = v[i];
}

/* Expected outputs of the warp_ops kernel for one warp of n lanes.
 * out[lane * WOP_COUNT + op]. */
static inline void ref_warp_ops(const uint32_t *iu, const float *fv, uint32_t n, uint32_t delta, uint32_t xmask,
                                uint32_t pmask, uint32_t warp, uint32_t warps, uint32_t *out) {
    uint32_t su = 0, mnu = 0xffffffffu, mxu = 0, au = 0xffffffffu, ou = 0, xu = 0;
    int32_t mni = INT32_MAX, mxi = INT32_MIN;
    uint64_t ballot = 0;
    float incl[32];
    for (uint32_t i = 0; i < n; i++) {
        su += iu[i];
        mnu = iu[i] < mnu ? iu[i] : mnu;
        mxu = iu[i] > mxu ? iu[i] : mxu;
        mni = ref_i(iu[i]) < mni ? ref_i(iu[i]) : mni;
        mxi = ref_i(iu[i]) > mxi ? ref_i(iu[i]) : mxi;
        au &= iu[i];
        ou |= iu[i];
        xu ^= iu[i];
        if (iu[i] & pmask) ballot |= (uint64_t)1 << i;
    }
    float sf = ref_butterfly(fv, n, REF_ADD), mnf = ref_butterfly(fv, n, REF_MIN), mxf = ref_butterfly(fv, n, REF_MAX);
    ref_scan_f(fv, n, incl);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t *o = out + (size_t)i * WOP_COUNT;
        uint32_t pre = 0;
        for (uint32_t k = 0; k < i; k++) pre += iu[k];
        o[WOP_SUM_F] = ref_fbits(sf);
        o[WOP_MIN_F] = ref_fbits(mnf);
        o[WOP_MAX_F] = ref_fbits(mxf);
        o[WOP_SUM_U] = o[WOP_SUM_I] = su;
        o[WOP_MIN_U] = mnu;
        o[WOP_MAX_U] = mxu;
        o[WOP_MIN_I] = (uint32_t)mni;
        o[WOP_MAX_I] = (uint32_t)mxi;
        o[WOP_AND_U] = o[WOP_AND_I] = au;
        o[WOP_OR_U] = o[WOP_OR_I] = ou;
        o[WOP_XOR_U] = o[WOP_XOR_I] = xu;
        o[WOP_INCL_F] = ref_fbits(incl[i]);
        o[WOP_EXCL_F] = i == 0 ? ref_fbits(0.0f) : ref_fbits(incl[i - 1]);
        o[WOP_INCL_U] = o[WOP_INCL_I] = pre + iu[i];
        o[WOP_EXCL_U] = o[WOP_EXCL_I] = pre;
        uint32_t src = WOP_SRC_LANE(iu[i]);
        uint32_t s = src < n ? src : i;
        o[WOP_SHFL_F] = ref_fbits(fv[s]);
        o[WOP_SHFL_U] = o[WOP_SHFL_I] = iu[s];
        s = delta <= i ? i - delta : i;
        o[WOP_UP_F] = ref_fbits(fv[s]);
        o[WOP_UP_U] = o[WOP_UP_I] = iu[s];
        s = (uint64_t)i + delta < n ? i + delta : i;
        o[WOP_DOWN_F] = ref_fbits(fv[s]);
        o[WOP_DOWN_U] = o[WOP_DOWN_I] = iu[s];
        s = (i ^ xmask) < n ? (i ^ xmask) : i;
        o[WOP_XOR_F] = ref_fbits(fv[s]);
        o[WOP_XORS_U] = o[WOP_XORS_I] = iu[s];
        o[WOP_ANY] = ballot != 0;
        o[WOP_ALL] = ballot == (n == 32 ? 0xffffffffull : ((1ull << n) - 1u));
        o[WOP_BALLOT_LO] = (uint32_t)ballot;
        o[WOP_BALLOT_HI] = (uint32_t)(ballot >> 32);
        o[WOP_LANE] = i;
        o[WOP_WARP] = warp;
        o[WOP_WARPS] = warps;
    }
}

#endif
