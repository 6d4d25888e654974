/* tests/cuda/fake_cuda_core.c - the fake driver's working calls: cuInit
 * succeeds, no device exists, and errors have names and texts. */
#include <stddef.h>

#include "cuda/cuda_api.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT CUresult cuInit(unsigned int flags);
CUresult cuInit(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuDriverGetVersion(int *version);
CUresult cuDriverGetVersion(int *version)
{
    *version = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetCount(int *count)
{
    *count = 0;
    return CUDA_SUCCESS;
}

static const char *fake_name(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
    case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case CUDA_ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
    default: return NULL;
    }
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorName(CUresult error, const char **str)
{
    *str = fake_name(error);
    return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str)
{
    *str = error == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered"
                                               : (fake_name(error) ? "fake driver error" : NULL);
    return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
