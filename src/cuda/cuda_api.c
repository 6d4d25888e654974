/* src/cuda/cuda_api.c - loads the CUDA driver at run time: dlopen of
 * libcuda.so.1, one dlsym per entry of the MOX__CUDA_SYMBOLS table, cuInit.
 * The process keeps one table; a machine without the driver (or without a
 * device) gets NULL and the runtime falls back to the CPU backend.
 */
#include "cuda/cuda_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mox__cuda_library_name(void)
{
    const char *env = getenv("MOX_CUDA_LIBRARY");
    return (env && env[0]) ? env : "libcuda.so.1";
}

int mox__cuda_api_load(const char *library, mox__cuda_api *api, char *why, size_t why_len)
{
    memset(api, 0, sizeof *api);
    void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *err = dlerror();
        snprintf(why, why_len, "cannot load the CUDA driver (%s): %s", library, err ? err : "unknown");
        return -1;
    }
    /* dlsym returns void *; converting it to a function pointer is what
     * POSIX requires to work, spelled through memcpy to stay ISO C. */
#define MOX__CUDA_LOAD(field, symbol, ret, params)                                        \
    do {                                                                                  \
        void *sym = dlsym(lib, #symbol);                                                   \
        if (!sym) {                                                                       \
            snprintf(why, why_len, "the CUDA driver (%s) lacks %s", library, #symbol);     \
            dlclose(lib);                                                                 \
            memset(api, 0, sizeof *api);                                                  \
            return -1;                                                                    \
        }                                                                                 \
        memcpy(&api->field, &sym, sizeof sym);                                            \
    } while (0);
    MOX__CUDA_SYMBOLS(MOX__CUDA_LOAD)
#undef MOX__CUDA_LOAD
#define MOX__CUDA_LOAD_OPTIONAL(field, symbol, ret, params) \
    do {                                                    \
        void *sym = dlsym(lib, #symbol);                    \
        memcpy(&api->field, &sym, sizeof sym);              \
    } while (0);
    MOX__CUDA_OPTIONAL_SYMBOLS(MOX__CUDA_LOAD_OPTIONAL)
#undef MOX__CUDA_LOAD_OPTIONAL
    api->library = lib;
    CUresult r = api->cuInit(0);
    if (r != CUDA_SUCCESS) {
        snprintf(why, why_len, "cuInit failed: %s", mox__cuda_error_name(api, r));
        dlclose(lib);
        memset(api, 0, sizeof *api);
        return -1;
    }
    int version = 0;
    if (api->cuDriverGetVersion(&version) == CUDA_SUCCESS)
        api->driver_version = version;
    return 0;
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static mox__cuda_api g_api;
static int g_ok;
static char g_why[512];

static void load_once(void)
{
    g_ok = mox__cuda_api_load(mox__cuda_library_name(), &g_api, g_why, sizeof g_why) == 0;
}

const mox__cuda_api *mox__cuda_api_get(const char **why)
{
    pthread_once(&g_once, load_once);
    if (!g_ok) {
        if (why)
            *why = g_why;
        return NULL;
    }
    return &g_api;
}

const char *mox__cuda_error_name(const mox__cuda_api *api, CUresult result)
{
    const char *name = NULL;
    if (api && api->cuGetErrorName && api->cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
        return name;
    /* Unknown to the driver: a per-thread buffer keeps the number visible. */
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "CUDA_ERROR_%d", (int)result);
    return buf;
}

int mox__cuda_error_is_sticky(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEINITIALIZED:
        return 1;
    default:
        return 0;
    }
}
