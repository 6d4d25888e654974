/* test_module.c - the test kernels compiled for the CPU, with thread and
 * block functions and an entry table written exactly the way moxc's
 * kernels_cpu.c does (kernel_abi.h), so the executor is tested against the
 * real contract. */
#include "kernels_src.h"
#include "test_module.h"

/* ---- argument access, as generated ---- */
#define ARG_BUF(T, i) (*(T *const *)args[i])
#define ARG_VAL(T, i) (*(const T *)args[i])

/* The block function: every thread of the block in order, x fastest. */
#define BLOCK_LOOP(lane, call)                                                  \
    do {                                                                        \
        for (uint32_t z_ = 0; z_ < (lane)->block_dim.z; z_++)                   \
            for (uint32_t y_ = 0; y_ < (lane)->block_dim.y; y_++)               \
                for (uint32_t x_ = 0; x_ < (lane)->block_dim.x; x_++) {         \
                    (lane)->thread_idx.x = x_;                                  \
                    (lane)->thread_idx.y = y_;                                  \
                    (lane)->thread_idx.z = z_;                                  \
                    (lane)->linear = x_ + (lane)->block_dim.x * (y_ + (lane)->block_dim.y * z_); \
                    call;                                                       \
                }                                                               \
    } while (0)

#define ENTRY(name, call)                                                       \
    static void mox_thread_##name(void *const *args) { call; }                  \
    static void mox_block_##name(void *const *args, mox_cpu_lane *lane) { BLOCK_LOOP(lane, call); }

ENTRY(geom, geom(ARG_BUF(uint32_t, 0)))
ENTRY(block_reduce, block_reduce(ARG_BUF(const float, 0), ARG_BUF(float, 1), ARG_VAL(uint32_t, 2)))
ENTRY(warp_reduce, warp_reduce(ARG_BUF(const float, 0), ARG_BUF(float, 1), ARG_VAL(uint32_t, 2)))
ENTRY(warp_ops, warp_ops(ARG_BUF(const uint32_t, 0), ARG_BUF(const float, 1), ARG_BUF(uint32_t, 2),
                         ARG_VAL(uint32_t, 3), ARG_VAL(uint32_t, 4), ARG_VAL(uint32_t, 5)))
ENTRY(atomics_global, atomics_global(ARG_BUF(mox_atomic_u32, 0), ARG_BUF(mox_atomic_i32, 1),
                                     ARG_BUF(mox_atomic_u32, 2), ARG_BUF(mox_atomic_i32, 3),
                                     ARG_BUF(const uint32_t, 4), ARG_BUF(uint32_t, 5)))
ENTRY(atomics_script, atomics_script(ARG_BUF(mox_atomic_u32, 0), ARG_BUF(mox_atomic_i32, 1), ARG_BUF(uint32_t, 2)))
ENTRY(shared_hist, shared_hist(ARG_BUF(const uint32_t, 0), ARG_BUF(mox_atomic_u32, 1)))
ENTRY(fail_some, fail_some(ARG_BUF(const uint32_t, 0), ARG_BUF(uint32_t, 1)))
ENTRY(early_return, early_return(ARG_BUF(uint32_t, 0), ARG_VAL(uint32_t, 1)))
ENTRY(divergent, divergent(ARG_BUF(uint32_t, 0)))
ENTRY(f16_convert, f16_convert(ARG_BUF(const uint32_t, 0), ARG_BUF(uint16_t, 1), ARG_BUF(const uint16_t, 2),
                               ARG_BUF(uint32_t, 3), ARG_VAL(uint32_t, 4)))

#define K(name, features) {#name, mox_thread_##name, mox_block_##name, features}

/* Index order = enum test_kernel. geom appears twice: once as a plain
 * kernel (block_fn path) and once flagged cooperative (fiber path). */
static const mox_cpu_kernel_entry kernels[TK_COUNT] = {
    K(geom, 0),
    {"geom", mox_thread_geom, mox_block_geom, MOX_KFEAT_BARRIER},
    K(block_reduce, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED),
    K(warp_reduce, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP | MOX_KFEAT_SHARED),
    K(warp_ops, MOX_KFEAT_WARP),
    K(atomics_global, MOX_KFEAT_ATOMICS),
    K(atomics_script, MOX_KFEAT_ATOMICS),
    K(shared_hist, MOX_KFEAT_BARRIER | MOX_KFEAT_ATOMICS | MOX_KFEAT_SHARED),
    K(fail_some, MOX_KFEAT_FAIL),
    {"fail_some", mox_thread_fail_some, mox_block_fail_some, MOX_KFEAT_FAIL | MOX_KFEAT_BARRIER},
    K(early_return, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP),
    K(divergent, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP),
    K(f16_convert, MOX_KFEAT_F16),
};

static mox_cpu_lane **mox_lane_slot(void) { return &mox__cpu_lane; }

static const mox_cpu_module_entry module = {
    MOX_CPU_INTERFACE_VERSION, TK_COUNT, kernels, "0000000000000000000000000000000000000000000000000000000000000000",
    mox_lane_slot,
};

const mox_cpu_module_entry *test_dialect_module(void) { return &module; }
