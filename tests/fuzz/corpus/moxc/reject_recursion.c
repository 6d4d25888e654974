/* recursion.c - a helper that calls itself. */
#include <mox/kernel.h>

static uint32_t fact(uint32_t n)
{
    return n <= 1u ? 1u : n * fact(n - 1u); /* EXPECT:recursion */
}

MOX_KERNEL
void factorials(uint32_t *out)
{
    uint32_t i = mox_thread_idx().x;
    out[i] = fact(i);
}
