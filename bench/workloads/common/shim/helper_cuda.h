/* helper_cuda.h (shim) - stands in for cuda-samples' Common/helper_cuda.h
 * so that the sample files under bench/workloads/<sample>/original/ compile
 * unchanged without the samples' Common folder. Under nvcc it declares what
 * the originals' host functions name (error checks, device choice); their
 * host code is parsed but never linked or run: the benchmark loads the
 * kernels from the fatbin and launches them through the driver API. Under a
 * host C++ compiler (the gold code) it is empty, as the gold code names
 * nothing from it. */
#ifndef MOX_WORKLOADS_SHIM_HELPER_CUDA_H
#define MOX_WORKLOADS_SHIM_HELPER_CUDA_H

#ifdef __CUDACC__
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

template <typename T> void check(T result, char const *const func, const char *const file, int const line)
{
    if (result) {
        fprintf(stderr, "CUDA error at %s:%d code=%d \"%s\"\n", file, line, (int)result, func);
        exit(EXIT_FAILURE);
    }
}
#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)

inline void mox_shim_last_error(const char *msg, const char *file, const int line)
{
    cudaError_t err = cudaGetLastError();
    if (cudaSuccess != err) {
        fprintf(stderr, "%s(%i) : getLastCudaError() CUDA error : %s : (%d) %s.\n", file, line, msg,
                (int)err, cudaGetErrorString(err));
        exit(EXIT_FAILURE);
    }
}
#define getLastCudaError(msg) mox_shim_last_error(msg, __FILE__, __LINE__)

inline int findCudaDevice(int argc, const char **argv)
{
    (void)argc;
    (void)argv;
    checkCudaErrors(cudaSetDevice(0));
    return 0;
}
#endif

#endif
