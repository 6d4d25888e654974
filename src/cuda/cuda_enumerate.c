/* src/cuda/cuda_enumerate.c - the CUDA devices of the machine as mox sees
 * them (docs/multi-device.md): which ordinal an open selects (ordinal,
 * UUID, or MOX_CUDA_DEVICE), a GPU's UUID, and how two GPUs reach each
 * other's memory (cuDeviceCanAccessPeer; NVLink when the link offers
 * native atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, which
 * PCIe peer links do not). */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mox_status mox__cuda_uuid_of(const mox__cuda_api *api, CUdevice d, char out[37])
{
    CUuuid u;
    CUresult r = api->cuDeviceGetUuid(&u, d);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuDeviceGetUuid", NULL);
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
    return MOX_OK;
}

static mox_status ordinal_from_env(int *out)
{
    const char *v = getenv("MOX_CUDA_DEVICE");
    *out = 0;
    if (!v || !v[0])
        return MOX_OK;
    uint32_t n = 0;
    if (!mox__parse_setting_uint(v, 1u << 20, &n))
        return mox__cuda_error(MOX_ERR_CONFIG,
                               "MOX_CUDA_DEVICE must be a device ordinal (0, 1, ...), not '%s'", v);
    *out = (int)n;
    return MOX_OK;
}

mox_status mox__cuda_select(const mox__backend_config *config, int *ordinal)
{
    if (!config->uuid)
        return config->ordinal >= 0 ? (*ordinal = config->ordinal, MOX_OK)
                                    : ordinal_from_env(ordinal);
    const char *why = NULL;
    const mox__cuda_api *api = mox__cuda_api_get(&why);
    if (!api)
        return mox__cuda_error(MOX_ERR_DEVICE_UNAVAILABLE, "CUDA backend unavailable: %s", why);
    int count = 0;
    CUresult r = api->cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NO_DEVICE)
        return mox__cuda_fail(api, r, "cuDeviceGetCount", NULL);
    for (int i = 0; r == CUDA_SUCCESS && i < count; i++) {
        CUdevice d;
        char u[37];
        if (api->cuDeviceGet(&d, i) == CUDA_SUCCESS && mox__cuda_uuid_of(api, d, u) == MOX_OK &&
            strcmp(u, config->uuid) == 0) {
            *ordinal = i;
            return MOX_OK;
        }
    }
    return mox__cuda_error(MOX_ERR_DEVICE_UNAVAILABLE,
                           "CUDA backend unavailable: no CUDA device has UUID %s (%d found)",
                           config->uuid, r == CUDA_SUCCESS ? count : 0);
}

mox_status mox__cuda_peer_link(mox__cuda_dev *dev, mox__cuda_dev *peer, uint32_t *link)
{
    const mox__cuda_api *api = dev->api;
    *link = MOX__PEER_NONE;
    if (dev->device == peer->device) {
        *link = MOX__PEER_SAME;
        return MOX_OK;
    }
    int can = 0, atomics = 0;
    CUresult r = api->cuDeviceCanAccessPeer(&can, dev->device, peer->device);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuDeviceCanAccessPeer", NULL);
    if (!can)
        return MOX_OK;
    r = api->cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                                     dev->device, peer->device);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuDeviceGetP2PAttribute", NULL);
    *link = atomics ? MOX__PEER_NVLINK : MOX__PEER_PCIE;
    return MOX_OK;
}
