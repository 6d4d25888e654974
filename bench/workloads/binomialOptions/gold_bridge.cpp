// gold_bridge.cpp - a C entry point to the binomialOptions sample's CPU
// tree (original/binomialOptions_gold.cpp, whose result is a reference).
//
// Deep out-of-the-money options drive the tree's float values into the
// subnormal range, where x86 cores take a microcode assist per operation:
// the sample's 1024 options then cost a minute of CPU. The tree therefore
// runs with subnormal results and inputs flushed to zero (MXCSR FTZ and
// DAZ, restored afterwards): what is flushed is below 1.2e-38, far under
// the 5e-4 L1 bound the results are held to.
#include "binomialOptions_common.h"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define WL_FLUSH_SUBNORMALS 1
#endif

extern "C" void binomialOptionsCPU(real &callResult, TOptionData optionData);

extern "C" void wl_binomial_cpu(real *callResult, const TOptionData *optionData)
{
#ifdef WL_FLUSH_SUBNORMALS
    unsigned int mxcsr = _mm_getcsr();
    _mm_setcsr(mxcsr | 0x8040u); // FTZ (bit 15) | DAZ (bit 6)
#endif
    binomialOptionsCPU(*callResult, *optionData);
#ifdef WL_FLUSH_SUBNORMALS
    _mm_setcsr(mxcsr);
#endif
}
