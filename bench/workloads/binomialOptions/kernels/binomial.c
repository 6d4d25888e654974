/* binomial.c - port of NVIDIA cuda-samples binomialOptions' kernel
 * (Samples/5_Domain_Specific/binomialOptions/binomialOptions_kernel.cu,
 * unchanged in ../original/) to the mox dialect: one 128-thread block per
 * option walks the NUM_STEPS-step tree backwards, each thread holding
 * ELEMS_PER_THREAD nodes in registers and trading its edge node through
 * shared memory between two barriers per step.
 *
 * The options come in a read-only table (MOX_TABLE, the constant bank on
 * CUDA, as the original's __constant__ d_OptionData), set by the launch
 * instead of cudaMemcpyToSymbol; the results go to a write buffer instead
 * of the original's __device__ d_CallValue. (__expf is mox_fast_expf.) */
#include <mox/kernel.h>

#include "binomialOptions_common.h" /* the original's NUM_STEPS */
#include "binomial_port.h"

#define THREADBLOCK_SIZE 128
#define ELEMS_PER_THREAD (NUM_STEPS / THREADBLOCK_SIZE)
#if NUM_STEPS % THREADBLOCK_SIZE
#error Bad constants
#endif

static float expiryCallValue(float S, float X, float vDt, int i)
{
    float d = S * mox_fast_expf(vDt * (2.0f * i - NUM_STEPS)) - X;
    return (d > 0.0F) ? d : 0.0F;
}

MOX_KERNEL MOX_BLOCK(THREADBLOCK_SIZE, 1, 1)
void binomialOptionsKernel(MOX_TABLE(OptionDataGPU, d_OptionData, MAX_OPTIONS), real *d_CallValue)
{
    MOX_SHARED(real, call_exchange, THREADBLOCK_SIZE + 1);

    const int tid = (int)mox_thread_idx().x;
    const real S = d_OptionData[mox_block_idx().x].S;
    const real X = d_OptionData[mox_block_idx().x].X;
    const real vDt = d_OptionData[mox_block_idx().x].vDt;
    const real puByDf = d_OptionData[mox_block_idx().x].puByDf;
    const real pdByDf = d_OptionData[mox_block_idx().x].pdByDf;

    real call[ELEMS_PER_THREAD + 1];
#pragma unroll
    for (int i = 0; i < ELEMS_PER_THREAD; ++i)
        call[i] = expiryCallValue(S, X, vDt, tid * ELEMS_PER_THREAD + i);

    if (tid == 0)
        call_exchange[THREADBLOCK_SIZE] = expiryCallValue(S, X, vDt, NUM_STEPS);

    int final_it = mox_max_i32(0, tid * ELEMS_PER_THREAD - 1);

#pragma unroll 16
    for (int i = NUM_STEPS; i > 0; --i) {
        call_exchange[tid] = call[0];
        mox_barrier();
        call[ELEMS_PER_THREAD] = call_exchange[tid + 1];
        mox_barrier();

        if (i > final_it) {
#pragma unroll
            for (int j = 0; j < ELEMS_PER_THREAD; ++j)
                call[j] = puByDf * call[j + 1] + pdByDf * call[j];
        }
    }

    if (tid == 0)
        d_CallValue[mox_block_idx().x] = call[0];
}
