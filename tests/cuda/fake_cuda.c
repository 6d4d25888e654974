/* tests/cuda/fake_cuda.c - a fake libcuda for the loader tests: every symbol
 * of the backend's table exists (generated from the same X-macro, so the
 * table and the fake cannot drift) and answers CUDA_ERROR_NOT_SUPPORTED,
 * except the few in fake_cuda_core.c that report a driver with no device. */
#include "cuda/cuda_api.h"

#define FAKE_DEFINE(field, symbol, ret, params)                                 \
    __attribute__((weak, visibility("default"))) ret symbol params;             \
    ret symbol params { return CUDA_ERROR_NOT_SUPPORTED; }
MOX__CUDA_SYMBOLS(FAKE_DEFINE)
