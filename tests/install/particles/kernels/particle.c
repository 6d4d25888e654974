/* particle.c - the kernels of docs/install.md's find_package(mox) example
 * (module "particle"), built by tests/install/doc_snippet.sh. */
#include <mox/kernel.h>

MOX_KERNEL
void drift(float *pos, const float *vel, float dt, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        pos[i] = pos[i] + vel[i] * dt;
}
