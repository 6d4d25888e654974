/* src/cuda/cuda_internal.h - the CUDA backend's own objects and the
 * internal interface between its files. The runtime core never sees these;
 * it talks to the backend through src/core/backend.h (cuda_backend.c).
 *
 * Objects:
 *   mox__cuda_dev    one mox device on CUDA: the primary context, streams,
 *                    the gate status pool, host flags, plan cache, the
 *                    completion thread.
 *   mox__cuda_kernel a loaded kernel (CUfunction + attributes).
 *   mox__cuda_plan   a batch topology (kernels, geometry, edges), cached;
 *                    owns instances.
 *   mox__cuda_inst   one runnable copy of a plan: its own gate slots, deps
 *                    array, host flag, and (graph mode) instantiated graph.
 *                    Re-launched only when idle, so its status words are
 *                    never shared by two runs in flight.
 *   mox__cuda_sub    one submission in flight: an instance launched on a
 *                    stream, with a completion event.
 */
#ifndef MOX_CUDA_INTERNAL_H
#define MOX_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mox/kernel_abi.h>
#include <mox/status.h>

#include "cuda/cuda_api.h"

#define MOX__CUDA_STREAMS 4u
/* Gate status words: 2 per slot. Slot 0 is a sentinel that reads FAILED
 * forever: a dispatch whose input comes from an already failed writer gets it
 * as an extra dependency and is gated on the device like any other. */
#define MOX__CUDA_POOL_SLOTS (1u << 20)
#define MOX__CUDA_SENTINEL_SLOT 0u
/* Slot 1 reads OK forever: the dependency of a dispatch on an earlier
 * dispatch that already completed cleanly, so the deps layout of a plan
 * does not depend on timing. */
#define MOX__CUDA_OK_SLOT 1u
#define MOX__CUDA_FIRST_SLOT 2u
#define MOX__CUDA_MAX_ARGS 32u

typedef struct mox__cuda_dev mox__cuda_dev;
typedef struct mox__cuda_plan mox__cuda_plan;
typedef struct mox__cuda_inst mox__cuda_inst;
typedef struct mox__cuda_sub mox__cuda_sub;

/* ---- errors (cuda_error.c) ---- */

/* The mox code for a driver result (DEVICE_LOST for sticky faults,
 * ALLOCATION_FAILED for out-of-memory, MODULE_LOAD for bad images...). */
mox_status mox__cuda_status_of(CUresult result);
/* The one conversion point: records an error "<call>: <CUDA name> (<text>)
 * [context]" for the calling thread and returns its mox code. */
mox_status mox__cuda_fail(const mox__cuda_api *api, CUresult result, const char *call,
                          const char *context);
/* Records an error that did not come from a driver call. Returns `code`. */
mox_status mox__cuda_error(mox_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Message of the last error recorded by this file on this thread (tests). */
const char *mox__cuda_last_message(void);

/* ---- kernels (cuda_module.c) ---- */

typedef struct mox__cuda_kernel {
    CUfunction fn;
    char name[96];
    uint32_t max_threads;   /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    uint32_t static_shared; /* bytes */
} mox__cuda_kernel;

typedef struct mox__cuda_module {
    mox__cuda_dev *dev;
    CUmodule module;
    uint32_t kernel_count;
    mox__cuda_kernel *kernels;
} mox__cuda_module;

/* Loads verified fatbin bytes and looks up mox_entry_<name> for each name.
 * required_threads[i] (may be NULL or 0) is the kernel's fixed block volume,
 * checked against the function's limit. Runs on the preparation worker. */
mox_status mox__cuda_module_load(mox__cuda_dev *dev, const void *image, size_t size,
                                 const char *const *names, const uint32_t *required_threads,
                                 uint32_t count, mox__cuda_module **out);
void mox__cuda_module_unload(mox__cuda_module *module);

/* ---- submissions: what the core hands over ---- */

/* A dependency on a dispatch of an earlier submission (still in flight when
 * the core looked; the backend rechecks under its lock). */
typedef struct mox__cuda_ext_dep {
    mox__cuda_sub *sub;
    uint32_t dispatch;
} mox__cuda_ext_dep;

typedef struct mox__cuda_dispatch {
    const mox__cuda_kernel *kernel;
    uint32_t grid[3], block[3];
    uint32_t arg_count;
    const void *const *args;  /* args[i] points to argument i's bytes */
    const uint32_t *arg_sizes;
    uint32_t dep_count;       /* dispatches of this batch it depends on (< own index) */
    const uint32_t *deps;
    uint32_t ext_count;       /* gate dependencies on earlier submissions */
    const mox__cuda_ext_dep *ext;
    bool inherited_failure;   /* reads the output of a writer that already failed */
} mox__cuda_dispatch;

typedef struct mox__cuda_batch {
    uint32_t count;
    const mox__cuda_dispatch *dispatches;
    uint32_t wait_count;      /* earlier submissions this one is ordered after */
    mox__cuda_sub *const *waits;
} mox__cuda_batch;

/* What completion reports. states/codes have `count` entries; when status is
 * not MOX_OK the whole submission failed (device lost, backend error). */
typedef struct mox__cuda_outcome {
    mox_status status;
    const char *message;      /* for status != MOX_OK */
    uint32_t count;
    const uint32_t *states;   /* MOX_DISPATCH_OK / FAILED / GATED */
    const uint32_t *codes;    /* mox_fail codes (FAILED only) */
} mox__cuda_outcome;

/* Called on the completion thread, without backend locks held, once per
 * submission. */
typedef void (*mox__cuda_done_fn)(void *ctx, mox__cuda_sub *sub, const mox__cuda_outcome *outcome);

/* ---- plans and instances (cuda_plan.c) ---- */

typedef struct mox__cuda_node_state {
    mox_gate gate;            /* last gate given to the node */
    uint32_t args_offset;     /* into inst->last_args */
    uint32_t args_size;
} mox__cuda_node_state;

struct mox__cuda_inst {
    mox__cuda_plan *plan;
    mox__cuda_inst *next_idle;
    uint32_t slot_base;       /* first gate slot (absolute) */
    uint32_t *host_flag;      /* host-mapped word; device writes 1 on a failure */
    CUdeviceptr host_flag_dev;
    CUdeviceptr deps_dev;     /* device copy of the deps arrays */
    uint32_t *deps_stage;     /* pinned staging for deps uploads */
    uint32_t *deps_host;      /* what deps_dev holds now */
    uint32_t deps_len, deps_cap;
    uint32_t *dep_offset;     /* per dispatch: offset of its deps in deps_dev */
    uint32_t *dep_count;      /* per dispatch: number of deps uploaded */
    CUgraphExec exec;         /* graph mode */
    CUgraphNode *nodes;
    mox__cuda_node_state *node_state;
    unsigned char *last_args;
    uint32_t last_args_cap;
    bool params_valid;        /* node_state/last_args describe the exec */
    bool dirty;               /* status words may be nonzero: reset before reuse */
    bool busy;                /* launched, not completed */
    uint32_t readers;         /* later submissions gating on these slots */
};

/* Returns an idle instance of the batch's plan (creating plan/instance as
 * needed). Caller holds dev->lock. */
mox_status mox__cuda_plan_acquire(mox__cuda_dev *dev, const mox__cuda_batch *batch,
                                  mox__cuda_inst **out);
/* Launches `inst` for `batch` on `stream`: resets dirty slots, uploads
 * changed deps, updates changed node params, launches. `slot_of_ext`
 * resolves external dependencies to absolute slots (0 = sentinel). Caller
 * holds dev->lock. */
mox_status mox__cuda_inst_launch(mox__cuda_dev *dev, mox__cuda_inst *inst,
                                 const mox__cuda_batch *batch, const uint32_t *ext_slots,
                                 CUstream stream);
void mox__cuda_inst_release(mox__cuda_dev *dev, mox__cuda_inst *inst);
void mox__cuda_plans_destroy(mox__cuda_dev *dev);

/* ---- submissions (cuda_submit.c) ---- */

struct mox__cuda_sub {
    atomic_uint refs;         /* core's reference + in-flight reference */
    mox__cuda_dev *dev;
    mox__cuda_sub *next, *prev; /* in-flight list */
    atomic_bool claimed;      /* completion taken by the completion thread or a waiter */
    mox__cuda_inst *inst;
    uint32_t count;
    uint32_t stream;
    CUevent event;
    bool done;                /* completed (under dev->lock) */
    bool failed_any;          /* some dispatch FAILED or GATED */
    bool check_status;        /* read the status words even if the flag is clear */
    uint32_t *states;         /* filled at completion when failed_any */
    uint32_t *codes;
    mox__cuda_inst **read_insts; /* instances this one holds reader refs on */
    uint32_t read_count;
    mox__cuda_done_fn done_fn;
    void *done_ctx;
};

mox_status mox__cuda_submit(mox__cuda_dev *dev, const mox__cuda_batch *batch,
                            mox__cuda_done_fn done, void *done_ctx, mox__cuda_sub **out);
/* Completion of one submission, called by the completion thread with no
 * lock held: reads the status words when the flag (or a cross-batch gate)
 * says so, releases what the run held, calls done_fn, drops the in-flight
 * reference. status != MOX_OK fails the whole submission. */
void mox__cuda_sub_finish(mox__cuda_dev *dev, mox__cuda_sub *sub, mox_status status,
                          const char *message);
mox__cuda_sub *mox__cuda_sub_retain(mox__cuda_sub *sub);
void mox__cuda_sub_release(mox__cuda_sub *sub);

/* ---- device (cuda_device.c) ---- */

typedef struct mox__cuda_stats {
    atomic_ullong instantiations;  /* cuGraphInstantiate calls */
    atomic_ullong plans;           /* plans created */
    atomic_ullong node_updates;    /* cuGraphExecKernelNodeSetParams calls */
    atomic_ullong graph_launches;
    atomic_ullong stream_launches;
    atomic_ullong deps_uploads;
    atomic_ullong resets;
    atomic_ullong status_reads;    /* slow-path completions */
} mox__cuda_stats;

typedef enum mox__cuda_launch_mode {
    MOX__CUDA_LAUNCH_AUTO = 0,   /* graphs, except single dispatches */
    MOX__CUDA_LAUNCH_GRAPH = 1,
    MOX__CUDA_LAUNCH_STREAM = 2
} mox__cuda_launch_mode;

typedef struct mox__cuda_limits {
    uint32_t max_block[3];
    uint32_t max_grid[3];
    uint32_t max_threads;
    uint32_t warp_size;
    uint32_t shared_per_block;
    uint32_t shared_optin;
    uint32_t sm_count;
    uint32_t cc_major, cc_minor;
    uint64_t total_mem;
} mox__cuda_limits;

typedef struct mox__cuda_flag_chunk {
    struct mox__cuda_flag_chunk *next;
    uint32_t *host;
    CUdeviceptr dev;
} mox__cuda_flag_chunk;

struct mox__cuda_dev {
    const mox__cuda_api *api;
    CUdevice device;
    CUcontext ctx;
    char name[128];
    mox__cuda_limits limits;
    mox__cuda_launch_mode mode;
    CUstream streams[MOX__CUDA_STREAMS];
    CUstream copy_stream;
    uint32_t next_stream;

    pthread_mutex_t lock;     /* everything below */
    CUdeviceptr pool;         /* gate status words, 2 per slot */
    unsigned char *slot_used; /* allocation map, one byte per slot */
    uint32_t slot_hint;
    mox__cuda_flag_chunk *flag_chunks;
    uint32_t **free_flags;    /* stack of free host flags */
    CUdeviceptr *free_flags_dev;
    uint32_t free_flag_count, free_flag_cap;
    CUevent *free_events;
    uint32_t free_event_count, free_event_cap;
    mox__cuda_plan **plans;   /* hash table, open addressing */
    uint32_t plan_cap, plan_count;
    uint64_t plan_clock;      /* LRU clock */

    /* completion */
    mox__cuda_sub *inflight_head, *inflight_tail;
    uint32_t inflight;
    pthread_cond_t work_cv;   /* a submission arrived / stop */
    bool waiting;             /* completion thread is in work_cv */
    pthread_t thread;
    bool thread_started;
    bool stopping;
    _Atomic mox_status health; /* MOX_OK or MOX_ERR_DEVICE_LOST */
    char lost_message[256];
    uint32_t spin_us;

    mox__cuda_stats stats;
};

/* Opens the CUDA device `ordinal` (primary context, streams, pools, the
 * completion thread). DEVICE_UNAVAILABLE without a driver or device. */
mox_status mox__cuda_dev_open(int ordinal, mox__cuda_dev **out);
/* Waits for in-flight work to finish (the core only closes an idle device)
 * and frees everything. */
void mox__cuda_dev_close(mox__cuda_dev *dev);
/* Makes the device's context current on the calling thread. */
mox_status mox__cuda_dev_enter(mox__cuda_dev *dev);

/* Slot and host-flag pools; caller holds dev->lock. */
mox_status mox__cuda_slots_alloc(mox__cuda_dev *dev, uint32_t count, uint32_t *base);
void mox__cuda_slots_free(mox__cuda_dev *dev, uint32_t base, uint32_t count);
mox_status mox__cuda_flag_alloc(mox__cuda_dev *dev, uint32_t **host, CUdeviceptr *devp);
void mox__cuda_flag_free(mox__cuda_dev *dev, uint32_t *host, CUdeviceptr devp);
mox_status mox__cuda_event_get(mox__cuda_dev *dev, CUevent *out);
void mox__cuda_event_put(mox__cuda_dev *dev, CUevent event);

/* Marks the device lost (first message wins) after a sticky fault. */
void mox__cuda_dev_lost(mox__cuda_dev *dev, const char *message);

/* ---- completion thread (cuda_complete.c) ---- */

mox_status mox__cuda_completion_start(mox__cuda_dev *dev);
void mox__cuda_completion_stop(mox__cuda_dev *dev);
/* Adds a launched submission to the in-flight list; caller holds dev->lock. */
void mox__cuda_completion_push(mox__cuda_dev *dev, mox__cuda_sub *sub);
/* Called by a thread that waits for `sub` (mox_op_wait): spins on its event
 * for up to spin_us microseconds and, if it completed, processes the
 * completion on the calling thread (saving the completion thread's wake-up).
 * Returns true when the submission is complete (by whichever thread). */
bool mox__cuda_sub_spin(mox__cuda_dev *dev, mox__cuda_sub *sub, uint32_t spin_us);

#endif
