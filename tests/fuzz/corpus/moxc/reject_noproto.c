/* noproto.c - `()` declares no prototype in C11. */
#include <mox/kernel.h>

MOX_KERNEL
void old_style() /* EXPECT:noproto */
{
}
