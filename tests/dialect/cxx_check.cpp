// cxx_check.cpp - the CPU mode of mox/kernel.h and the test kernels
// compiled as C++ (kernel sources are the common subset of C11 and C++).
#include "kernels_src.h"

// Instantiate a use so the kernels are checked, not just parsed.
void mox_dialect_cxx_use(uint32_t *out);
void mox_dialect_cxx_use(uint32_t *out) {
    if (mox__cpu_lane != nullptr) geom(out);
}
