/* reference.c - the CPU reference of the particle kernels: the same
 * semi-implicit Euler steps, written independently of the kernel source. */
#include <string.h>

#include "reference.h"

void particle_inputs(Particle *particles, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        Particle *p = &particles[i];
        memset(p, 0, sizeof *p);
        p->tag = (uint8_t)(i % 5 == 0 ? 0 : 1 + i % 7);
        p->flags = (uint16_t)(i % 3 == 0 ? 65534u - i % 4 : i * 37u);
        p->id = (uint32_t)(i * 2654435761u);
        p->motion.position[0] = (float)(i % 101) * 0.5f - 20.0f;
        p->motion.position[1] = (float)(i % 37) / 3.0f;
        p->motion.velocity[0] = (float)((long)(i % 17) - 8) / 7.0f;
        p->motion.velocity[1] = (float)(i % 13) * 0.1f;
        p->color[0] = (uint8_t)(i * 11u);
        p->color[1] = (uint8_t)(i * 13u + 1u);
        p->color[2] = (uint8_t)(i * 17u + 2u);
    }
}

Config particle_config(void)
{
    Config c;
    c.dt = 1.0f / 60.0f;
    c.acceleration[0] = 0.25f;
    c.acceleration[1] = -9.81f;
    return c;
}

void particle_reference(const Particle *input, Particle *output, size_t n, Config config,
                        uint32_t steps)
{
    for (size_t i = 0; i < n; i++) {
        Particle p = input[i];
        if (p.tag != 0) {
            for (uint32_t s = 0; s < steps; s++) {
                float ax = config.acceleration[0] * config.dt;
                float ay = config.acceleration[1] * config.dt;
                p.motion.velocity[0] = p.motion.velocity[0] + ax;
                p.motion.position[0] = p.motion.position[0] + p.motion.velocity[0] * config.dt;
                p.motion.velocity[1] = p.motion.velocity[1] + ay;
                p.motion.position[1] = p.motion.position[1] + p.motion.velocity[1] * config.dt;
            }
            p.flags = (uint16_t)((p.flags + steps) & 0xffffu);
            p.color[1] = p.color[0];
        }
        output[i] = p;
    }
}

int particle_equal(const Particle *a, const Particle *b)
{
    return a->tag == b->tag && a->flags == b->flags && a->id == b->id &&
           memcmp(&a->motion, &b->motion, sizeof a->motion) == 0 &&
           memcmp(a->color, b->color, sizeof a->color) == 0;
}

/* The layout the ABI promises (the generated bindings assert it too). */
_Static_assert(sizeof(Motion) == 16 && _Alignof(Motion) == 4, "Motion is 16 bytes, align 4");
_Static_assert(sizeof(Particle) == 28 && _Alignof(Particle) == 4, "Particle is 28 bytes, align 4");
_Static_assert(sizeof(Config) == 12 && _Alignof(Config) == 4, "Config is 12 bytes, align 4");
