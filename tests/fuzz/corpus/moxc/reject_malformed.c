/* malformed.c - a syntax error. */
#include <mox/kernel.h>

MOX_KERNEL
void broken(float *out, uint32_t n)
{
    out[0] = (float)n +; /* EXPECT:syntax */
}
