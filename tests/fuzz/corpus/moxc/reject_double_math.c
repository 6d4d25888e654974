/* double_math.c - double precision in a variable, in arithmetic, and in a
 * helper's signature. */
#include <mox/kernel.h>

static double widen(float x) /* EXPECT:helper */
{
    return x;
}

MOX_KERNEL
void doubles(float *data)
{
    uint32_t i = mox_thread_idx().x;
    double wide = data[i]; /* EXPECT:variable */
    data[i] = data[i] * 0.5; /* EXPECT:arithmetic */
    data[i] = (float)(wide + widen(data[i]));
}
