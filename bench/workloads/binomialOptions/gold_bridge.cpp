// gold_bridge.cpp - a C entry point to the binomialOptions sample's CPU
// tree (original/binomialOptions_gold.cpp, whose result is a reference).
#include "binomialOptions_common.h"

extern "C" void binomialOptionsCPU(real &callResult, TOptionData optionData);

extern "C" void wl_binomial_cpu(real *callResult, const TOptionData *optionData)
{
    binomialOptionsCPU(*callResult, *optionData);
}
