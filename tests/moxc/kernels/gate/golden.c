/* golden.c - kernels whose gate check is deferred (vec_add; add_offsets,
 * whose compound assignment reads its target with the loads) and one
 * whose check stays at entry (histogram: a loaded value picks the bin):
 * tests/moxc/golden/gate/kernels_cuda.cu pins what moxc generates. */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(256, 1, 1)
void vec_add(const float *a, const float *b, float *c, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        c[i] = a[i] + b[i]; /* stored only when the gate is good */
}

MOX_KERNEL
void add_offsets(uint32_t *data, const uint32_t *offsets, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        data[i] += offsets[mox_block_idx().x];
}

MOX_KERNEL
void histogram(const uint32_t *in, mox_atomic_u32 *bins, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        mox_atomic_add_u32(&bins[in[i] % 16u], 1u);
}
