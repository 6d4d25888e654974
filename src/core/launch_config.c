/* launch_config.c - launch geometry: for_elements and validation in the
 * fixed order documented in include/mox/launch.h (the same order as
 * metal-oxide, so the error a user sees does not depend on the backend). */
#include <mox/launch.h>

#include "error.h"

mox_status mox_launch_config_for_elements(uint32_t block_x, uint32_t n, mox_launch_config *out)
{
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_launch_config_for_elements: out is NULL");
    if (block_x == 0)
        return mox__raise(MOX_ERR_INVALID_LAUNCH, "invalid launch: block dimensions must be positive");
    uint32_t grid = n / block_x + (n % block_x != 0);
    if ((uint64_t)grid * block_x > UINT32_MAX)
        return mox__raise(MOX_ERR_INVALID_LAUNCH,
                         "invalid launch: global thread dimensions exceed u32 (%u elements, block %u)",
                         n, block_x);
    out->grid = mox_dim3_make(grid, 1, 1);
    out->block = mox_dim3_make(block_x, 1, 1);
    out->shared_bytes = 0;
    return MOX_OK;
}

mox_status mox_launch_config_validate(const mox_launch_config *c, mox_dim3 device_max,
                                      uint32_t kernel_max_threads, uint64_t *total_threads)
{
    if (!c)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_launch_config_validate: config is NULL");
    if (kernel_max_threads == 0)
        return mox__raise(MOX_ERR_INVALID_LAUNCH, "invalid launch: kernel block limit must be positive");
    if (c->block.x == 0 || c->block.y == 0 || c->block.z == 0)
        return mox__raise(MOX_ERR_INVALID_LAUNCH, "invalid launch: block dimensions must be positive");
    if (c->block.x > device_max.x || c->block.y > device_max.y || c->block.z > device_max.z)
        return mox__raise(MOX_ERR_INVALID_LAUNCH,
                         "invalid launch: block dimensions exceed device limits "
                         "(block (%u,%u,%u), limits (%u,%u,%u))",
                         c->block.x, c->block.y, c->block.z, device_max.x, device_max.y, device_max.z);
    uint64_t volume = (uint64_t)c->block.x * c->block.y * c->block.z;
    if (volume > kernel_max_threads)
        return mox__raise(MOX_ERR_INVALID_LAUNCH,
                         "invalid launch: threads per block exceed kernel limit (%llu > %u)",
                         (unsigned long long)volume, kernel_max_threads);
    uint64_t gx = (uint64_t)c->grid.x * c->block.x;
    uint64_t gy = (uint64_t)c->grid.y * c->block.y;
    uint64_t gz = (uint64_t)c->grid.z * c->block.z;
    if (gx > UINT32_MAX || gy > UINT32_MAX || gz > UINT32_MAX)
        return mox__raise(MOX_ERR_INVALID_LAUNCH, "invalid launch: global thread dimensions exceed u32");
    /* gx * gy fits u64 (both < 2^32); the product with gz may not. */
    uint64_t xy = gx * gy;
    if (gz != 0 && xy > UINT64_MAX / gz)
        return mox__raise(MOX_ERR_INVALID_LAUNCH, "invalid launch: dimension volume overflows u64");
    if (total_threads)
        *total_threads = xy * gz;
    return MOX_OK;
}
