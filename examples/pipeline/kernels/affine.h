/* affine.h - the device-side math helper of the pipeline's stages (a
 * header shared by the kernels, as the seed's pipeline-device-math crate). */
#ifndef PIPELINE_AFFINE_H
#define PIPELINE_AFFINE_H

#include <mox/kernel.h>

typedef struct affine {
    float scale, offset;
} affine;

/* x * scale + offset, two roundings (no contraction on either backend). */
MOX_DEVICE static inline float affine_apply(affine a, float x) { return x * a.scale + a.offset; }

MOX_DEVICE static inline uint32_t global_index(void)
{
    return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
}

#endif
