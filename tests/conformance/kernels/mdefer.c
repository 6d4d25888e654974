/* mdefer.c - a kernel of the conformance suite (module "mdefer") built
 * with the deferred gate check (MOXC_GATE_DEFER=1: its gated CUDA entries
 * check the gate only before the store, ask nothing at their end, and the
 * ABI marks it gate_deferred): with n = 0 behind a failed dependency no
 * thread stores, and only the runtime can make it GATED (deferred_gating.c). */
#include <mox/kernel.h>

MOX_KERNEL void defer_inc(const float *in, float *out, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        out[i] = in[i] + 1.0f;
}
