/* compact.c - stream compaction around the scan: mark flags the elements to
 * keep (odd values), and scatter writes each kept element to its exclusive
 * prefix position, which keeps the input order (stable). The thread of the
 * last element writes how many were kept. */
#include <mox/kernel.h>

MOX_KERNEL
void mark(const uint32_t *values, uint32_t *flags, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n)
        flags[i] = values[i] & 1u;
}

MOX_KERNEL
void scatter(const uint32_t *values, const uint32_t *flags, const uint32_t *prefix,
             uint32_t *output, uint32_t *count, uint32_t n)
{
    uint32_t i = mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x;
    if (i < n) {
        if (flags[i] != 0u)
            output[prefix[i]] = values[i];
        if (i == n - 1u)
            count[0] = prefix[i] + flags[i];
    }
}
