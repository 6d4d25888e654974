/* plain.c - a program whose target links with target_link_libraries' plain
 * signature before mox_add_kernels() adds its module: CMake refuses a
 * target that mixes the plain and the keyword signatures, so configuring
 * this project checks that mox_add_kernels uses neither. It opens the
 * default device and prepares the module (exit 0 when both succeed). */
#include <stdio.h>

#include <mox/mox.h>

#include "plain_demo.h"

int main(void)
{
    mox_device *dev = NULL;
    if (mox_device_open(&dev) != MOX_OK || mox_module_prepare(dev, &plain_demo_module) != MOX_OK) {
        fprintf(stderr, "consumer_plain: %s\n", mox_error_last_message());
        return 1;
    }
    mox_device_release(dev);
    return 0;
}
