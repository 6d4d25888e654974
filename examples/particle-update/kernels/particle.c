/* particle.c - two kernels over Particle records sharing one helper:
 * particle_update advances each active particle two steps (fixed block 64),
 * particle_step one step (any block). Records travel by value (Config) and
 * in buffers (Particle), with nested arrays and u8/u16 fields. */
#include <mox/kernel.h>

#include "particle.h"

/* Semi-implicit Euler: velocity first, then position with the new velocity. */
static void advance(Particle *p, Config config, uint32_t steps)
{
    if (p->tag == 0)
        return;
    for (uint32_t s = 0; s < steps; s++) {
        for (uint32_t axis = 0; axis < 2; axis++) {
            p->motion.velocity[axis] =
                p->motion.velocity[axis] + config.acceleration[axis] * config.dt;
            p->motion.position[axis] =
                p->motion.position[axis] + p->motion.velocity[axis] * config.dt;
        }
    }
    p->flags = (uint16_t)(p->flags + steps);
    p->color[1] = p->color[0];
}

MOX_KERNEL MOX_BLOCK(64, 1, 1)
void particle_update(const Particle *input, Particle *output, Config config, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        Particle p = input[i];
        advance(&p, config, 2);
        output[i] = p;
    }
}

MOX_KERNEL
void particle_step(const Particle *input, Particle *output, Config config, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        Particle p = input[i];
        advance(&p, config, 1);
        output[i] = p;
    }
}
