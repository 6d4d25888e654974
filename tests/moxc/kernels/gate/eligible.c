/* eligible.c - kernels whose gated CUDA entries check the gate after their
 * loads (moxc's deferred gate check, tools/moxc/gate_defer.c): no value
 * read from memory decides an address, a loop, an early exit or a
 * cooperative call, and every store through a pointer, atomic and mox_fail
 * is a statement of its own. test_gate_defer.c checks each one. */
#include <mox/kernel.h>

#include "../records.h"

#define GATE_BLOCK 256u
#define SQUARE(x) ((x) * (x))

static float twice(float v)
{
    return v * 2.0f;
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void vec_add(const float *a, const float *b, float *c, uint32_t n)
{
    uint32_t i = mox_block_idx().x * GATE_BLOCK + mox_thread_idx().x;
    if (i < n)
        c[i] = a[i] + b[i];
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void reduce_shared(const float *input, float *output, uint32_t n)
{
    MOX_SHARED(float, tile, 256);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * GATE_BLOCK + t;
    tile[t] = i < n ? input[i] : 0.0f;
    mox_barrier();
    for (uint32_t stride = GATE_BLOCK / 2; stride > 0; stride /= 2) {
        if (t < stride)
            tile[t] = tile[t] + tile[t + stride];
        mox_barrier();
    }
    if (t == 0)
        output[mox_block_idx().x] = tile[0];
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void warp_scan(const uint32_t *input, uint32_t *prefix, uint32_t *totals, uint32_t n)
{
    MOX_SHARED(uint32_t, warp_totals, 8);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * GATE_BLOCK + t;
    uint32_t v = i < n ? input[i] : 0u;
    uint32_t within_warp = mox_warp_exclusive_sum_u32(v);
    uint32_t warp_total = mox_warp_sum_u32(v);
    uint32_t warp = mox_warp_id();
    if (mox_lane_id() == 0u)
        warp_totals[warp] = warp_total;
    mox_barrier();
    uint32_t offset = 0u;
    for (uint32_t w = 0; w < warp; w++)
        offset += warp_totals[w];
    uint32_t exclusive = offset + within_warp;
    if (i < n)
        prefix[i] = exclusive;
    if (t == GATE_BLOCK - 1u)
        totals[mox_block_idx().x] = exclusive + v;
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void add_offsets(uint32_t *data, const uint32_t *offsets, uint32_t n)
{
    uint32_t i = mox_block_idx().x * GATE_BLOCK + mox_thread_idx().x;
    if (i < n)
        data[i] += offsets[mox_block_idx().x];
}

/* A record updated through a local copy and field by field. */
MOX_KERNEL
void particle_update(const Particle *input, Particle *output, Config config)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= config.count)
        return;
    Particle p = input[i];
    if (p.mass > 0.0f) {
        p.vel.x = p.vel.x + config.dt / p.mass;
        p.vel.y = p.vel.y - config.dt / p.mass;
    }
    p.pos.x = p.pos.x + p.vel.x * config.dt;
    output[i] = p;
    output[i].pos.y = p.pos.y + p.vel.y * config.dt;
}

/* Atomics and mox_fail as statements, an atomic's result in a local, ++
 * of a buffer element, a helper and a macro in the stored value. */
MOX_KERNEL
void count_positive(const float *in, mox_atomic_u32 *counter, uint32_t *hits, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    float v = in[i];
    if (v > 0.0f)
        mox_atomic_add_u32(&counter[0], 1u);
    else if (v != v)
        mox_fail(3u);
    uint32_t ticket = mox_atomic_add_u32(&counter[1], 1u);
    uint32_t seen;
    seen = mox_atomic_load_u32(&counter[0]);
    ++hits[i];
    out[i] = twice(SQUARE(v)) + (float)(ticket + seen);
}

/* Data-dependent values and branches around stores, a loop with a fixed
 * trip count under `#pragma unroll`, a local array. */
MOX_KERNEL
void clamp_rows(const float *in, float *out, uint32_t width, uint32_t rows)
{
    uint32_t row = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (row >= rows)
        return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 4
    for (uint32_t k = 0; k < 4u; k++) {
        float x = in[row * width + k];
        acc[k] = x < 0.0f ? 0.0f : fminf(x, 1.0f);
        if (x > 0.5f)
            out[row * width + k] = acc[k];
        else
            out[row * width + k] = -acc[k];
    }
}

/* A loop with a fixed trip count inside a data-dependent branch: its
 * counter is declared there, so the branch does not taint it. */
MOX_KERNEL
void ramp_positive(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    float v = in[i];
    if (v > 0.0f) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < 4u; k++)
            acc = acc + v * (float)k;
        out[i] = acc;
    }
}

/* A store before the block's barrier: the first guard comes before any
 * cooperative call, so by default the kernel is deferred through the
 * general view alone (no __gate1 entries), like vec_add. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void copy_then_sum(const float *input, float *copy, float *sums, uint32_t n)
{
    MOX_SHARED(float, tile, 256);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * GATE_BLOCK + t;
    float v = i < n ? input[i] : 0.0f;
    if (i < n)
        copy[i] = v;
    tile[t] = v;
    mox_barrier();
    if (t == 0) {
        float s = 0.0f;
        for (uint32_t k = 0; k < GATE_BLOCK; k++)
            s += tile[k];
        sums[mox_block_idx().x] = s;
    }
}

/* Guards after the barrier that one thread of the block reaches, written
 * with the call itself and inside `&&`: deferred by default, with __gate1
 * entries through the view of one dependency, like reduce_shared. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void last_thread_total(const uint32_t *input, uint32_t *totals, uint32_t n)
{
    MOX_SHARED(uint32_t, tile, 256);
    uint32_t i = mox_block_idx().x * GATE_BLOCK + mox_thread_idx().x;
    tile[mox_thread_idx().x] = i < n ? input[i] : 0u;
    mox_barrier();
    if (mox_thread_idx().x == GATE_BLOCK - 1u && mox_block_idx().x < n) {
        uint32_t s = 0u;
        for (uint32_t k = 0; k < GATE_BLOCK; k++)
            s += tile[k];
        totals[mox_block_idx().x] = s;
    }
    if (0u == mox_thread_idx().x)
        totals[mox_block_idx().x + 1u] = 0u;
}

/* A guard after a warp sum that lane 0 of every warp reaches (eight
 * threads of the block): by default the check stays at entry, like
 * warp_scan's. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void lane_partials(const float *a, float *partials, uint32_t n)
{
    uint32_t i = mox_block_idx().x * GATE_BLOCK + mox_thread_idx().x;
    float sum = mox_warp_sum_f32(i < n ? a[i] : 0.0f);
    if (mox_lane_id() == 0u)
        partials[mox_block_idx().x * mox_warps_per_block() + mox_warp_id()] = sum;
}

/* One thread's guard after the barrier, but an else-branch every other
 * thread runs: by default the check stays at entry. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void first_or_rest(const float *input, float *first, float *rest, uint32_t n)
{
    MOX_SHARED(float, tile, 256);
    uint32_t t = mox_thread_idx().x;
    uint32_t i = mox_block_idx().x * GATE_BLOCK + t;
    tile[t] = i < n ? input[i] : 0.0f;
    mox_barrier();
    if (t == 0u)
        first[mox_block_idx().x] = tile[0];
    else if (i < n)
        rest[i] = tile[t] - tile[0];
}

/* A helper followed into (not pure: it loops, reads and writes through
 * its pointer parameter, and returns under control that depends on
 * memory), called with a local's address, a part of one, and a local
 * array; the loop bound is a kernel parameter passed through. sum_pair
 * only reads through its pointer to const, so it may also be given a
 * buffer's address. */
typedef struct Body {
    float pos[2];
    float vel[2];
    uint32_t alive;
} Body;

static void drift(Body *b, float dt, uint32_t steps)
{
    if (b->alive == 0u)
        return;
    for (uint32_t s = 0; s < steps; s++)
        for (uint32_t axis = 0; axis < 2u; axis++)
            b->pos[axis] = b->pos[axis] + b->vel[axis] * dt;
}

static float sum_pair(const float *pair)
{
    return pair[0] + pair[1];
}

static void clear_pair(float *pair)
{
    pair[0] = 0.0f;
    pair[1] = 0.0f;
}

MOX_KERNEL
void drift_bodies(const float *pos, const float *vel, float *out, float *speeds, float dt, uint32_t steps,
                  uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        Body b = {{pos[2u * i], pos[2u * i + 1u]}, {vel[2u * i], vel[2u * i + 1u]}, 1u};
        drift(&b, dt, steps);
        float local[2] = {b.vel[0], b.vel[1]};
        speeds[i] = sum_pair(local) + sum_pair(b.pos) + sum_pair(&vel[2u * i]);
        clear_pair(&b.vel[0]);
        out[2u * i] = b.pos[0] + b.vel[0];
        out[2u * i + 1u] = b.pos[1] + b.vel[1];
    }
}
