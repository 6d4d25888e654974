/* original_tu.cu - the translation unit nvcc compiles into the
 * BlackScholes reference fatbins: the sample's kernel header, unchanged.
 * (In the sample, BlackScholes.cu includes it next to the host program.) */
#include "BlackScholes_kernel.cuh"
