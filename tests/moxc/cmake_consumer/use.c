/* use.c - host code of the CMake consumer: calls a generated launch. */
#include "demo.h"

mox_op *consumer_scale(mox_device *device, const mox_buffer *in, mox_buffer *out, uint32_t n);

mox_op *consumer_scale(mox_device *device, const mox_buffer *in, mox_buffer *out, uint32_t n)
{
    mox_launch_config config = {{(n + 255u) / 256u, 1, 1}, {256, 1, 1}, 0};
    return demo_scale(device, config, in, out, n);
}
