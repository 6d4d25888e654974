/* reference.h - plain-C reference for the particle-update example. */
#ifndef PARTICLE_REFERENCE_H
#define PARTICLE_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "particle.h"

/* Particles with every tag/flags/color situation: inactive ones (tag 0),
 * flags near 65535 so the u16 add wraps, varied colors and motions. */
void particle_inputs(Particle *particles, size_t n);
Config particle_config(void);
/* `steps` steps of the kernels' helper applied to each active particle. */
void particle_reference(const Particle *input, Particle *output, size_t n, Config config,
                        uint32_t steps);
/* Field-by-field equality (padding bytes are not part of the value); floats
 * compared by bits. */
int particle_equal(const Particle *a, const Particle *b);

#endif
