/* nonvoid.c - a kernel must return void. */
#include <mox/kernel.h>

MOX_KERNEL
float returns_value(float *out) /* EXPECT:nonvoid */
{
    return out[0];
}
