/* tests/cuda/fake_cuda_partial.c - a "driver" that has only the first
 * symbol of the table, to check that a missing symbol is reported. */
#include "cuda/cuda_api.h"

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorName(CUresult error, const char **str)
{
    (void)error;
    *str = "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}
