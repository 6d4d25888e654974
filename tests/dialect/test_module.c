/* test_module.c - the test kernels compiled for the CPU, with thread and
 * block functions and an entry table written exactly the way moxc's
 * kernels_cpu.c does (kernel_abi.h), so the executor is tested against the
 * real contract. */
#include "kernels_src.h"
#include "test_module.h"

/* ---- argument access, as generated ---- */
#define ARG_BUF(T, i) (*(T *const *)args[i])
#define ARG_VAL(T, i) (*(const T *)args[i])

/* The thread-calls work-group function: every thread of the block in
 * order, x fastest, each a call of the kernel with the lane updated. */
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

#define THREAD_ENTRY(name, call) static void mox_thread_##name(void *const *args) { call; }
#define ENTRY(name, call)                                                       \
    THREAD_ENTRY(name, call)                                                    \
    static void mox_group_##name(void *const *args, const mox_cpu_group *g) {   \
        mox_cpu_lane *lane = g->lane;                                           \
        BLOCK_LOOP(lane, call);                                                 \
    }

ENTRY(geom, geom(ARG_BUF(uint32_t, 0)))
THREAD_ENTRY(block_reduce, block_reduce(ARG_BUF(const float, 0), ARG_BUF(float, 1), ARG_VAL(uint32_t, 2)))
THREAD_ENTRY(warp_reduce, warp_reduce(ARG_BUF(const float, 0), ARG_BUF(float, 1), ARG_VAL(uint32_t, 2)))
THREAD_ENTRY(warp_ops, warp_ops(ARG_BUF(const uint32_t, 0), ARG_BUF(const float, 1), ARG_BUF(uint32_t, 2),
                         ARG_VAL(uint32_t, 3), ARG_VAL(uint32_t, 4), ARG_VAL(uint32_t, 5)))
ENTRY(atomics_global, atomics_global(ARG_BUF(mox_atomic_u32, 0), ARG_BUF(mox_atomic_i32, 1),
                                     ARG_BUF(mox_atomic_u32, 2), ARG_BUF(mox_atomic_i32, 3),
                                     ARG_BUF(const uint32_t, 4), ARG_BUF(uint32_t, 5)))
ENTRY(atomics_script, atomics_script(ARG_BUF(mox_atomic_u32, 0), ARG_BUF(mox_atomic_i32, 1), ARG_BUF(uint32_t, 2)))
THREAD_ENTRY(shared_hist, shared_hist(ARG_BUF(const uint32_t, 0), ARG_BUF(mox_atomic_u32, 1)))
ENTRY(fail_some, fail_some(ARG_BUF(const uint32_t, 0), ARG_BUF(uint32_t, 1)))
THREAD_ENTRY(early_return, early_return(ARG_BUF(uint32_t, 0), ARG_VAL(uint32_t, 1)))
THREAD_ENTRY(divergent, divergent(ARG_BUF(uint32_t, 0)))
ENTRY(f16_convert, f16_convert(ARG_BUF(const uint32_t, 0), ARG_BUF(uint16_t, 1), ARG_BUF(const uint16_t, 2),
                               ARG_BUF(uint32_t, 3), ARG_VAL(uint32_t, 4)))

/* Kernels with barriers or warp operations run on fibers (no group
 * function), the others through the thread-calls group function. */
#define K(name, features) {#name, mox_thread_##name, mox_group_##name, features, MOX_CPU_EXEC_THREAD_CALLS}
#define COOP(name, features) {#name, mox_thread_##name, NULL, features, MOX_CPU_EXEC_FIBERS}

/* Index order = enum test_kernel. geom appears twice: once as a plain
 * kernel (work-group function path) and once flagged cooperative (fiber
 * path). */
static const mox_cpu_kernel_entry kernels[TK_COUNT] = {
    K(geom, 0),
    COOP(geom, MOX_KFEAT_BARRIER),
    COOP(block_reduce, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED),
    COOP(warp_reduce, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP | MOX_KFEAT_SHARED),
    COOP(warp_ops, MOX_KFEAT_WARP),
    K(atomics_global, MOX_KFEAT_ATOMICS),
    K(atomics_script, MOX_KFEAT_ATOMICS),
    COOP(shared_hist, MOX_KFEAT_BARRIER | MOX_KFEAT_ATOMICS | MOX_KFEAT_SHARED),
    K(fail_some, MOX_KFEAT_FAIL),
    COOP(fail_some, MOX_KFEAT_FAIL | MOX_KFEAT_BARRIER),
    COOP(early_return, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP),
    COOP(divergent, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP),
    K(f16_convert, MOX_KFEAT_F16),
};

static mox_cpu_lane **mox_lane_slot(void) { return &mox__cpu_lane; }

static const mox_cpu_module_entry module = {
    MOX_CPU_INTERFACE_VERSION, TK_COUNT, kernels, "0000000000000000000000000000000000000000000000000000000000000000",
    mox_lane_slot,
};

const mox_cpu_module_entry *test_dialect_module(void) { return &module; }

bool test_kernel_available(enum test_kernel k) { return module.kernels[k].name != NULL; }
