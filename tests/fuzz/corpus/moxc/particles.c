/* particles.c - records as buffer elements and values; a struct spelled
 * with its tag; f16 inside a record and as a buffer. */
#include "particles.h"

static void advance(Particle *p, Config config)
{
    for (int axis = 0; axis < 2; axis++) {
        p->motion.velocity[axis] += config.acceleration[axis] * config.dt;
        p->motion.position[axis] += p->motion.velocity[axis] * config.dt;
    }
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void particle_update(const Particle *input, Particle *output, Config config, uint32_t n)
{
    uint32_t i = mox_block_idx().x * 64u + mox_thread_idx().x;
    if (i >= n)
        return;
    Particle p = input[i];
    advance(&p, config);
    output[i] = p;
}

MOX_KERNEL
void samples(const struct sample *input, mox_f16 *halves, struct sample first, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        halves[i] = mox_f16_from_f32(mox_f16_to_f32(input[i].half[0]) +
                                     mox_f16_to_f32(first.half[1]));
}
