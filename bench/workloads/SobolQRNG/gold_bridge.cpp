// gold_bridge.cpp - C entry points to the SobolQRNG sample's CPU code
// (original/sobol_gold.cpp, C++ linkage), for the C host glue.
#include "sobol_gold.h"

extern "C" void wl_sobol_directions(int n_dimensions, unsigned int *directions)
{
    initSobolDirectionVectors(n_dimensions, directions);
}

extern "C" void wl_sobol_cpu(int n_vectors, int n_dimensions, unsigned int *directions, float *output)
{
    sobolCPU(n_vectors, n_dimensions, directions, output);
}
