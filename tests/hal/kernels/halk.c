/* halk.c - kernels of the HAL contract suite (module "halk"): small, and
 * each leaves a trace in its output so order, gating and skipping show. */
#include <mox/kernel.h>

static uint32_t gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

/* out[i] = value */
MOX_KERNEL void hal_fill(float *out, float value, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = value;
}

/* out[i] = in[i] + value */
MOX_KERNEL void hal_add(const float *in, float *out, float value, uint32_t n)
{
    uint32_t i = gid();
    if (i < n)
        out[i] = in[i] + value;
}

/* Fails with `code` (thread 0); every thread still marks out[i] = 1, so a
 * failed dispatch is seen to have run. */
MOX_KERNEL void hal_fail(float *out, uint32_t code, uint32_t n)
{
    uint32_t i = gid();
    if (i == 0)
        mox_fail(code);
    if (i < n)
        out[i] = 1.0f;
}

/* Busy work, then out[i] = in[i]: an execution that is still running when
 * the next one is handed over. */
MOX_KERNEL void hal_slow(const float *in, float *out, uint32_t n, uint32_t spins)
{
    uint32_t i = gid();
    if (i >= n)
        return;
    float acc = in[i];
    for (uint32_t k = 0; k < spins; k++)
        acc = acc * 1.0000001f + 0.0f;
    out[i] = acc == acc ? in[i] : 0.0f;
}
