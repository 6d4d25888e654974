/* mox/launch.h - launch configurations. The grid counts blocks. */
#ifndef MOX_LAUNCH_H
#define MOX_LAUNCH_H

#include <mox/status.h>
#include <mox/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_launch_config {
    mox_dim3 grid;  /* blocks per axis */
    mox_dim3 block; /* threads per block, per axis */
    /* Bytes of dynamic shared memory per block, for the kernel's
     * MOX_SHARED_DYNAMIC declarations (CUDA's third <<< >>> argument); 0
     * for none. At most mox_device_max_shared_bytes(); see
     * docs/kernel-language.md. */
    uint32_t shared_bytes;
} mox_launch_config;

static inline mox_dim3 mox_dim3_make(uint32_t x, uint32_t y, uint32_t z)
{
    mox_dim3 d = {x, y, z};
    return d;
}

static inline mox_launch_config mox_launch_config_make(mox_dim3 grid, mox_dim3 block)
{
    mox_launch_config c = {grid, block, 0};
    return c;
}

/* The same config asking for `bytes` of dynamic shared memory per block. */
static inline mox_launch_config mox_launch_config_with_shared(mox_launch_config config, uint32_t bytes)
{
    config.shared_bytes = bytes;
    return config;
}

/* 1-D config of ceil(n / block_x) blocks of block_x threads. n = 0 gives an
 * empty grid (valid, runs nothing). Codes: MOX_ERR_INVALID_LAUNCH when block_x
 * is 0 or grid * block does not fit u32. */
MOX_API mox_status mox_launch_config_for_elements(uint32_t block_x, uint32_t n,
                                                  mox_launch_config *out);

/* Validation in this fixed order (each failure is MOX_ERR_INVALID_LAUNCH with
 * the reason in the message):
 *   1. kernel_max_threads > 0     ("kernel block limit must be positive")
 *   2. every block axis > 0       ("block dimensions must be positive"), also for empty grids
 *   3. block axis <= device_max   ("block dimensions exceed device limits")
 *   4. block volume <= kernel_max_threads ("threads per block exceed kernel limit")
 *   5. grid*block fits u32 per axis ("global thread dimensions exceed u32"), total fits u64
 * An empty grid (any grid axis 0) is valid. total_threads (may be NULL) gets the thread count. */
MOX_API mox_status mox_launch_config_validate(const mox_launch_config *config, mox_dim3 device_max,
                                              uint32_t kernel_max_threads, uint64_t *total_threads);

/* 1 when any grid axis is 0. */
static inline int mox_launch_config_is_empty(const mox_launch_config *c)
{
    return c->grid.x == 0 || c->grid.y == 0 || c->grid.z == 0;
}

#ifdef __cplusplus
}
#endif
#endif
