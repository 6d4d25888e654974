/* src/cuda/cuda_api.h - the slice of the CUDA driver API the backend uses,
 * declared here so that mox builds without cuda.h and links without
 * libcuda: the driver is dlopen'd at run time (cuda_api.c).
 *
 * The declarations mirror CUDA 13's cuda.h. Where cuda.h maps a name to a
 * versioned symbol (cuMemAlloc -> cuMemAlloc_v2) the table loads the
 * versioned symbol, because the plain symbol is the legacy 32-bit entry.
 * Where the plain symbol is the one we want (cuGraphAddKernelNode,
 * cuGraphExecKernelNodeSetParams) it takes the v1 struct layout, which is
 * the one declared here. Only what mox calls is declared.
 */
#ifndef MOX_CUDA_API_H
#define MOX_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult; /* enum cudaError_enum: int-sized */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2 on 64-bit hosts */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
    CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
    CUDA_ERROR_CONTAINED = 226,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    CUDA_ERROR_INVALID_PC = 718,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
    CUDA_ERROR_UNKNOWN = 999
};

/* CUdevice_attribute values used. */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

/* CUdevice_P2PAttribute values used. */
enum {
    CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 1,
    CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 2,
    CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 3
};

/* CUfunction_attribute values used. */
enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
};

/* Flags. */
enum {
    CU_STREAM_NON_BLOCKING = 0x1,
    CU_EVENT_DEFAULT = 0x0,
    CU_EVENT_BLOCKING_SYNC = 0x1,
    CU_EVENT_DISABLE_TIMING = 0x2,
    CU_MEMHOSTALLOC_PORTABLE = 0x1,
    CU_MEMHOSTALLOC_DEVICEMAP = 0x2
};

/* CUDA_KERNEL_NODE_PARAMS_v1: the layout the plain symbols
 * cuGraphAddKernelNode / cuGraphExecKernelNodeSetParams take. */
typedef struct CUDA_KERNEL_NODE_PARAMS_v1 {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
} CUDA_KERNEL_NODE_PARAMS_v1;

/* The symbol table: X(field, symbol, return type, (parameters)).
 * Error-name functions come first so that a failure to load anything after
 * them can still be described. */
#define MOX__CUDA_SYMBOLS(X)                                                                       \
    X(cuGetErrorName, cuGetErrorName, CUresult, (CUresult error, const char **str))                \
    X(cuGetErrorString, cuGetErrorString, CUresult, (CUresult error, const char **str))            \
    X(cuInit, cuInit, CUresult, (unsigned int flags))                                              \
    X(cuDriverGetVersion, cuDriverGetVersion, CUresult, (int *version))                            \
    X(cuDeviceGetCount, cuDeviceGetCount, CUresult, (int *count))                                  \
    X(cuDeviceGet, cuDeviceGet, CUresult, (CUdevice * device, int ordinal))                        \
    X(cuDeviceGetName, cuDeviceGetName, CUresult, (char *name, int len, CUdevice dev))             \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute, CUresult, (int *pi, int attrib, CUdevice dev))   \
    X(cuDeviceTotalMem, cuDeviceTotalMem_v2, CUresult, (size_t * bytes, CUdevice dev))             \
    X(cuDeviceGetUuid, cuDeviceGetUuid_v2, CUresult, (CUuuid * uuid, CUdevice dev))               \
    X(cuDeviceCanAccessPeer, cuDeviceCanAccessPeer, CUresult,                                      \
      (int *can_access, CUdevice dev, CUdevice peer))                                              \
    X(cuDeviceGetP2PAttribute, cuDeviceGetP2PAttribute, CUresult,                                  \
      (int *value, int attrib, CUdevice src, CUdevice dst))                                        \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, CUresult, (CUcontext * ctx, CUdevice dev)) \
    X(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice dev))           \
    X(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, CUresult, (CUdevice dev))               \
    X(cuCtxSetCurrent, cuCtxSetCurrent, CUresult, (CUcontext ctx))                                 \
    X(cuCtxGetCurrent, cuCtxGetCurrent, CUresult, (CUcontext * ctx))                               \
    X(cuCtxSynchronize, cuCtxSynchronize, CUresult, (void))                                        \
    X(cuCtxEnablePeerAccess, cuCtxEnablePeerAccess, CUresult, (CUcontext peer, unsigned int flags)) \
    X(cuMemAlloc, cuMemAlloc_v2, CUresult, (CUdeviceptr * dptr, size_t bytes))                     \
    X(cuMemFree, cuMemFree_v2, CUresult, (CUdeviceptr dptr))                                       \
    X(cuMemFreeAsync, cuMemFreeAsync, CUresult, (CUdeviceptr dptr, CUstream stream))               \
    X(cuMemAllocAsync, cuMemAllocAsync, CUresult,                                                  \
      (CUdeviceptr * dptr, size_t bytes, CUstream stream))                                         \
    X(cuMemHostAlloc, cuMemHostAlloc, CUresult, (void **pp, size_t bytes, unsigned int flags))     \
    X(cuMemFreeHost, cuMemFreeHost, CUresult, (void *p))                                           \
    X(cuMemHostGetDevicePointer, cuMemHostGetDevicePointer_v2, CUresult,                           \
      (CUdeviceptr * dptr, void *p, unsigned int flags))                                           \
    X(cuMemcpyHtoD, cuMemcpyHtoD_v2, CUresult, (CUdeviceptr dst, const void *src, size_t n))       \
    X(cuMemcpyDtoH, cuMemcpyDtoH_v2, CUresult, (void *dst, CUdeviceptr src, size_t n))             \
    X(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, CUresult,                                           \
      (CUdeviceptr dst, const void *src, size_t n, CUstream stream))                               \
    X(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, CUresult,                                           \
      (void *dst, CUdeviceptr src, size_t n, CUstream stream))                                     \
    X(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, CUresult,                                           \
      (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream))                               \
    X(cuMemcpyPeerAsync, cuMemcpyPeerAsync, CUresult,                                              \
      (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,          \
       CUstream stream))                                                                           \
    X(cuMemsetD8Async, cuMemsetD8Async, CUresult,                                                  \
      (CUdeviceptr dst, unsigned char value, size_t n, CUstream stream))                           \
    X(cuMemsetD16Async, cuMemsetD16Async, CUresult,                                                \
      (CUdeviceptr dst, unsigned short value, size_t n, CUstream stream))                          \
    X(cuMemsetD32Async, cuMemsetD32Async, CUresult,                                                \
      (CUdeviceptr dst, unsigned int value, size_t n, CUstream stream))                            \
    X(cuModuleLoadData, cuModuleLoadData, CUresult, (CUmodule * module, const void *image))        \
    X(cuModuleUnload, cuModuleUnload, CUresult, (CUmodule module))                                 \
    X(cuModuleGetFunction, cuModuleGetFunction, CUresult,                                          \
      (CUfunction * fn, CUmodule module, const char *name))                                        \
    X(cuFuncGetAttribute, cuFuncGetAttribute, CUresult, (int *pi, int attrib, CUfunction fn))      \
    X(cuFuncSetAttribute, cuFuncSetAttribute, CUresult, (CUfunction fn, int attrib, int value))      \
    X(cuStreamCreate, cuStreamCreate, CUresult, (CUstream * stream, unsigned int flags))           \
    X(cuStreamDestroy, cuStreamDestroy_v2, CUresult, (CUstream stream))                            \
    X(cuStreamWaitEvent, cuStreamWaitEvent, CUresult,                                              \
      (CUstream stream, CUevent event, unsigned int flags))                                        \
    X(cuStreamSynchronize, cuStreamSynchronize, CUresult, (CUstream stream))                       \
    X(cuEventCreate, cuEventCreate, CUresult, (CUevent * event, unsigned int flags))               \
    X(cuEventDestroy, cuEventDestroy_v2, CUresult, (CUevent event))                                \
    X(cuEventRecord, cuEventRecord, CUresult, (CUevent event, CUstream stream))                    \
    X(cuEventQuery, cuEventQuery, CUresult, (CUevent event))                                       \
    X(cuEventSynchronize, cuEventSynchronize, CUresult, (CUevent event))                           \
    X(cuEventElapsedTime, cuEventElapsedTime, CUresult, (float *ms, CUevent start, CUevent end))   \
    X(cuLaunchKernel, cuLaunchKernel, CUresult,                                                    \
      (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,           \
       unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,      \
       void **extra))                                                                              \
    X(cuGraphCreate, cuGraphCreate, CUresult, (CUgraph * graph, unsigned int flags))               \
    X(cuGraphDestroy, cuGraphDestroy, CUresult, (CUgraph graph))                                   \
    X(cuGraphAddKernelNode, cuGraphAddKernelNode, CUresult,                                        \
      (CUgraphNode * node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,                   \
       const CUDA_KERNEL_NODE_PARAMS_v1 *params))                                                  \
    X(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags, CUresult,                          \
      (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                               \
    X(cuGraphExecKernelNodeSetParams, cuGraphExecKernelNodeSetParams, CUresult,                    \
      (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *params))              \
    X(cuGraphLaunch, cuGraphLaunch, CUresult, (CUgraphExec exec, CUstream stream))                 \
    X(cuGraphExecDestroy, cuGraphExecDestroy, CUresult, (CUgraphExec exec))

/* CUgraphEdgeData (CUDA 12.3+): how one graph edge is triggered. */
enum {
    CU_GRAPH_DEPENDENCY_TYPE_DEFAULT = 0,
    CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1,
    CU_GRAPH_KERNEL_NODE_PORT_DEFAULT = 0,
    CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC = 1, /* every block of the upstream grid ended */
    CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER = 2  /* every block of the upstream grid began */
};
typedef struct CUgraphEdgeData {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type;
    unsigned char reserved[5];
} CUgraphEdgeData;

/* Symbols used when the driver has them: a driver without one loads all
 * the same, with the field NULL and what needs it off (docs/cuda-backend.md:
 * programmatic dependent launch needs both). */
#define MOX__CUDA_OPTIONAL_SYMBOLS(X)                                                              \
    X(cuGraphAddDependencies, cuGraphAddDependencies_v2, CUresult,                                 \
      (CUgraph graph, const CUgraphNode *from, const CUgraphNode *to,                              \
       const CUgraphEdgeData *edges, size_t count))                                                \
    X(cuModuleGetGlobal, cuModuleGetGlobal_v2, CUresult,                                           \
      (CUdeviceptr * dptr, size_t *bytes, CUmodule module, const char *name))

typedef struct mox__cuda_api {
#define MOX__CUDA_FIELD(field, symbol, ret, params) ret (*field) params;
    MOX__CUDA_SYMBOLS(MOX__CUDA_FIELD)
    MOX__CUDA_OPTIONAL_SYMBOLS(MOX__CUDA_FIELD)
#undef MOX__CUDA_FIELD
    void *library; /* dlopen handle; never closed (unloading a driver is unsafe) */
    int driver_version;
} mox__cuda_api;

/* Library the loader opens: $MOX_CUDA_LIBRARY when set (tests use a
 * missing path to simulate a machine without a driver), else libcuda.so.1. */
const char *mox__cuda_library_name(void);

/* Loads the driver from `library` (dlopen, every symbol, cuInit(0)) into
 * *api. Returns 0, or -1 with a reason in why[0..why_len). Never aborts.
 * A missing library, a missing symbol or a failing cuInit all fail. */
int mox__cuda_api_load(const char *library, mox__cuda_api *api, char *why, size_t why_len);

/* The process-wide driver table, loaded once from mox__cuda_library_name().
 * NULL when the driver is unavailable; *why (may be NULL) then gets a static
 * string saying why. Thread-safe. */
const mox__cuda_api *mox__cuda_api_get(const char **why);

/* "CUDA_ERROR_ILLEGAL_ADDRESS" (or "CUDA_ERROR_<n>" when the driver cannot
 * name it); never NULL. */
const char *mox__cuda_error_name(const mox__cuda_api *api, CUresult result);

/* 1 when `result` leaves the context unusable (a sticky fault: illegal
 * address, illegal instruction, launch failure, ECC...). */
int mox__cuda_error_is_sticky(CUresult result);

#endif
