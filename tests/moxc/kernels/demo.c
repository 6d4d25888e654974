/* demo.c - moxc's test module "demo": every parameter kind (read, write
 * and atomic buffers, scalar, f16 and record values), records, a required
 * block, shared memory and barriers, mox_fail, a helper, and a kernel
 * without parameters. */
#include <mox/kernel.h>

#include "records.h"

static const float demo_offset = 1.0f;

static float twice(float v)
{
    return v * 2.0f;
}

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void scale(const float *input, float *output, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        output[i] = twice(input[i]) + demo_offset;
}

MOX_KERNEL
void integrate(Particle *particles, Config config, mox_f16 gain, mox_atomic_u32 *counter)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i >= config.count)
        return;
    if (particles[i].mass < 0.0f) {
        mox_fail(7u);
        return;
    }
    float g = mox_f16_to_f32(gain);
    particles[i].pos.x = particles[i].pos.x + particles[i].vel.x * config.dt * g;
    particles[i].pos.y = particles[i].pos.y + particles[i].vel.y * config.dt * g;
    mox_atomic_add_u32(counter, 1u);
}

MOX_KERNEL MOX_BLOCK(16, 16, 1)
void tile(const float *values, float *sums, int8_t bias)
{
    MOX_SHARED(float, cache, 256);
    mox_dim3 t = mox_thread_idx();
    uint32_t linear = t.y * 16u + t.x;
    uint32_t base = mox_block_idx().x * 256u;
    cache[linear] = values[base + linear];
    mox_barrier();
    if (linear == 0u) {
        float total = (float)bias;
        for (uint32_t k = 0; k < 256u; ++k)
            total = total + cache[k];
        sums[mox_block_idx().x] = total;
    }
}

MOX_KERNEL
void noop(void)
{
}
