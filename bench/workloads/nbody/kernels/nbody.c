/* nbody.c - port of NVIDIA cuda-samples nbody's integrateBodies<float>
 * (Samples/5_Domain_Specific/nbody/bodysystemcuda.cu, unchanged in
 * ../original/; after Nyland, Harris and Prins, GPU Gems 3 ch. 31) to the
 * mox dialect: every thread integrates one body, walking all bodies in
 * tiles of one block's size staged in dynamic shared memory (sized by the
 * launch, as the original's extern __shared__); any block size, the
 * velocities updated in place.
 *
 * Differences, each forced by the dialect: the softening comes by value
 * instead of from __constant__ (the parameter bank either way); and the
 * original's early return of threads past the last body, which precedes
 * barriers and so cannot pass moxc's uniformity check, becomes a guard on
 * their loads and stores (with whole blocks, as the sample runs, nothing
 * changes). */
#include <mox/kernel.h>


static mox_float3 bodyBodyInteraction(mox_float3 ai, mox_float4 bi, mox_float4 bj, float softeningSquared)
{
    mox_float3 r;

    /* r_ij  [3 FLOPS] */
    r.x = bj.x - bi.x;
    r.y = bj.y - bi.y;
    r.z = bj.z - bi.z;

    /* distSqr = dot(r_ij, r_ij) + EPS^2  [6 FLOPS] */
    float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;
    distSqr += softeningSquared;

    /* invDistCube = 1/distSqr^(3/2)  [4 FLOPS (2 mul, 1 sqrt, 1 inv)] */
    float invDist = mox_rsqrtf(distSqr);
    float invDistCube = invDist * invDist * invDist;

    /* s = m_j * invDistCube [1 FLOP] */
    float s = bj.w * invDistCube;

    /* a_i = a_i + s * r_ij [6 FLOPS] */
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;

    return ai;
}

static mox_float3 computeBodyAccel(mox_float4 bodyPos, const mox_float4 *positions, int numTiles,
                                   mox_float4 *sharedPos, float softeningSquared)
{
    mox_float3 acc = mox_make_float3(0.0f, 0.0f, 0.0f);
    const uint32_t tid = mox_thread_idx().x, dim = mox_block_dim().x;

    for (int tile = 0; tile < numTiles; tile++) {
        sharedPos[tid] = positions[(uint32_t)tile * dim + tid];

        mox_barrier();

        /* This is the "tile_calculation" from the GPUG3 article. */
#pragma unroll 128
        for (unsigned int counter = 0; counter < dim; counter++)
            acc = bodyBodyInteraction(acc, bodyPos, sharedPos[counter], softeningSquared);

        mox_barrier();
    }

    return acc;
}

MOX_KERNEL
void integrateBodies(mox_float4 *newPos, const mox_float4 *oldPos, mox_float4 *vel, uint32_t deviceOffset,
                     uint32_t deviceNumBodies, float deltaTime, float damping, int32_t numTiles,
                     float softeningSquared)
{
    MOX_SHARED_DYNAMIC(mox_float4, sharedPos); /* blockDim.x bodies */
    uint32_t index = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    const bool active = index < deviceNumBodies;
    mox_float4 position = mox_make_float4(0.0f, 0.0f, 0.0f, 0.0f);

    if (active)
        position = oldPos[deviceOffset + index];

    mox_float3 accel = computeBodyAccel(position, oldPos, numTiles, sharedPos, softeningSquared);

    if (!active)
        return;

    /* acceleration = force / mass; new velocity = old velocity +
     * acceleration * deltaTime. The body's mass is factored out of the
     * equation, here and in bodyBodyInteraction (they cancel out), so
     * here force == acceleration. */
    mox_float4 velocity = vel[deviceOffset + index];

    velocity.x += accel.x * deltaTime;
    velocity.y += accel.y * deltaTime;
    velocity.z += accel.z * deltaTime;

    velocity.x *= damping;
    velocity.y *= damping;
    velocity.z *= damping;

    /* new position = old position + velocity * deltaTime */
    position.x += velocity.x * deltaTime;
    position.y += velocity.y * deltaTime;
    position.z += velocity.z * deltaTime;

    /* store new position and velocity */
    newPos[deviceOffset + index] = position;
    vel[deviceOffset + index] = velocity;
}
