/* fallback.c - kernels the CPU lowering keeps on their old executor, one
 * construct each, and one it turns into loops; test_cpu_lower.c checks
 * each kernel's note. */
#include <mox/kernel.h>

#define WSUM(x) mox_warp_sum_u32(x)

static void sync_then(uint32_t *s)
{
    mox_barrier();
    s[0] = 1u;
}

MOX_KERNEL MOX_BLOCK(32, 1, 1)
void in_switch(uint32_t *out, uint32_t p)
{
    switch (p) {
    case 1:
        mox_barrier();
        break;
    default:
        break;
    }
    out[mox_thread_idx().x] = p;
}

MOX_KERNEL MOX_BLOCK(32, 1, 1)
void in_helper(uint32_t *out)
{
    MOX_SHARED(uint32_t, s, 1);
    sync_then(s);
    out[mox_thread_idx().x] = s[0];
}

static uint32_t warp_total(uint32_t v)
{
    return mox_warp_sum_u32(v);
}

/* Two helpers with collectives, one called twice: the note names each once. */
MOX_KERNEL MOX_BLOCK(32, 1, 1)
void in_helpers(uint32_t *out)
{
    MOX_SHARED(uint32_t, s, 1);
    sync_then(s);
    out[mox_thread_idx().x] = warp_total(s[0]);
    sync_then(s);
}

MOX_KERNEL
void in_macro(uint32_t *out)
{
    out[mox_thread_idx().x] = WSUM(mox_thread_idx().x);
}

MOX_KERNEL
void in_conditional(uint32_t *out, uint32_t p)
{
    uint32_t v = mox_thread_idx().x;
    out[v] = p ? mox_warp_sum_u32(v) : 0u;
}

MOX_KERNEL
void nested_warp(uint32_t *out)
{
    out[mox_thread_idx().x] = mox_warp_sum_u32(mox_warp_max_u32(mox_thread_idx().x));
}

MOX_KERNEL MOX_BLOCK(32, 1, 1)
void with_goto(uint32_t *out, uint32_t p)
{
    if (p == 0u)
        goto done;
    mox_barrier();
done:
    out[mox_thread_idx().x] = p;
}

MOX_KERNEL
void plain_macro_use(uint32_t *out, uint32_t p)
{
#define TWICE(x) ((x) * 2u)
    out[mox_thread_idx().x] = TWICE(p) + mox_thread_idx().x;
}
