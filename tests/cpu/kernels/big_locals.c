/* big_locals.c - a kernel with 128 KiB of locals per thread, live across a
 * barrier: too much per-thread storage for region loops (moxc notes it),
 * so its threads run on fibers, whose default stack must hold it
 * (tests/cpu/big_locals.c). */
#include <mox/kernel.h>

MOX_KERNEL MOX_BLOCK(32, 1, 1) void big_locals(float *out) {
    float local[32768]; /* 128 KiB */
    uint32_t t = mox_thread_idx().x;
    for (uint32_t k = 0; k < 32768u; k++)
        local[k] = (float)(k + t);
    mox_barrier();
    out[mox_block_idx().x * 32u + t] = local[32767u - t] + local[t];
}
