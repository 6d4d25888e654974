/* conf.c - kernels of the conformance suite (module "conf"). Small and
 * deterministic, so a wrong order or a skipped stage changes the output. */
#include <mox/kernel.h>

static uint32_t gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

/* out[i] = in[i] * factor */
MOX_KERNEL void scale(const float *in, float *out, float factor, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = in[i] * factor;
}

/* out[i] = a[i] + b[i] */
MOX_KERNEL void add(const float *a, const float *b, float *out, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = a[i] + b[i];
}

/* buf[i] = buf[i] * 2 + 1: in place, so only the right order gives the
 * right value after several launches. */
MOX_KERNEL void step(float *buf, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        buf[i] = buf[i] * 2.0f + 1.0f;
}

/* out[i] = value */
MOX_KERNEL void fill(float *out, float value, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = value;
}

/* out[i] = in[i] + 1, except that a negative input makes the dispatch fail
 * with code -in[i] (and that element is left alone). */
MOX_KERNEL void fail_if_negative(const float *in, float *out, uint32_t n)
{
    uint32_t i = gid();
    if (i >= n)
        return;
    if (in[i] < 0.0f) {
        mox_fail((uint32_t)(-in[i]));
        return;
    }
    out[i] = in[i] + 1.0f;
}

/* Busy work before copying, so the copy is observably late. */
MOX_KERNEL void slow_copy(const float *in, float *out, uint32_t n, uint32_t spins)
{
    uint32_t i = gid();
    if (i >= n)
        return;
    float acc = in[i];
    for (uint32_t k = 0; k < spins; k++)
        acc = acc * 1.0000001f;
    out[i] = acc == acc ? in[i] : 0.0f;
}

/* counter[0] += n threads, atomically. */
MOX_KERNEL void count(mox_atomic_u32 *counter, uint32_t n)
{
    if (gid() < n)
        mox_atomic_add_u32(&counter[0], 1u);
}

/* u32 output, for type mismatch tests. */
MOX_KERNEL void iota(uint32_t *out, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = i;
}

/* A kernel with a required block. */
MOX_KERNEL MOX_BLOCK(64, 1, 1) void fixed64(float *out, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = (float)mox_block_dim().x;
}
