/* lang_tables.c - read-only tables the host sets at launch (MOX_TABLE),
 * module "lang" (test_tables.c, test_ptx.c). */
#include "lang_records.h"

static uint32_t table_gid(void) { return mox_block_idx().x * mox_block_dim().x + mox_thread_idx().x; }

/* A 9-point stencil with its weights in a table (uniform indices: the
 * constant cache broadcasts them). */
MOX_KERNEL void stencil9(const float *in, float *out, MOX_TABLE(float, weights, 9), uint32_t n) {
    uint32_t i = table_gid();
    if (i + 8u < n) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < 9u; k++)
            acc = fmaf(weights[k], in[i + k], acc);
        out[i] = acc;
    }
}

/* A lookup with a varying index into a large table, and a table of
 * records; a table bound read at a uniform index keeps barriers uniform. */
MOX_KERNEL MOX_BLOCK(64, 1, 1) void lookup(const uint32_t *keys, uint32_t *out, MOX_TABLE(uint32_t, big, 7000),
                                         MOX_TABLE(Body, bodies, 4), MOX_TABLE(uint32_t, rounds, 2)) {
    MOX_SHARED(uint32_t, acc, 64);
    uint32_t t = mox_thread_idx().x, i = mox_block_idx().x * 64u + t;
    acc[t] = big[keys[i] % 7000u] + (uint32_t)bodies[keys[i] % 4u].mass;
    for (uint32_t r = 0; r < rounds[mox_block_idx().x % 2u]; r++) {
        mox_barrier();
        uint32_t next = acc[(t + 1u) % 64u];
        mox_barrier();
        acc[t] += next;
    }
    out[i] = acc[t];
}
