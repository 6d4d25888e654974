/* fdtd3d_port.h - what the FDTD3d port's kernel and host glue share: the
 * original's constants (RADIUS from FDTD3dGPUKernel.cuh, the block shape
 * from FDTD3dGPU.h, which is C++ and so cannot be included here) and the
 * stencil coefficients, which the original keeps in __constant__ memory and
 * the port passes by value (kernel parameters live in the constant bank
 * too). */
#ifndef MOX_WORKLOADS_FDTD3D_PORT_H
#define MOX_WORKLOADS_FDTD3D_PORT_H

#define RADIUS 4
#define k_blockDimX 32
#define k_blockDimMaxY 16

typedef struct Stencil {
    float c[RADIUS + 1];
} Stencil;

#endif
