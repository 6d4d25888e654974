/* fdtd3d_port.h - the original's constants the FDTD3d port's kernel and
 * host glue share: RADIUS (FDTD3dGPUKernel.cuh) and the block shape
 * (FDTD3dGPU.h, which is C++ and so cannot be included here). */
#ifndef MOX_WORKLOADS_FDTD3D_PORT_H
#define MOX_WORKLOADS_FDTD3D_PORT_H

#define RADIUS 4
#define k_blockDimX 32
#define k_blockDimMaxY 16

#endif
