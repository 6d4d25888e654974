// gold_bridge.cpp - C entry points to the FDTD3d sample's CPU code
// (original/FDTD3dReference.cpp, C++ linkage), for the C host glue.
#include "FDTD3dReference.h"

extern "C" void wl_fdtd_random_data(float *data, int dimx, int dimy, int dimz, float lower, float upper)
{
    generateRandomData(data, dimx, dimy, dimz, lower, upper);
}

extern "C" int wl_fdtd_reference(float *output, const float *input, const float *coeff, int dimx, int dimy,
                                 int dimz, int radius, int timesteps)
{
    return fdtdReference(output, input, coeff, dimx, dimy, dimz, radius, timesteps) ? 1 : 0;
}

extern "C" int wl_fdtd_compare(const float *output, const float *reference, int dimx, int dimy, int dimz,
                               int radius, float tolerance)
{
    return compareData(output, reference, dimx, dimy, dimz, radius, tolerance) ? 1 : 0;
}
