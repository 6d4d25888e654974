/* mox/kernel_cpu.h - the device dialect's CPU implementation; included by
 * mox/kernel.h when compiled by the host C compiler (kernels_cpu.so).
 *
 * Every intrinsic reads the running thread's mox_cpu_lane through
 * mox__cpu_lane, a thread-local slot the executor points at the running
 * fiber's lane before every switch (the generated module exports its
 * address through mox_cpu_module_entry.lane_slot). The generated
 * kernels_cpu.c must be a single translation unit: each translation unit
 * including this header has its own slot.
 *
 * Warp operations are computed from one primitive (svc->warp_exchange, the
 * values of all active lanes of the warp) with exactly the combination
 * order the CUDA side uses (kernel_cuda.h), so both give the same bits.
 */
#ifndef MOX_KERNEL_CPU_H
#define MOX_KERNEL_CPU_H

#ifndef MOX_KERNEL_H
#error "include <mox/kernel.h>, not <mox/kernel_cpu.h>"
#endif

#include <string.h>

#ifdef __cplusplus
#define MOX__TLS thread_local
#else
#define MOX__TLS _Thread_local
#endif

static MOX__TLS mox_cpu_lane *mox__cpu_lane __attribute__((unused));

/* ---- indices ---- */

static inline mox_dim3 mox__dim3(mox_kdim3 k) {
    mox_dim3 d;
    d.x = k.x;
    d.y = k.y;
    d.z = k.z;
    return d;
}
static inline mox_dim3 mox_thread_idx(void) { return mox__dim3(mox__cpu_lane->thread_idx); }
static inline mox_dim3 mox_block_idx(void) { return mox__dim3(mox__cpu_lane->block_idx); }
static inline mox_dim3 mox_block_dim(void) { return mox__dim3(mox__cpu_lane->block_dim); }
static inline mox_dim3 mox_grid_dim(void) { return mox__dim3(mox__cpu_lane->grid_dim); }

static inline void mox_barrier(void) {
    mox_cpu_lane *l = mox__cpu_lane;
    l->svc->barrier(l->block);
}

static inline uint32_t mox_lane_id(void) { return mox__cpu_lane->linear % MOX_WARP_SIZE; }
static inline uint32_t mox_warp_size(void) { return MOX_WARP_SIZE; }
static inline uint32_t mox_warp_id(void) { return mox__cpu_lane->linear / MOX_WARP_SIZE; }
static inline uint32_t mox_warps_per_block(void) {
    const mox_kdim3 *d = &mox__cpu_lane->block_dim;
    return (d->x * d->y * d->z + MOX_WARP_SIZE - 1u) / MOX_WARP_SIZE;
}

/* ---- bits ---- */

static inline uint32_t mox_f32_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float mox_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
/* int32 <-> uint32 by two's complement, without implementation-defined
 * conversions; integer warp arithmetic is done unsigned so it wraps. */
static inline uint32_t mox__i2u(int32_t v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}
static inline int32_t mox__u2i(uint32_t u) {
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ---- warp: exchange ---- */

typedef struct mox__warp_view {
    const uint32_t *v; /* v[lane] for lanes 0..n-1 */
    uint32_t n;        /* active lanes */
    uint32_t lane;     /* the caller's lane */
} mox__warp_view;

static inline mox__warp_view mox__warp_exchange(uint32_t value) {
    mox_cpu_lane *l = mox__cpu_lane;
    mox__warp_view w;
    w.lane = l->linear % MOX_WARP_SIZE;
    w.v = l->svc->warp_exchange(l->block, value, &w.n);
    return w;
}

/* ---- warp: reductions ----
 * Float: the CUDA side runs an xor butterfly (offsets 16, 8, 4, 2, 1, each
 * lane doing own + partner, a missing partner contributing the identity)
 * and broadcasts lane 0. Lane 0's value is this tree: at offset o lane k
 * (k < o) combines a[k] with a[k + o]. Lanes >= n hold the identity. */

typedef float (*mox__f32_op)(float, float);

static inline float mox__add_f32(float a, float b) { return a + b; }

/* The tree over a[0..n), lanes n..31 set to the identity; a is clobbered.
 * Both executors reduce through it (fibers: from the exchanged bits;
 * work-group functions: from the lane array), so both give these bits. */
static inline float mox__tree_f32(float a[MOX_WARP_SIZE], uint32_t n, mox__f32_op op, float identity) {
    for (uint32_t k = n; k < MOX_WARP_SIZE; k++) a[k] = identity;
    for (uint32_t o = MOX_WARP_SIZE / 2u; o > 0u; o >>= 1)
        for (uint32_t k = 0; k < o; k++) a[k] = op(a[k], a[k + o]);
    return a[0];
}

static inline float mox__warp_tree_f32(uint32_t value, mox__f32_op op, float identity) {
    mox__warp_view w = mox__warp_exchange(value);
    float a[MOX_WARP_SIZE];
    for (uint32_t k = 0; k < w.n; k++) a[k] = mox_f32_from_bits(w.v[k]);
    return mox__tree_f32(a, w.n, op, identity);
}

static inline float mox_warp_sum_f32(float v) {
    return mox__warp_tree_f32(mox_f32_to_bits(v), mox__add_f32, -0.0f);
}
static inline float mox_warp_min_f32(float v) {
    return mox__warp_tree_f32(mox_f32_to_bits(v), mox__min_f32, mox_f32_from_bits(MOX__F32_QNAN));
}
static inline float mox_warp_max_f32(float v) {
    return mox__warp_tree_f32(mox_f32_to_bits(v), mox__max_f32, mox_f32_from_bits(MOX__F32_QNAN));
}

/* Integer reductions are associative: order does not matter. */
enum { MOX__R_ADD, MOX__R_MINU, MOX__R_MAXU, MOX__R_MINI, MOX__R_MAXI, MOX__R_AND, MOX__R_OR, MOX__R_XOR };

/* Lanes 0..n-1 of v combined in lane order. */
static inline uint32_t mox__reduce_u(const uint32_t *v, uint32_t n, int op) {
    uint32_t r = v[0];
    for (uint32_t k = 1; k < n; k++) {
        uint32_t x = v[k];
        switch (op) {
        case MOX__R_ADD: r += x; break;
        case MOX__R_MINU: r = x < r ? x : r; break;
        case MOX__R_MAXU: r = x > r ? x : r; break;
        case MOX__R_MINI: r = mox__u2i(x) < mox__u2i(r) ? x : r; break;
        case MOX__R_MAXI: r = mox__u2i(x) > mox__u2i(r) ? x : r; break;
        case MOX__R_AND: r &= x; break;
        case MOX__R_OR: r |= x; break;
        default: r ^= x; break;
        }
    }
    return r;
}

static inline uint32_t mox__warp_reduce_u(uint32_t value, int op) {
    mox__warp_view w = mox__warp_exchange(value);
    return mox__reduce_u(w.v, w.n, op);
}

static inline uint32_t mox_warp_sum_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_ADD); }
static inline int32_t mox_warp_sum_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_ADD)); }
static inline uint32_t mox_warp_min_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_MINU); }
static inline int32_t mox_warp_min_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_MINI)); }
static inline uint32_t mox_warp_max_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_MAXU); }
static inline int32_t mox_warp_max_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_MAXI)); }
static inline uint32_t mox_warp_and_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_AND); }
static inline int32_t mox_warp_and_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_AND)); }
static inline uint32_t mox_warp_or_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_OR); }
static inline int32_t mox_warp_or_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_OR)); }
static inline uint32_t mox_warp_xor_u32(uint32_t v) { return mox__warp_reduce_u(v, MOX__R_XOR); }
static inline int32_t mox_warp_xor_i32(int32_t v) { return mox__u2i(mox__warp_reduce_u(mox__i2u(v), MOX__R_XOR)); }

/* ---- warp: scans ----
 * Hillis-Steele as on CUDA: for d = 1, 2, 4, 8, 16 every lane >= d adds the
 * value of lane - d (as it was before this step) on its left:
 * a[i] = a[i - d] + a[i]. Walking i downwards reads only old values. The
 * exclusive scan is the inclusive one shifted up by one lane, 0 in lane 0. */

/* The inclusive scan of a[0..n) in place. */
static inline void mox__scan_f32(float a[MOX_WARP_SIZE], uint32_t n) {
    for (uint32_t d = 1; d < MOX_WARP_SIZE; d <<= 1)
        for (uint32_t i = n; i-- > d;) a[i] = a[i - d] + a[i];
}

static inline float mox__warp_scan_f32(float v, int exclusive) {
    mox__warp_view w = mox__warp_exchange(mox_f32_to_bits(v));
    float a[MOX_WARP_SIZE];
    for (uint32_t k = 0; k < w.n; k++) a[k] = mox_f32_from_bits(w.v[k]);
    mox__scan_f32(a, w.n);
    if (!exclusive) return a[w.lane];
    return w.lane == 0 ? 0.0f : a[w.lane - 1u];
}

static inline uint32_t mox__warp_scan_u(uint32_t v, int exclusive) {
    mox__warp_view w = mox__warp_exchange(v);
    uint32_t r = 0;
    uint32_t end = exclusive ? w.lane : w.lane + 1u;
    for (uint32_t k = 0; k < end; k++) r += w.v[k];
    return r;
}

static inline float mox_warp_inclusive_sum_f32(float v) { return mox__warp_scan_f32(v, 0); }
static inline float mox_warp_exclusive_sum_f32(float v) { return mox__warp_scan_f32(v, 1); }
static inline uint32_t mox_warp_inclusive_sum_u32(uint32_t v) { return mox__warp_scan_u(v, 0); }
static inline uint32_t mox_warp_exclusive_sum_u32(uint32_t v) { return mox__warp_scan_u(v, 1); }
static inline int32_t mox_warp_inclusive_sum_i32(int32_t v) { return mox__u2i(mox__warp_scan_u(mox__i2u(v), 0)); }
static inline int32_t mox_warp_exclusive_sum_i32(int32_t v) { return mox__u2i(mox__warp_scan_u(mox__i2u(v), 1)); }

/* ---- warp: shuffles ----
 * A source lane outside the active lanes (including any >= 32) yields the
 * caller's own value. */

enum { MOX__S_IDX, MOX__S_UP, MOX__S_DOWN, MOX__S_XOR };

/* The lane whose value lane `lane` gets, or UINT32_MAX for its own. */
static inline uint32_t mox__shuffle_src(uint32_t lane, uint32_t arg, int kind) {
    switch (kind) {
    case MOX__S_IDX: return arg;
    case MOX__S_UP: return arg <= lane ? lane - arg : UINT32_MAX;
    case MOX__S_DOWN: return arg < MOX_WARP_SIZE ? lane + arg : UINT32_MAX;
    default: return lane ^ arg;
    }
}

static inline uint32_t mox__warp_shuffle(uint32_t v, uint32_t arg, int kind) {
    mox__warp_view w = mox__warp_exchange(v);
    uint32_t src = mox__shuffle_src(w.lane, arg, kind);
    return src < w.n ? w.v[src] : v;
}

#define MOX__SHUFFLES(suffix, kind)                                                                   \
    static inline float mox_warp_shuffle##suffix##_f32(float v, uint32_t a) {                         \
        return mox_f32_from_bits(mox__warp_shuffle(mox_f32_to_bits(v), a, kind));                    \
    }                                                                                                 \
    static inline uint32_t mox_warp_shuffle##suffix##_u32(uint32_t v, uint32_t a) {                  \
        return mox__warp_shuffle(v, a, kind);                                                         \
    }                                                                                                 \
    static inline int32_t mox_warp_shuffle##suffix##_i32(int32_t v, uint32_t a) {                    \
        return mox__u2i(mox__warp_shuffle(mox__i2u(v), a, kind));                                     \
    }
MOX__SHUFFLES(, MOX__S_IDX)
MOX__SHUFFLES(_up, MOX__S_UP)
MOX__SHUFFLES(_down, MOX__S_DOWN)
MOX__SHUFFLES(_xor, MOX__S_XOR)
#undef MOX__SHUFFLES

/* ---- warp: votes ---- */

static inline uint64_t mox_warp_ballot(bool p) {
    mox__warp_view w = mox__warp_exchange(p ? 1u : 0u);
    uint64_t r = 0;
    for (uint32_t k = 0; k < w.n; k++)
        if (w.v[k]) r |= (uint64_t)1 << k;
    return r;
}
static inline bool mox_warp_any(bool p) { return mox_warp_ballot(p) != 0; }
static inline bool mox_warp_all(bool p) {
    mox__warp_view w = mox__warp_exchange(p ? 1u : 0u);
    for (uint32_t k = 0; k < w.n; k++)
        if (!w.v[k]) return false;
    return true;
}

/* ---- warp steps of work-group functions ----
 * moxc's work-group functions compute a warp operation as a step over the
 * warp's lane arrays: in[l] (and arg[l]) hold lane l's arguments for the
 * n lanes of the warp, out[l] gets lane l's result. Each step combines
 * through the helpers the fiber implementation above uses, so both
 * executors, and CUDA, give the same bits. Named mox__wstep_<op> for
 * mox_warp_<op>. */

static inline void mox__wstep_tree_f32(float *out, const float *in, uint32_t n, mox__f32_op op, float identity) {
    float a[MOX_WARP_SIZE];
    for (uint32_t k = 0; k < n; k++) a[k] = in[k];
    float r = mox__tree_f32(a, n, op, identity);
    for (uint32_t k = 0; k < n; k++) out[k] = r;
}
static inline void mox__wstep_sum_f32(float *out, const float *in, uint32_t n) {
    mox__wstep_tree_f32(out, in, n, mox__add_f32, -0.0f);
}
static inline void mox__wstep_min_f32(float *out, const float *in, uint32_t n) {
    mox__wstep_tree_f32(out, in, n, mox__min_f32, mox_f32_from_bits(MOX__F32_QNAN));
}
static inline void mox__wstep_max_f32(float *out, const float *in, uint32_t n) {
    mox__wstep_tree_f32(out, in, n, mox__max_f32, mox_f32_from_bits(MOX__F32_QNAN));
}

static inline void mox__wstep_reduce_u(uint32_t *out, const uint32_t *in, uint32_t n, int op) {
    uint32_t r = mox__reduce_u(in, n, op);
    for (uint32_t k = 0; k < n; k++) out[k] = r;
}

static inline void mox__wstep_scan_u(uint32_t *out, const uint32_t *in, uint32_t n, int exclusive) {
    uint32_t r = 0; /* wrapping sums: any grouping gives the fiber path's bits */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t x = in[k];
        out[k] = exclusive ? r : r + x;
        r += x;
    }
}

static inline void mox__wstep_inclusive_sum_f32(float *out, const float *in, uint32_t n) {
    float a[MOX_WARP_SIZE];
    for (uint32_t k = 0; k < n; k++) a[k] = in[k];
    mox__scan_f32(a, n);
    for (uint32_t k = 0; k < n; k++) out[k] = a[k];
}
static inline void mox__wstep_exclusive_sum_f32(float *out, const float *in, uint32_t n) {
    float a[MOX_WARP_SIZE];
    for (uint32_t k = 0; k < n; k++) a[k] = in[k];
    mox__scan_f32(a, n);
    for (uint32_t k = n; k-- > 1u;) out[k] = a[k - 1u];
    if (n) out[0] = 0.0f;
}

static inline void mox__wstep_shuffle_u(uint32_t *out, const uint32_t *in, const uint32_t *arg, uint32_t n, int kind) {
    for (uint32_t k = 0; k < n; k++) {
        uint32_t src = mox__shuffle_src(k, arg[k], kind);
        out[k] = src < n ? in[src] : in[k];
    }
}

/* Typed forms: u32 directly, i32 through its two's-complement bits, f32
 * through its bits (shuffles only move values). */
#define MOX__WSTEP_U(name, call)                                                                      \
    static inline void mox__wstep_##name##_u32(uint32_t *out, const uint32_t *in, uint32_t n) {       \
        call(out, in, n);                                                                             \
    }                                                                                                 \
    static inline void mox__wstep_##name##_i32(int32_t *out, const int32_t *in, uint32_t n) {         \
        uint32_t u[MOX_WARP_SIZE], r[MOX_WARP_SIZE];                                                  \
        for (uint32_t k = 0; k < n; k++) u[k] = mox__i2u(in[k]);                                      \
        call(r, u, n);                                                                                \
        for (uint32_t k = 0; k < n; k++) out[k] = mox__u2i(r[k]);                                     \
    }
#define MOX__WSTEP_REDUCE(name, uop, iop)                                                             \
    static inline void mox__wstep_##name##_u(uint32_t *out, const uint32_t *in, uint32_t n) {         \
        mox__wstep_reduce_u(out, in, n, uop);                                                         \
    }                                                                                                 \
    static inline void mox__wstep_##name##_iu(uint32_t *out, const uint32_t *in, uint32_t n) {        \
        mox__wstep_reduce_u(out, in, n, iop);                                                         \
    }                                                                                                 \
    static inline void mox__wstep_##name##_u32(uint32_t *out, const uint32_t *in, uint32_t n) {       \
        mox__wstep_##name##_u(out, in, n);                                                            \
    }                                                                                                 \
    static inline void mox__wstep_##name##_i32(int32_t *out, const int32_t *in, uint32_t n) {         \
        uint32_t u[MOX_WARP_SIZE], r[MOX_WARP_SIZE];                                                  \
        for (uint32_t k = 0; k < n; k++) u[k] = mox__i2u(in[k]);                                      \
        mox__wstep_##name##_iu(r, u, n);                                                              \
        for (uint32_t k = 0; k < n; k++) out[k] = mox__u2i(r[k]);                                     \
    }
MOX__WSTEP_REDUCE(sum, MOX__R_ADD, MOX__R_ADD)
MOX__WSTEP_REDUCE(min, MOX__R_MINU, MOX__R_MINI)
MOX__WSTEP_REDUCE(max, MOX__R_MAXU, MOX__R_MAXI)
MOX__WSTEP_REDUCE(and, MOX__R_AND, MOX__R_AND)
MOX__WSTEP_REDUCE(or, MOX__R_OR, MOX__R_OR)
MOX__WSTEP_REDUCE(xor, MOX__R_XOR, MOX__R_XOR)
#undef MOX__WSTEP_REDUCE

static inline void mox__wstep_incl_u(uint32_t *out, const uint32_t *in, uint32_t n) { mox__wstep_scan_u(out, in, n, 0); }
static inline void mox__wstep_excl_u(uint32_t *out, const uint32_t *in, uint32_t n) { mox__wstep_scan_u(out, in, n, 1); }
MOX__WSTEP_U(inclusive_sum, mox__wstep_incl_u)
MOX__WSTEP_U(exclusive_sum, mox__wstep_excl_u)
#undef MOX__WSTEP_U

#define MOX__WSTEP_SHUFFLE(suffix, kind)                                                              \
    static inline void mox__wstep_shuffle##suffix##_u32(uint32_t *out, const uint32_t *in,           \
                                                         const uint32_t *arg, uint32_t n) {          \
        mox__wstep_shuffle_u(out, in, arg, n, kind);                                                  \
    }                                                                                                 \
    static inline void mox__wstep_shuffle##suffix##_i32(int32_t *out, const int32_t *in,             \
                                                         const uint32_t *arg, uint32_t n) {          \
        uint32_t u[MOX_WARP_SIZE], r[MOX_WARP_SIZE];                                                  \
        for (uint32_t k = 0; k < n; k++) u[k] = mox__i2u(in[k]);                                      \
        mox__wstep_shuffle_u(r, u, arg, n, kind);                                                     \
        for (uint32_t k = 0; k < n; k++) out[k] = mox__u2i(r[k]);                                     \
    }                                                                                                 \
    static inline void mox__wstep_shuffle##suffix##_f32(float *out, const float *in,                 \
                                                         const uint32_t *arg, uint32_t n) {          \
        uint32_t u[MOX_WARP_SIZE], r[MOX_WARP_SIZE];                                                  \
        for (uint32_t k = 0; k < n; k++) u[k] = mox_f32_to_bits(in[k]);                               \
        mox__wstep_shuffle_u(r, u, arg, n, kind);                                                     \
        for (uint32_t k = 0; k < n; k++) out[k] = mox_f32_from_bits(r[k]);                            \
    }
MOX__WSTEP_SHUFFLE(, MOX__S_IDX)
MOX__WSTEP_SHUFFLE(_up, MOX__S_UP)
MOX__WSTEP_SHUFFLE(_down, MOX__S_DOWN)
MOX__WSTEP_SHUFFLE(_xor, MOX__S_XOR)
#undef MOX__WSTEP_SHUFFLE

static inline void mox__wstep_ballot(uint64_t *out, const bool *in, uint32_t n) {
    uint64_t r = 0;
    for (uint32_t k = 0; k < n; k++)
        if (in[k]) r |= (uint64_t)1 << k;
    for (uint32_t k = 0; k < n; k++) out[k] = r;
}
static inline void mox__wstep_any(bool *out, const bool *in, uint32_t n) {
    bool r = false;
    for (uint32_t k = 0; k < n; k++) r = r || in[k];
    for (uint32_t k = 0; k < n; k++) out[k] = r;
}
static inline void mox__wstep_all(bool *out, const bool *in, uint32_t n) {
    bool r = true;
    for (uint32_t k = 0; k < n; k++) r = r && in[k];
    for (uint32_t k = 0; k < n; k++) out[k] = r;
}

/* ---- atomics (relaxed; shared-memory atomics are plain TLS words touched
 * by the fibers of one worker, device-buffer atomics are shared between
 * workers) ---- */

#define MOX__ATOMICS(sfx, T, A)                                                                     \
    static inline T mox_atomic_load_##sfx(const A *p) { return __atomic_load_n(&p->value, __ATOMIC_RELAXED); } \
    static inline void mox_atomic_store_##sfx(A *p, T v) { __atomic_store_n(&p->value, v, __ATOMIC_RELAXED); } \
    static inline T mox_atomic_exchange_##sfx(A *p, T v) {                                           \
        return __atomic_exchange_n(&p->value, v, __ATOMIC_RELAXED);                                  \
    }                                                                                                \
    static inline T mox_atomic_add_##sfx(A *p, T v) { return __atomic_fetch_add(&p->value, v, __ATOMIC_RELAXED); } \
    static inline T mox_atomic_sub_##sfx(A *p, T v) { return __atomic_fetch_sub(&p->value, v, __ATOMIC_RELAXED); } \
    static inline T mox_atomic_and_##sfx(A *p, T v) { return __atomic_fetch_and(&p->value, v, __ATOMIC_RELAXED); } \
    static inline T mox_atomic_or_##sfx(A *p, T v) { return __atomic_fetch_or(&p->value, v, __ATOMIC_RELAXED); }   \
    static inline T mox_atomic_xor_##sfx(A *p, T v) { return __atomic_fetch_xor(&p->value, v, __ATOMIC_RELAXED); } \
    static inline bool mox_atomic_cas_##sfx(A *p, T *expected, T desired) {                         \
        return __atomic_compare_exchange_n(&p->value, expected, desired, 0, __ATOMIC_RELAXED,        \
                                           __ATOMIC_RELAXED);                                        \
    }                                                                                                \
    static inline T mox_atomic_min_##sfx(A *p, T v) {                                                \
        T old = __atomic_load_n(&p->value, __ATOMIC_RELAXED);                                        \
        while (v < old &&                                                                            \
               !__atomic_compare_exchange_n(&p->value, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
            ;                                                                                        \
        return old;                                                                                  \
    }                                                                                                \
    static inline T mox_atomic_max_##sfx(A *p, T v) {                                                \
        T old = __atomic_load_n(&p->value, __ATOMIC_RELAXED);                                        \
        while (v > old &&                                                                            \
               !__atomic_compare_exchange_n(&p->value, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) \
            ;                                                                                        \
        return old;                                                                                  \
    }
/* GCC and clang define the __atomic arithmetic builtins on signed types as
 * two's-complement wrapping, so the i32 forms need no unsigned detour. */
MOX__ATOMICS(u32, uint32_t, mox_atomic_u32)
MOX__ATOMICS(i32, int32_t, mox_atomic_i32)
#undef MOX__ATOMICS

/* Shared-memory atomics inside a work-group function: the block's threads
 * run one after another on one worker, so plain loads and stores are
 * atomic with respect to every thread that can see the word. moxc calls
 * these instead of mox_atomic_* where the pointer is into a MOX_SHARED
 * array; results are the same. */
#define MOX__LOCAL_RMW(sfx, T, A, name, expr)                                                        \
    static inline T mox__local_atomic_##name##_##sfx(A *p, T v) {                                    \
        T o = p->value;                                                                              \
        p->value = (expr);                                                                           \
        return o;                                                                                    \
    }
#define MOX__LOCAL_ATOMICS(sfx, T, A, TO_U, FROM_U)                                                  \
    static inline T mox__local_atomic_load_##sfx(const A *p) { return p->value; }                    \
    static inline void mox__local_atomic_store_##sfx(A *p, T v) { p->value = v; }                    \
    MOX__LOCAL_RMW(sfx, T, A, exchange, v)                                                           \
    MOX__LOCAL_RMW(sfx, T, A, add, FROM_U(TO_U(o) + TO_U(v)))                                        \
    MOX__LOCAL_RMW(sfx, T, A, sub, FROM_U(TO_U(o) - TO_U(v)))                                        \
    MOX__LOCAL_RMW(sfx, T, A, min, v < o ? v : o)                                                    \
    MOX__LOCAL_RMW(sfx, T, A, max, v > o ? v : o)                                                    \
    MOX__LOCAL_RMW(sfx, T, A, and, FROM_U(TO_U(o) & TO_U(v)))                                        \
    MOX__LOCAL_RMW(sfx, T, A, or, FROM_U(TO_U(o) | TO_U(v)))                                         \
    MOX__LOCAL_RMW(sfx, T, A, xor, FROM_U(TO_U(o) ^ TO_U(v)))                                        \
    static inline bool mox__local_atomic_cas_##sfx(A *p, T *expected, T desired) {                   \
        if (p->value == *expected) {                                                                 \
            p->value = desired;                                                                      \
            return true;                                                                             \
        }                                                                                            \
        *expected = p->value;                                                                        \
        return false;                                                                                \
    }
#define MOX__SAME(x) (x)
MOX__LOCAL_ATOMICS(u32, uint32_t, mox_atomic_u32, MOX__SAME, MOX__SAME)
MOX__LOCAL_ATOMICS(i32, int32_t, mox_atomic_i32, mox__i2u, mox__u2i)
#undef MOX__SAME
#undef MOX__LOCAL_ATOMICS
#undef MOX__LOCAL_RMW

/* ---- f16: software conversions that match CUDA's cvt.rn.f16.f32 and
 * cvt.f32.f16 bit for bit (tests/dialect checks all 65536 halves) ---- */

static inline mox_f16 mox_f16_from_bits(uint16_t bits) {
    mox_f16 h;
    h.bits = bits;
    return h;
}
static inline uint16_t mox_f16_to_bits(mox_f16 h) { return h.bits; }

static inline mox_f16 mox_f16_from_f32(float f) {
    uint32_t u = mox_f32_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    uint32_t h;
    if (a > 0x7f800000u) return mox_f16_from_bits(0x7fffu); /* NaN: canonical, sign dropped */
    if (a >= 0x477ff000u) {
        h = 0x7c00u; /* >= 65520 (halfway to 2^16) rounds to inf */
    } else if (a >= 0x38800000u) { /* result is normal: rebias, round 13 bits */
        uint32_t rem = a & 0x1fffu;
        h = ((a >> 13) - ((127u - 15u) << 10));
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    } else if (a > 0x33000000u) { /* subnormal result, 2^-25 < |f| < 2^-14 */
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - (a >> 23); /* 14..24 */
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        h = m >> shift;
        if (rem > half || (rem == half && (h & 1u))) h++;
    } else {
        h = 0; /* |f| <= 2^-25 rounds to zero (2^-25 is a tie, to even) */
    }
    return mox_f16_from_bits((uint16_t)(sign | h));
}

/* Without a branch or a loop, so a loop converting halves vectorizes: a
 * subnormal half m * 2^-24 is (float)m (exact, m < 1024) times 2^-24
 * (exact: a power of two, the product a normal float). */
static inline float mox_f16_to_f32(mox_f16 h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t e = (h.bits >> 10) & 0x1fu;
    uint32_t m = h.bits & 0x3ffu;
    uint32_t normal = sign | ((e + 112u) << 23) | (m << 13);
    uint32_t special = m ? 0x7fffffffu : (sign | 0x7f800000u);
    uint32_t small = sign | mox_f32_to_bits((float)m * 5.9604644775390625e-8f); /* 2^-24 */
    return mox_f32_from_bits(e == 0x1fu ? special : e == 0u ? small : normal);
}

/* ---- dynamic shared memory ---- */

static inline void *mox__dynamic_shared(void) { return mox__cpu_lane->dynamic_shared; }

/* ---- failure ---- */

static inline void mox_fail(uint32_t code) {
    mox_cpu_lane *l = mox__cpu_lane;
    /* Parenthesised: test frameworks define a fail() macro. */
    (l->svc->fail)(l->dispatch, code);
}

#include <mox/kernel_cpu_math.h>

#endif
