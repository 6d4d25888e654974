// particle.cu - hand-written CUDA reference of examples/particle-update's
// particle_update: two semi-implicit Euler steps per active particle, on
// the same 28-byte record (read from the example's header).
#include <stdint.h>

#include "particle.h"

__device__ static void advance(Particle *p, Config config, unsigned steps)
{
    if (p->tag == 0)
        return;
    for (unsigned s = 0; s < steps; s++) {
        for (unsigned axis = 0; axis < 2; axis++) {
            p->motion.velocity[axis] = p->motion.velocity[axis] + config.acceleration[axis] * config.dt;
            p->motion.position[axis] = p->motion.position[axis] + p->motion.velocity[axis] * config.dt;
        }
    }
    p->flags = (uint16_t)(p->flags + steps);
    p->color[1] = p->color[0];
}

extern "C" __global__ void __launch_bounds__(64) ref_particle_update(const Particle *input, Particle *output, Config config, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Particle p = input[i];
        advance(&p, config, 2);
        output[i] = p;
    }
}
