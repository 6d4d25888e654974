/* ineligible.c - kernels whose gated CUDA entries keep the gate check at
 * entry: each has one construct that garbage data (what a failed upstream
 * kernel leaves) could turn into a fault, a hang or an effect, or that the
 * deferred copy cannot guard. The comment `why: NAME` marks the line the
 * reason names; test_gate_defer.c checks each one. */
#include <mox/kernel.h>

MOX_KERNEL
void histogram(const uint32_t *in, mox_atomic_u32 *bins, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        mox_atomic_add_u32(&bins[in[i] % 16u], 1u); /* why: histogram */
}

MOX_KERNEL
void gather(const float *in, const uint32_t *idx, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = in[idx[i]]; /* why: gather */
}

MOX_KERNEL
void halve_until_small(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    float x = in[i];
    while (x > 1.0f) /* why: halve_until_small */
        x = x * 0.5f;
    out[i] = x;
}

MOX_KERNEL
void sum_until_negative(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    float sum = 0.0f;
    for (uint32_t k = 0; k < 8u; k++) {
        float v = in[i * 8u + k];
        if (v < 0.0f)
            break; /* why: sum_until_negative */
        sum = sum + v;
    }
    out[i] = sum;
}

/* moxc accepts the barrier (the shared word is the same for every thread
 * after a barrier), but garbage in it would decide whether the barrier and
 * what follows run. */
MOX_KERNEL MOX_BLOCK(256, 1, 1)
void barrier_if_positive(const float *in, float *out)
{
    MOX_SHARED(float, tile, 256);
    MOX_SHARED(float, flag, 1);
    uint32_t t = mox_thread_idx().x;
    tile[t] = in[t];
    if (t == 0u)
        flag[0] = in[0];
    mox_barrier();
    if (flag[0] > 0.0f)
        mox_barrier(); /* why: barrier_if_positive */
    out[t] = tile[255u - t];
}

static void bump(float *p, float by)
{
    *p = *p + by;
}

MOX_KERNEL
void helper_with_pointer(float *data, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        bump(&data[i], 1.0f); /* why: helper_with_pointer */
}

MOX_KERNEL
void store_in_expression(const float *in, float *out, float *twice, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        twice[i] = (out[i] = in[i]) * 2.0f; /* why: store_in_expression */
}

MOX_KERNEL
void store_with_increment(const float *in, float *out, uint32_t n)
{
    uint32_t k = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    float v = k < n ? in[k] : 0.0f;
    out[k++] = v; /* why: store_with_increment */
    out[k] = v;
}

MOX_KERNEL
void pick_source(const float *a, const float *b, const float *select, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= n)
        return;
    const float *src = select[i] > 0.0f ? a : b; /* why: pick_source */
    out[i] = src[i];
}

#define STORE(p, i, v) ((p)[i] = (v))

MOX_KERNEL
void store_by_macro(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        STORE(out, i, in[i]); /* why: store_by_macro */
}

MOX_KERNEL
void shuffle_if_positive(const float *in, float *out)
{
    uint32_t t = mox_thread_idx().x;
    float v = in[t];
    float total = mox_warp_sum_f32(v);
    if (total > 0.0f)
        v = mox_warp_shuffle_down_f32(v, 1u); /* why: shuffle_if_positive */
    out[t] = v;
}

/* Helpers followed into, each with a construct the analysis refuses
 * inside: a loop bound, an index read from memory, a barrier. */
static void repeat_add(float *acc, float by, uint32_t times)
{
    for (uint32_t k = 0; k < times; k++) /* why: loop_in_helper */
        *acc = *acc + by;
}

MOX_KERNEL
void loop_in_helper(const float *in, const uint32_t *counts, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        float acc = 0.0f;
        repeat_add(&acc, in[i], counts[i]);
        out[i] = acc;
    }
}

static float pick(const float *table, uint32_t k)
{
    return table[k]; /* why: index_in_helper */
}

MOX_KERNEL
void index_in_helper(const float *in, const uint32_t *which, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        float local[4] = {in[i], 1.0f, 2.0f, 3.0f};
        out[i] = pick(local, which[i] & 3u);
    }
}

static void sync_bump(float *x)
{
    mox_barrier(); /* why: barrier_in_helper */
    *x = *x + 1.0f;
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void barrier_in_helper(const float *in, float *out)
{
    uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().x;
    float v = in[i];
    sync_bump(&v);
    out[i] = v;
}

/* A helper writing a value read from memory into the caller's local:
 * the local is tainted after the call (its address was taken), so it
 * cannot become an index. */
static void load_index(uint32_t *j, const uint32_t *src, uint32_t i)
{
    *j = src[i];
}

MOX_KERNEL
void index_through_helper(const uint32_t *which, const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        uint32_t j = 0u;
        load_index(&j, which, i);
        out[i] = in[j & 7u]; /* why: index_through_helper */
    }
}

/* A helper casting away the const of its parameter: it may receive any
 * address (here the kernel's output), so the store goes to memory. */
static void put_through_const(const float *p, float v)
{
    *(float *)p = v; /* why: cast_const_in_helper */
}

MOX_KERNEL
void cast_const_in_helper(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        put_through_const(out + i, in[i] * 2.0f);
}

/* A pointer to const passed on, cast, where the callee writes: the
 * callee's argument is not the caller's scratch. */
static void set_one(float *p)
{
    *p = 1.0f;
}

static void pass_const_on(const float *p)
{
    set_one((float *)p); /* why: const_passed_on */
}

MOX_KERNEL
void const_passed_on(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n && in[i] > 0.0f)
        pass_const_on(out + i);
}

/* A helper pointing its parameter elsewhere before it writes through it. */
static void retarget(float *p, const float *elsewhere)
{
    p = (float *)elsewhere; /* why: retarget_in_helper */
    *p = 0.0f;
}

MOX_KERNEL
void retarget_in_helper(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        float v = in[i];
        retarget(&v, out + i);
        out[i] = v;
    }
}
