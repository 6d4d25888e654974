/* src/cuda/cuda_error.c - the one place where CUDA driver results become
 * mox errors. The message keeps the driver's error name and the call that
 * failed ("cuModuleLoadData: CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image
 * is available ...)"), so users see which call broke. Messages are kept per
 * thread until the backend entry point turns them into a core error object
 * (mox__cuda_last_error).
 */
#include "cuda/cuda_internal.h"

#include <stdarg.h>
#include <stdio.h>


static _Thread_local char t_message[512];

const char *mox__cuda_last_message(void)
{
    return t_message;
}

mox_status mox__cuda_status_of(CUresult result)
{
    if (result == CUDA_SUCCESS)
        return MOX_OK;
    if (mox__cuda_error_is_sticky(result))
        return MOX_ERR_DEVICE_LOST;
    switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        return MOX_ERR_ALLOCATION_FAILED;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_INSUFFICIENT_DRIVER:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
        return MOX_ERR_DEVICE_UNAVAILABLE;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
        return MOX_ERR_MODULE_LOAD;
    case CUDA_ERROR_NOT_FOUND:
        return MOX_ERR_KERNEL_NOT_FOUND;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return MOX_ERR_INVALID_LAUNCH;
    default:
        return MOX_ERR_BACKEND;
    }
}

mox_error *mox__cuda_last_error(mox_status code)
{
    return mox__error_new(code, "%s", t_message);
}

mox_status mox__cuda_fail(const mox__cuda_api *api, CUresult result, const char *call,
                          const char *context)
{
    mox_status code = mox__cuda_status_of(result);
    const char *text = NULL;
    if (!api || !api->cuGetErrorString || api->cuGetErrorString(result, &text) != CUDA_SUCCESS)
        text = NULL;
    snprintf(t_message, sizeof t_message, "%s: %s%s%s%s%s%s", call,
             mox__cuda_error_name(api, result), text ? " (" : "", text ? text : "", text ? ")" : "",
             context && context[0] ? " " : "", context ? context : "");
    return code;
}

mox_status mox__cuda_error(mox_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_message, sizeof t_message, fmt, ap);
    va_end(ap);
    return code;
}
