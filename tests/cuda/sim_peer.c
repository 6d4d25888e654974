/* tests/cuda/sim_peer.c - the simulated driver's several devices as they
 * see each other (MOX_SIM_PEER): UUIDs, peer access and its attributes,
 * peer copies. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sim_driver.h"

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    static const unsigned char base[16] = {0x51, 0x6d, 0xc0, 0xda, 0x00, 0x00, 0x40, 0x00,
                                           0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    if (dev < 0 || dev >= sim_device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    memcpy(uuid->bytes, base, 16);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer);
CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    int n = sim_device_count();
    if (dev < 0 || dev >= n || peer < 0 || peer >= n)
        return CUDA_ERROR_INVALID_DEVICE;
    *can = dev != peer && sim_peer_kind() != 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice src, CUdevice dst);
CUresult cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice src, CUdevice dst)
{
    int can = 0;
    CUresult r = cuDeviceCanAccessPeer(&can, src, dst);
    if (r != CUDA_SUCCESS || src == dst)
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = can; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = sim_peer_kind() == 2; break;
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    STICKY();
    if (flags != 0 || !sim_valid_ctx(peer) || peer == t_current)
        return CUDA_ERROR_INVALID_VALUE;
    if (sim_peer_kind() == 0)
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    pthread_mutex_lock(&g_lock);
    bool already = t_current->peer[peer->ordinal];
    t_current->peer[peer->ordinal] = true;
    pthread_mutex_unlock(&g_lock);
    return already ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                  CUcontext src_ctx, size_t n, CUstream s);
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                           size_t n, CUstream s)
{
    if (!sim_valid_ctx(dst_ctx) || !sim_valid_ctx(src_ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    CUcontext d = sim_mem_ctx((void *)(uintptr_t)dst), o = sim_mem_ctx((void *)(uintptr_t)src);
    pthread_mutex_unlock(&g_lock);
    if ((d && d != dst_ctx) || (o && o != src_ctx))
        return CUDA_ERROR_INVALID_VALUE; /* a pointer of another context than named */
    return sim_copy_async((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, s);
}

