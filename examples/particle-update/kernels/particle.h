/* particle.h - the records shared by the particle kernels and the host.
 * Plain C structs: moxc reads their layout from clang, puts it in the ABI,
 * and the generated bindings assert the host sees the same sizes and
 * offsets. Particle has padding (after tag, and 1 byte at the end). */
#ifndef PARTICLE_H
#define PARTICLE_H

#include <stdint.h>

typedef struct Motion {
    float position[2];
    float velocity[2];
} Motion; /* 16 bytes, align 4 */

typedef struct Particle {
    uint8_t tag;      /* 0: inactive, left unchanged */
    uint16_t flags;   /* advanced by the number of steps, wrapping */
    uint32_t id;
    Motion motion;
    uint8_t color[3]; /* color[1] is set to color[0] */
} Particle; /* 28 bytes, align 4 */

typedef struct Config {
    float dt;
    float acceleration[2];
} Config; /* 12 bytes, align 4 */

#endif
