/* mox/kernel_abi.h - the binary contract between generated kernel code and
 * the runtime's backends. Included by mox/kernel.h; users never touch it.
 *
 * CPU: the generated CPU translation unit (compiled to kernels_cpu.so)
 * exports `const mox_cpu_module_entry *mox_cpu_module(void)`. A worker
 * thread runs one block at a time, with a mox_cpu_lane installed in the
 * module's thread-local slot. Most kernels have a work-group function
 * (group_fn): moxc turned the block's threads into loops around the
 * barrier-free regions of the kernel, so one call runs the whole block and
 * its shared memory is a local array of that call. The others run each
 * thread of the block as a fiber of the worker (thread_fn), their shared
 * memory being `static _Thread_local` storage of the worker.
 *
 * CUDA: every generated entry `mox_entry_<kernel>` takes a mox_gate first,
 * then the kernel's parameters (buffers as device pointers, values by value).
 * In sm_90+ code every entry starts with griddepcontrol.wait, and the
 * module's `mox__grid_wait_entries` (unsigned int) reads 2 (1 in modules
 * whose entries without the gate check lack it; mox/kernel_cuda.h).
 */
#ifndef MOX_KERNEL_ABI_H
#define MOX_KERNEL_ABI_H

#include <stdint.h>

/* 2: work-group functions (group_fn, mox_cpu_group), executor kinds,
 * dynamic shared memory in the lane. */
#define MOX_CPU_INTERFACE_VERSION 2u

/* Per-dispatch status words (CUDA: status[2*i], status[2*i+1]; CPU: fields). */
#define MOX_DISPATCH_OK 0u
#define MOX_DISPATCH_FAILED 1u
#define MOX_DISPATCH_GATED 2u

/* Per-kernel feature bits; the ABI JSON names are in quotes. */
enum {
    MOX_KFEAT_BARRIER = 1u << 0, /* "barrier": calls mox_barrier */
    MOX_KFEAT_WARP = 1u << 1,    /* "warp": warp collectives */
    MOX_KFEAT_ATOMICS = 1u << 2, /* "atomics": atomic buffers or shared atomics */
    MOX_KFEAT_FAIL = 1u << 3,    /* "fail": may call mox_fail */
    MOX_KFEAT_SHARED = 1u << 4,  /* "shared": declares MOX_SHARED memory */
    MOX_KFEAT_F16 = 1u << 5,     /* "f16": uses mox_f16 */
    MOX_KFEAT_DYNAMIC_SHARED = 1u << 6, /* "dynamic_shared": declares MOX_SHARED_DYNAMIC memory (ABI version 2) */
    /* "gate_deferred": its gated CUDA entries check the gate only before
     * each store (moxc's deferred gate check, docs/kernel-language.md) and
     * do not ask at their end, so
     * a dispatch whose threads stored nothing may leave its status word OK
     * behind a failed dependency: the runtime gives its readers its own
     * dependencies and derives its GATED state (docs/cuda-backend.md,
     * "Deferred dispatches"). A runtime that does not know the bit refuses
     * the module (unknown feature). */
    MOX_KFEAT_GATE_DEFERRED = 1u << 7
};

typedef struct mox_kdim3 {
    uint32_t x, y, z;
} mox_kdim3;

/* ---------------- CPU ---------------- */

/* Services the runtime's CPU executor gives kernel code. */
typedef struct mox_cpu_services {
    /* Block-wide barrier: returns when every thread of the block arrived. */
    void (*barrier)(void *block);
    /* Warp collective primitive: the calling lane deposits `value`, waits for
     * every active lane of its warp, and gets the warp's values indexed by
     * lane (length 32) plus the number of active lanes (lanes 0..n-1). All
     * warp operations are computed from this array in kernel.h, in the same
     * order as on CUDA. The array stays valid until the lane's next call. */
    const uint32_t *(*warp_exchange)(void *block, uint32_t value, uint32_t *active_lanes);
    /* Records mox_fail(code) for the dispatch (first code wins). */
    void (*fail)(void *dispatch, uint32_t code);
} mox_cpu_services;

typedef struct mox_cpu_lane {
    mox_kdim3 thread_idx, block_idx, block_dim, grid_dim;
    uint32_t linear;               /* thread index within the block */
    const mox_cpu_services *svc;
    void *block;                   /* executor's per-block state */
    void *dispatch;                /* executor's per-dispatch state */
    /* The block's dynamic shared memory (sized at launch; 64-byte aligned),
     * NULL when the launch asks for none. Like static shared memory it is
     * not cleared between blocks. */
    void *dynamic_shared;
    uint32_t dynamic_shared_bytes;
} mox_cpu_lane;

/* How the CPU backend runs a kernel (mox_cpu_kernel_entry.executor; the
 * manifest's "cpu" section names them, docs/abi.md). */
enum {
    MOX_CPU_EXEC_LOOPS = 1,        /* "loops": group_fn is moxc's work-group function */
    MOX_CPU_EXEC_THREAD_CALLS = 2, /* "thread-calls": group_fn calls the kernel once per thread
                                      (barrier-free kernels moxc did not turn into loops) */
    MOX_CPU_EXEC_FIBERS = 3        /* "fibers": no group_fn, one fiber per thread (cooperative
                                      kernels moxc did not turn into loops) */
};

/* What a work-group function gets for one block. `lane` is installed in
 * the module's slot for the call and already holds the block's indices,
 * dimensions, services and dynamic shared memory: code the function calls
 * (helpers, mox_fail) reads it; the function keeps lane->thread_idx and
 * lane->linear current wherever that code reads the thread index. */
typedef struct mox_cpu_group {
    mox_kdim3 block_idx, block_dim, grid_dim;
    mox_cpu_lane *lane;
    void *dynamic_shared;          /* = lane->dynamic_shared */
    uint32_t dynamic_shared_bytes;
} mox_cpu_group;

/* Runs one thread: reads the lane from the module's slot. `args[i]` points to
 * the i-th argument: for a buffer, to a `void *` holding its base address;
 * for a value, to its bytes (aligned to 16). The fiber executor runs one
 * fiber per thread of the block through it. */
typedef void (*mox_cpu_thread_fn)(void *const *args);
/* Runs every thread of one block on the caller (same `args`). Barriers and
 * warp operations are steps between its loops: it never calls
 * svc->barrier or svc->warp_exchange. */
typedef void (*mox_cpu_group_fn)(void *const *args, const mox_cpu_group *group);

typedef struct mox_cpu_kernel_entry {
    const char *name;
    mox_cpu_thread_fn thread_fn;   /* always present */
    mox_cpu_group_fn group_fn;     /* NULL exactly when executor is MOX_CPU_EXEC_FIBERS */
    uint32_t features;             /* MOX_KFEAT_* bits */
    uint32_t executor;             /* MOX_CPU_EXEC_* */
} mox_cpu_kernel_entry;

typedef struct mox_cpu_module_entry {
    uint32_t interface_version;    /* MOX_CPU_INTERFACE_VERSION */
    uint32_t kernel_count;
    const mox_cpu_kernel_entry *kernels; /* ABI order */
    const char *abi_sha256;
    /* Address of the calling thread's lane slot in this module. */
    mox_cpu_lane **(*lane_slot)(void);
} mox_cpu_module_entry;

#define MOX_CPU_MODULE_SYMBOL "mox_cpu_module"

/* ---------------- CUDA ---------------- */

/* A kernel with read buffers has a second entry, mox_entry_<kernel> +
 * this suffix, whose buffer parameters are all __restrict__: the runtime
 * launches it when no buffer a launch writes (write or atomic parameter) is
 * also another of its arguments, so read-only loads may use the read-only
 * data path (ld.global.nc). */
#define MOX_ENTRY_NOALIAS_SUFFIX "__noalias"

/* Every kernel also has mox_entry_<kernel> + this suffix (and + this
 * suffix + MOX_ENTRY_NOALIAS_SUFFIX where a no-alias entry exists): the same
 * entry without the gate check: on sm_90+ it starts with the grid-dependency
 * wait alone, then runs the kernel's body. The runtime launches it when no
 * failure can reach the launch (its gate would have no dependency); with
 * programmatic dependent launch on (MOX_CUDA_PDL) only from modules whose
 * marker says these entries wait too (mox/kernel_cuda.h). It still
 * publishes the gate for mox_fail. */
#define MOX_ENTRY_UNGATED_SUFFIX "__ungated"

/* Every kernel whose gate check is not deferred (docs/kernel-language.md)
 * also has mox_entry_<kernel> + this suffix (and + this suffix +
 * MOX_ENTRY_NOALIAS_SUFFIX where a no-alias entry exists): the same entry
 * checking exactly one inline dependency (gate.status set, dep_count 1,
 * deps NULL), without the code of the gate's other forms. The runtime
 * launches it for such gates, the common case; modules built before it
 * existed lack it and run the general entry. */
#define MOX_ENTRY_ONE_DEP_SUFFIX "__gate1"

/* What a module's marker mox__grid_wait_entries says (mox/kernel_cuda.h):
 * no entry waits for programmatic grid dependencies (code for GPUs before
 * sm_90), only the gated entries do (sm_90+ modules built before the
 * entries without the gate check had the wait), or every entry does. */
#define MOX__GRID_WAIT_NONE 0u
#define MOX__GRID_WAIT_GATED 1u
#define MOX__GRID_WAIT_ALL 2u

/* First parameter of every generated CUDA entry. `status` is a device array
 * of 2 words per status slot (state, fail code), zeroed before a slot is
 * used. An entry first checks the state of each dependency's slot: if any
 * is not OK it marks its own slot (`self`) GATED and returns. The
 * dependencies are inline_deps[0..dep_count) when deps is NULL (at most
 * MOX_GATE_INLINE_DEPS: read from the kernel's parameters, so the check is
 * one load of independent words), else deps[0..dep_count) in device
 * memory. mox_fail(code) stores FAILED + code into status[2*self] (first
 * failure wins) and sets *host_flag = 1 (host mapped memory) so completion
 * can tell a clean batch with one load. status == NULL disables gating. */
#define MOX_GATE_INLINE_DEPS 4u
typedef struct mox_gate {
    uint32_t *status;
    const uint32_t *deps;
    uint32_t *host_flag;
    uint32_t self;
    uint32_t dep_count;
    uint32_t inline_deps[MOX_GATE_INLINE_DEPS];
} mox_gate;

/* The i-th dependency slot of a gate (host-side readers of gates). */
static inline uint32_t mox_gate_dep(const mox_gate *g, uint32_t i)
{
    return g->deps ? g->deps[i] : g->inline_deps[i];
}

#endif
