/* lower.c - kernels that exercise each construct of moxc's CPU lowering
 * (tools/moxc/cpu_lower.c): barriers inside uniform loops and branches,
 * break/continue/return around them, conditions evaluated per block and
 * per thread, variables kept per thread, recomputed or block-level, warp
 * operations in loops, branches and conditions, helpers that read the
 * thread index, declarations written by macros, and the constructs that
 * stay on fibers. All take
 * (in, out, p, q); test_lower_exec.c runs each through both executors.
 * Every thread writes LOWER_WORDS words at out[gid * LOWER_WORDS]. */
#include <mox/kernel.h>

#define LOWER_WORDS 4u

static uint32_t gid_of(void)
{
    mox_dim3 b = mox_block_idx(), g = mox_grid_dim(), d = mox_block_dim(), t = mox_thread_idx();
    uint32_t block = b.x + g.x * (b.y + g.y * b.z);
    return block * (d.x * d.y * d.z) + t.x + d.x * (t.y + d.y * t.z);
}

static void bump(uint32_t *v, uint32_t by)
{
    *v = *v * 3u + by;
}

/* A barrier loop with a block-level header, a uniform break and continue. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void loop_break(const uint32_t *in, uint32_t *out, uint32_t rounds, uint32_t stop)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 64u + t;
    uint32_t acc = in[gid];
    for (uint32_t r = 0; r < rounds; r++) {
        if (r == stop)
            break;
        s[t] = acc;
        mox_barrier();
        if (r % 3u == 1u) {
            mox_barrier();
            continue;
        }
        acc = acc + s[(t + r) % 64u] * 3u;
        mox_barrier();
    }
    out[gid * LOWER_WORDS] = acc;
}

/* A while loop whose uniform counter is a per-thread variable (its
 * condition is evaluated by every thread into a flag), and a do-while. */
MOX_KERNEL MOX_BLOCK(96, 1, 1)
void while_flag(const uint32_t *in, uint32_t *out, uint32_t rounds, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 96);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 96u + t;
    uint32_t v = in[gid];
    uint32_t remaining = rounds;
    while (remaining > 0u) {
        s[t] = v;
        mox_barrier();
        v = v ^ (s[95u - t] + remaining);
        mox_barrier();
        remaining--;
    }
    uint32_t k = 0;
    do {
        s[t] = v + k;
        mox_barrier();
        v += s[(t * 7u) % 96u];
        mox_barrier();
        k++;
    } while (k < q % 4u + 1u);
    out[gid * LOWER_WORDS] = v;
    out[gid * LOWER_WORDS + 1u] = remaining;
}

/* A uniform early return before barriers (a block-level branch), nested
 * branches with barriers on both sides. */
MOX_KERNEL MOX_BLOCK(32, 2, 1)
void early_exit(const uint32_t *in, uint32_t *out, uint32_t skip, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t gid = gid_of();
    uint32_t t = mox_thread_idx().y * 32u + mox_thread_idx().x;
    if (mox_block_idx().x == skip)
        return;
    s[t] = in[gid];
    mox_barrier();
    if (q & 1u) {
        uint32_t a = s[63u - t];
        mox_barrier();
        s[t] = a + 1u;
    } else {
        mox_barrier();
        s[t] = s[t] * 2u;
    }
    mox_barrier();
    out[gid * LOWER_WORDS] = s[(t + 5u) % 64u];
}

typedef struct pair {
    uint32_t lo, hi;
} pair;

/* Per-thread storage: an array, a struct, a variable whose address a
 * helper takes, a parameter the kernel assigns, all live across barriers. */
MOX_KERNEL MOX_BLOCK(50, 1, 1)
void keep_state(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 50);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 50u + t;
    uint32_t hist[4] = {0u, 1u, 2u, 3u};
    pair pr = {in[gid], t};
    uint32_t x = in[gid] + q;
    bump(&x, t);
    s[t] = x;
    mox_barrier();
    hist[s[(t + 1u) % 50u] % 4u] += 5u;
    p = p + s[49u - t];
    mox_barrier();
    bump(&x, p);
    pr.hi += hist[0] + hist[3];
    out[gid * LOWER_WORDS] = x;
    out[gid * LOWER_WORDS + 1u] = pr.lo ^ pr.hi;
    out[gid * LOWER_WORDS + 2u] = hist[1] * 7u + hist[2];
    out[gid * LOWER_WORDS + 3u] = p;
}

/* No MOX_BLOCK: any block shape. A helper reads the thread index in
 * regions after barriers; one declaration mixes block-level, recomputed
 * and per-thread variables. */
MOX_KERNEL
void any_shape(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 1024);
    mox_dim3 d = mox_block_dim();
    uint32_t threads = d.x * d.y * d.z, t = mox_thread_idx().x + d.x * (mox_thread_idx().y + d.y * mox_thread_idx().z),
             v = in[gid_of()];
    s[t] = v * p;
    mox_barrier();
    for (uint32_t step = 1u; step < threads; step *= 2u) {
        uint32_t other = s[(t + step) % threads];
        mox_barrier();
        s[t] = s[t] + other + q;
        mox_barrier();
    }
    out[gid_of() * LOWER_WORDS] = s[t] ^ v;
    out[gid_of() * LOWER_WORDS + 1u] = gid_of();
}

/* Warp operations in a loop (a shuffle butterfly), under a warp-uniform
 * branch, in an if condition and in a while condition. */
MOX_KERNEL
void warp_control(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    uint32_t gid = gid_of();
    uint32_t v = in[gid];
    float f = (float)(v % 1000u) * 0.25f;
    for (uint32_t o = 16u; o > 0u; o = o / 2u) {
        float partner = mox_warp_shuffle_xor_f32(f, o);
        f = f + partner;
    }
    uint32_t w = mox_warp_id();
    if (w % 2u == p % 2u)
        v = mox_warp_sum_u32(v) + mox_warp_inclusive_sum_u32(w);
    if (mox_warp_any(v % 5u == q % 5u))
        v += mox_warp_max_u32(v);
    uint32_t active = (v >> 3) % 9u, rounds = 0;
    while (mox_warp_any(active != 0u)) {
        active = active ? active - 1u : 0u;
        rounds += mox_warp_ballot(active != 0u) != 0u ? 1u : 0u;
    }
    out[gid * LOWER_WORDS] = mox_f32_to_bits(f);
    out[gid * LOWER_WORDS + 1u] = v;
    out[gid * LOWER_WORDS + 2u] = rounds;
    out[gid * LOWER_WORDS + 3u] = mox_lane_id() + 100u * w;
}

/* mox_fail from some threads, with barriers after it. */
MOX_KERNEL MOX_BLOCK(40, 1, 1)
void fail_then_sync(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 40);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 40u + t;
    if (in[gid] % 97u == p % 97u)
        mox_fail(in[gid] | 1u);
    s[t] = in[gid] + q;
    mox_barrier();
    out[gid * LOWER_WORDS] = s[39u - t];
}

/* Stays on fibers: a barrier inside a switch. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void switch_barrier(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 64u + t;
    s[t] = in[gid];
    switch (p % 3u) {
    case 0:
        mox_barrier();
        s[t] += s[63u - t];
        break;
    default:
        mox_barrier();
        s[t] ^= q;
        break;
    }
    mox_barrier();
    out[gid * LOWER_WORDS] = s[(t + 1u) % 64u];
}

static void sync_and_add(uint32_t *s, uint32_t t)
{
    mox_barrier();
    s[t] += s[(t + 9u) % 64u];
}

/* Stays on fibers: a barrier inside a called helper. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void helper_barrier(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 64u + t;
    s[t] = in[gid] + p;
    sync_and_add(s, t);
    mox_barrier();
    out[gid * LOWER_WORDS] = s[63u - t] + q;
}

#define SCALED(v) ((v) * scale)

/* Stays a loop calling the kernel per thread: a block-level variable moxc
 * would rename is used inside a macro's body. */
MOX_KERNEL
void macro_body_use(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    uint32_t scale = p * 3u + q;
    uint32_t gid = gid_of();
    out[gid * LOWER_WORDS] = SCALED(in[gid]);
}

/* Each thread adds up the totals of the warps before its own (a block
 * scan's second step): that loop is the same for every lane of a warp,
 * so it runs once per warp. */
MOX_KERNEL MOX_BLOCK(128, 1, 1)
void warp_prefix(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, part, 4);
    uint32_t t = mox_thread_idx().x;
    uint32_t gid = mox_block_idx().x * 128u + t;
    uint32_t v = in[gid];
    uint32_t s = mox_warp_sum_u32(v);
    if (mox_lane_id() == 0u)
        part[mox_warp_id()] = s;
    mox_barrier();
    uint32_t warp = mox_warp_id();
    uint32_t before = p;
    for (uint32_t w = 0; w < warp; w++)
        before += part[w] ^ q;
    out[gid * LOWER_WORDS] = before + v;
    out[gid * LOWER_WORDS + 1u] = part[(warp + 1u) % 4u];
}

#define DECLARE(T, name, value) T name = (value)
#define LOADED(name) uint32_t name = in[mox_block_idx().x * 64u + mox_thread_idx().x] * 5u

/* Declarations a macro writes, used only where they are declared: copied
 * as they are (acc, written out, is kept per thread). */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void macro_decls(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t acc = p;
    {
        DECLARE(uint32_t, t, mox_thread_idx().x);
        DECLARE(uint32_t, v, in[mox_block_idx().x * 64u + t] ^ p);
        s[t] = v;
        acc += v;
    }
    mox_barrier();
    {
        DECLARE(uint32_t, t, mox_thread_idx().x);
        out[(mox_block_idx().x * 64u + t) * LOWER_WORDS] = acc + s[63u - t] * q;
    }
}

/* Stays on fibers: a value kept across the barrier whose initializer is
 * the macro's own text, which moxc cannot copy. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void macro_init_kept(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t t = mox_thread_idx().x;
    LOADED(v);
    s[t] = v + p;
    mox_barrier();
    out[(mox_block_idx().x * 64u + t) * LOWER_WORDS] = v + s[63u - t] * q;
}

/* Grid-stride loops (cpu_lower_stride.c: the threads walk them side by
 * side). The total number of threads, p rounds over it: each thread
 * touches p words, a stride apart; continue and a nested loop's break
 * inside; q selects what to skip. */
MOX_KERNEL
void grid_stride(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    mox_dim3 g = mox_grid_dim(), d = mox_block_dim();
    uint32_t total = g.x * g.y * g.z * d.x * d.y * d.z;
    for (uint32_t i = gid_of(); i < total * p; i += total) {
        if ((in[i % total] ^ i) % 5u == q)
            continue;
        uint32_t acc = i;
        for (uint32_t k = 0; k < 8u; k++) {
            if (k == (in[i % total] & 7u))
                break;
            bump(&acc, k);
        }
        out[(i % total) * LOWER_WORDS + (i / total) % LOWER_WORDS] += acc;
    }
}

/* The same with a signed variable and a stride written as a local of the
 * block; and one that stays a plain loop per thread: its body breaks out. */
MOX_KERNEL
void grid_stride_signed(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    int32_t total = (int32_t)(mox_grid_dim().x * mox_block_dim().x * mox_block_dim().y * mox_block_dim().z *
                              mox_grid_dim().y * mox_grid_dim().z);
    /* the thread's linear index from the geometry alone: recomputed, so
     * written again in each round */
    uint32_t me = (mox_block_idx().x + mox_grid_dim().x * (mox_block_idx().y + mox_grid_dim().y * mox_block_idx().z)) *
                      (mox_block_dim().x * mox_block_dim().y * mox_block_dim().z) +
                  mox_thread_idx().x + mox_block_dim().x * (mox_thread_idx().y + mox_block_dim().y * mox_thread_idx().z);
    for (int32_t i = (int32_t)me - (int32_t)q; i < total * (int32_t)p; i += total) {
        if (i < 0)
            continue;
        out[me * LOWER_WORDS + 1u] ^= in[(uint32_t)i % (uint32_t)total] + (uint32_t)i;
    }
}

MOX_KERNEL
void grid_stride_break(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    uint32_t total = mox_grid_dim().x * mox_grid_dim().y * mox_grid_dim().z * mox_block_dim().x *
                     mox_block_dim().y * mox_block_dim().z; /* every thread writes its own words */
    for (uint32_t i = gid_of(); i < total * p; i += total) {
        if (in[i % total] % 7u == q)
            break;
        out[(i % total) * LOWER_WORDS + 2u] += i;
    }
}

/* The while form between barriers, as CUDA by Example's histogram writes
 * it (shared atomics; its variable declared before the loop); and one
 * whose continue would skip the increment, which stays as written. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void stride_histogram(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(mox_atomic_u32, bins, 64);
    uint32_t t = mox_thread_idx().x;
    mox_atomic_store_u32(&bins[t], 0u);
    mox_barrier();
    uint32_t total = mox_grid_dim().x * 64u;
    uint32_t i = mox_block_idx().x * 64u + t;
    while (i < total * p) {
        mox_atomic_add_u32(&bins[(in[i % total] + q) % 64u], 1u);
        i += total;
    }
    mox_barrier();
    out[(mox_block_idx().x * 64u + t) * LOWER_WORDS] = mox_atomic_load_u32(&bins[t]);
}

MOX_KERNEL
void stride_while_continue(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    uint32_t total = mox_grid_dim().x * mox_grid_dim().y * mox_grid_dim().z * mox_block_dim().x *
                     mox_block_dim().y * mox_block_dim().z;
    uint32_t i = gid_of();
    uint32_t skipped = 0;
    while (i < total * p) {
        uint32_t w = in[i % total];
        i += total;
        if (w % 3u == q) {
            skipped++;
            continue;
        }
        out[(i % total) * LOWER_WORDS + 3u] += w + skipped;
    }
}

/* The bounded shape (cpu_lower_bound.c): i = B + x, then if (i < N) S,
 * run for x below N - B only; in one region, and with i declared in the
 * region before a barrier. */
MOX_KERNEL MOX_BLOCK(64, 1, 1)
void bounded_guard(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().x;
    if (i < p * 16u + q)
        out[i * LOWER_WORDS] = in[i] * 5u + q;
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void bounded_after_barrier(const uint32_t *in, uint32_t *out, uint32_t p, uint32_t q)
{
    MOX_SHARED(uint32_t, s, 64);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * 64u + t;
    s[t] = in[i];
    mox_barrier();
    if (i < p * 16u + q)
        out[i * LOWER_WORDS + 1u] = s[63u - t] + i;
}
