/* cuda_gl_interop.h (shim) - stands in for the CUDA toolkit's OpenGL
 * interop header, which needs GL/gl.h. bodysystemcuda.cu only names the
 * graphics-resource functions of cuda_runtime_api.h, which nvcc includes
 * anyway. */
#ifndef MOX_WORKLOADS_SHIM_CUDA_GL_INTEROP_H
#define MOX_WORKLOADS_SHIM_CUDA_GL_INTEROP_H
#include <cuda_runtime.h>
#endif
