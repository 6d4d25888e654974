/* blackscholes.c - port of NVIDIA cuda-samples BlackScholes
 * (Samples/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh, kept
 * unchanged in ../original/) to the mox dialect: the same polynomial CND,
 * the same formula with the same fast intrinsics (__fdividef, __expf,
 * __logf and rsqrtf are the dialect's mox_fast_divf, mox_fast_expf,
 * mox_fast_logf and mox_rsqrtf), two options per thread, 128-thread
 * blocks, 8-byte vector loads and stores. */
#include <mox/kernel.h>

/* Polynomial approximation of the cumulative normal distribution. */
static float cndGPU(float d)
{
    const float A1 = 0.31938153f;
    const float A2 = -0.356563782f;
    const float A3 = 1.781477937f;
    const float A4 = -1.821255978f;
    const float A5 = 1.330274429f;
    const float RSQRT2PI = 0.39894228040143267793994605993438f;

    float K = mox_fast_divf(1.0f, (1.0f + 0.2316419f * fabsf(d)));

    float cnd =
        RSQRT2PI * mox_fast_expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));

    if (d > 0)
        cnd = 1.0f - cnd;

    return cnd;
}

/* Black-Scholes formula for both call and put (the original's float &
 * results become pointers). */
static void BlackScholesBodyGPU(float *CallResult, float *PutResult, float S, float X, float T, float R,
                                float V)
{
    float sqrtT, expRT;
    float d1, d2, CNDD1, CNDD2;

    sqrtT = mox_fast_divf(1.0F, mox_rsqrtf(T));
    d1 = mox_fast_divf(mox_fast_logf(S / X) + (R + 0.5f * V * V) * T, V * sqrtT);
    d2 = d1 - V * sqrtT;

    CNDD1 = cndGPU(d1);
    CNDD2 = cndGPU(d2);

    /* Calculate Call and Put simultaneously */
    expRT = mox_fast_expf(-R * T);
    *CallResult = S * CNDD1 - X * expRT * CNDD2;
    *PutResult = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
}

/* Processes optN options, two per thread to increase instruction-level
 * parallelism, as the original does. */
MOX_KERNEL MOX_BLOCK(128, 1, 1)
void BlackScholesGPU(mox_float2 *d_CallResult, mox_float2 *d_PutResult, const mox_float2 *d_StockPrice,
                     const mox_float2 *d_OptionStrike, const mox_float2 *d_OptionYears, float Riskfree,
                     float Volatility, int32_t optN)
{
    const int opt = (int)(mox_block_dim().x * mox_block_idx().x + mox_thread_idx().x);

    if (opt < (optN / 2)) {
        float callResult1, callResult2;
        float putResult1, putResult2;
        /* Whole 8-byte vectors, as the original loads them (its __restrict
         * pointers let nvcc merge the .x and .y reads; these may alias). */
        const mox_float2 S = d_StockPrice[opt], X = d_OptionStrike[opt], T = d_OptionYears[opt];
        BlackScholesBodyGPU(&callResult1, &putResult1, S.x, X.x, T.x, Riskfree, Volatility);
        BlackScholesBodyGPU(&callResult2, &putResult2, S.y, X.y, T.y, Riskfree, Volatility);
        d_CallResult[opt] = mox_make_float2(callResult1, callResult2);
        d_PutResult[opt] = mox_make_float2(putResult1, putResult2);
    }
}
