/* GL/freeglut.h (shim) - nbody's bodysystemcuda.cu includes freeglut for
 * its OpenGL interop host code, which the benchmark never uses; this empty
 * header lets nvcc compile the file unchanged on machines without OpenGL. */
#ifndef MOX_WORKLOADS_SHIM_FREEGLUT_H
#define MOX_WORKLOADS_SHIM_FREEGLUT_H
#endif
