// gold_bridge.cpp - C entry points to the nbody sample's CPU code: its
// initial conditions (randomizeBodies, original/bodysystem.h) and its CPU
// integrator (BodySystemCPU<float>, original/bodysystemcpu*.h). In the
// sample, nbody.cpp includes these after the CUDA toolkit's headers (the
// vector types) and the C++ library headers they lean on; here the vector
// types are declared with the same members.
#include <math.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

struct float3 {
    float x, y, z;
};
struct float4 {
    float x, y, z, w;
};
struct double3 {
    double x, y, z;
};
struct double4 {
    double x, y, z, w;
};

#include "bodysystemcpu.h"

extern "C" void wl_nbody_randomize(float *pos, float *vel, float *color, float clusterScale,
                                   float velocityScale, int numBodies)
{
    randomizeBodies<float>(NBODY_CONFIG_RANDOM, pos, vel, color, clusterScale, velocityScale, numBodies,
                           true);
}

// `steps` updates of dt from pos/vel (4 floats per body each), in place.
extern "C" void wl_nbody_cpu(float *pos, float *vel, int numBodies, float dt, int steps)
{
    BodySystemCPU<float> system(numBodies);
    system.setArray(BODYSYSTEM_POSITION, pos);
    system.setArray(BODYSYSTEM_VELOCITY, vel);
    for (int i = 0; i < steps; i++)
        system.update(dt);
    std::copy(system.getArray(BODYSYSTEM_POSITION), system.getArray(BODYSYSTEM_POSITION) + 4 * numBodies,
              pos);
    std::copy(system.getArray(BODYSYSTEM_VELOCITY), system.getArray(BODYSYSTEM_VELOCITY) + 4 * numBodies,
              vel);
}

// The CPU system's own softening (squared) and damping, for the kernels.
extern "C" void wl_nbody_cpu_constants(float *softeningSquared, float *damping)
{
    *softeningSquared = .00125f; // BodySystemCPU<T>::BodySystemCPU
    *damping = 0.995f;
}
