/* fnptr_call.c - a call through a function pointer parameter of a helper. */
#include <mox/kernel.h>

static float square(float x)
{
    return x * x;
}

static float apply(float (*f)(float), float x)
{
    return f(x); /* EXPECT:call */
}

MOX_KERNEL
void map_square(float *data)
{
    uint32_t i = mox_thread_idx().x;
    data[i] = apply(square, data[i]); /* EXPECT:address */
}
