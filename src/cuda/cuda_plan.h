/* src/cuda/cuda_plan.h - copies, plans and their instances (the cached graphs), device memory and staging. Part of
 * cuda/cuda_internal.h, which includes the backend's headers in order:
 * include that one. */
#ifndef MOX_CUDA_PLAN_H
#define MOX_CUDA_PLAN_H

#ifndef MOX_CUDA_INTERNAL_H
#error "include cuda/cuda_internal.h, not cuda/cuda_plan.h"
#endif

/* ---- copies and fills (cuda_copy.c): the launcher's, no lock held ---- */

/* Enqueues COPY node `node` of `g` on `stream`: mirrors first, then a
 * plain copy (cuMemcpyDtoDAsync on one context, cuMemcpyPeerAsync across)
 * or, when `gate` has dependencies, the gated copy kernel. */
mox_status mox__cuda_copy(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t node,
                          const mox__dispatch *d, const mox_gate *gate, CUstream stream);
void mox__cuda_copy_unload(mox__cuda_dev *dev);
/* The kernel a graph node runs for copy or fill `d` (its operands are its
 * parameters, hal.h), or NULL: not a copy or fill, a copy from another
 * device, or the kernels are not loaded yet (the stream path loads them
 * for a launch of several nodes, so later launches of its shape become
 * graphs). */
const mox__cuda_kernel *mox__cuda_builtin_kernel(const mox__cuda_dev *dev, const mox__dispatch *d);
/* A launch of several nodes with a fill, copy or upload on the stream: the
 * kernels are loaded now, so that later launches of its shape are graphs
 * (describe_node); not again once their load failed. */
void mox__cuda_builtins_preload(mox__cuda_dev *dev, const mox__cuda_group *g);
/* Whether copy, fill or upload `d`, when nothing can gate it, is better
 * run on the stream (a memset or memcpy of more than 16 MiB, an upload of
 * more than MOX_CUDA_UPLOAD_NODE_KIB) than as a graph node. */
bool mox__cuda_command_prefers_stream(const mox__cuda_dev *dev, const mox__dispatch *d);
/* Enqueues FILL node `node` of `g` on `stream`: mirrors first, then
 * cuMemsetD8/16/32Async when nothing can gate it and the pattern repeats
 * in 1, 2 or 4 bytes, else the fill kernel with `gate`. */
mox_status mox__cuda_fill(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t node,
                          const mox__dispatch *d, const mox_gate *gate, CUstream stream);

/* ---- plans and instances (cuda_plan.c): the launcher's. plan_take and
 * inst_release with dev->lock held (completions share idle lists, busy and
 * reader counts); the others with no lock held (an eviction locks
 * dev->lock briefly) ---- */

typedef struct mox__cuda_node_state {
    mox_gate gate;            /* last gate given to the node */
    uint32_t args_offset;     /* into inst->last_args */
} mox__cuda_node_state;

struct mox__cuda_inst {
    mox__cuda_plan *plan;
    mox__cuda_inst *next_idle;
    uint32_t count;           /* dispatches (= slots) */
    uint32_t slot_base;       /* first gate slot (absolute) */
    uint32_t *host_flag;      /* host-mapped word; device writes 1 on a failure */
    CUdeviceptr host_flag_dev;
    CUdeviceptr deps_dev;     /* device copy of the deps words */
    uint32_t *deps_stage;     /* pinned staging for deps uploads */
    uint32_t *deps_host;      /* what deps_dev holds now */
    uint32_t deps_len, deps_cap;
    CUgraphExec exec;         /* graph plans */
    /* How long its runs take, launch to done, measured by waiting threads
     * on runs launched onto an idle device (cuda_watch.c); forgotten when
     * a node's arguments change. Read and written under dev->lock, or by
     * the launcher while the instance is its own. */
    uint64_t run_ns;
    uint32_t run_obs;         /* runs measured exactly since */
    mox__cuda_node_state *node_state;
    uint32_t gated_nodes;     /* nodes whose last gate has dependencies */
    unsigned char *last_args;
    bool params_valid;        /* node_state/last_args describe the exec */
    bool dirty;               /* status words may be nonzero: reset before reuse */
    bool busy;                /* launched, not completed */
    uint32_t readers;         /* later launches gating on these slots */
    _Atomic uint32_t foreign_readers; /* other devices' launches reading them (cuda_foreign.c);
                                 raised under the semaphore lock, lowered under dev->lock */
};

/* The launcher, dev->lock held (idle lists grow on completions): the
 * cached plan of desc's shape (*plan, NULL if none) and an idle instance
 * of it, taken (busy), or NULL. */
mox__cuda_inst *mox__cuda_plan_take(mox__cuda_dev *dev, const mox__cuda_ldesc *desc, uint32_t stream,
                                    mox__cuda_plan **plan);
/* No lock held: a new instance of `plan` (busy), creating the plan first
 * when it is NULL (the driver builds and instantiates their graphs). */
mox_status mox__cuda_plan_acquire(mox__cuda_dev *dev, const mox__cuda_ldesc *desc,
                                  mox__cuda_plan *plan, mox__cuda_inst **out);
/* The launcher, dev->lock held, phase A of launch g (cuda_launch.c), before
 * anything is described: when g repeats the shape of a plan its stream
 * found recently, with no gate that may close, no wait on another queue
 * and an idle instance, describes it in one pass against that plan and
 * the instance's last parameters, takes both (as mox__cuda_plan_take
 * would) and returns true. False, having taken nothing: describe it in
 * full. Nodes it wrote meanwhile are described again from the start
 * (cuda_replay.c). */
bool mox__cuda_replay(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t stream, mox__cuda_ldesc *desc,
                      mox__cuda_plan **plan);
/* Launches `inst` for `desc` on `stream`: resets dirty slots, uploads
 * changed deps, updates the nodes whose parameters changed, launches
 * (graph) or enqueues each node (stream plans; transfers go through
 * `group`'s staging). */
mox_status mox__cuda_inst_launch(mox__cuda_dev *dev, mox__cuda_inst *inst,
                                 const mox__cuda_ldesc *desc, mox__cuda_group *group,
                                 CUstream stream);
/* Puts an instance back once neither a run nor a reader holds it. */
void mox__cuda_inst_release(mox__cuda_dev *dev, mox__cuda_inst *inst);
void mox__cuda_plans_destroy(mox__cuda_dev *dev);

/* ---- memory (cuda_memory.c) ---- */

mox_status mox__cuda_buffer_alloc(mox__cuda_dev *dev, uint64_t bytes, CUdeviceptr *out);
void mox__cuda_buffer_free(mox__cuda_dev *dev, CUdeviceptr p);
/* Synchronous host -> device copy through pinned staging. */
mox_status mox__cuda_buffer_upload(mox__cuda_dev *dev, CUdeviceptr dst, const void *src,
                                   uint64_t bytes);
/* Pinned staging of at least `bytes` (pooled). No lock held: the pool's
 * own lock is taken briefly; allocation and freeing happen outside it. */
mox_status mox__cuda_stage_get(mox__cuda_dev *dev, size_t bytes, void **out);
void mox__cuda_stage_put(mox__cuda_dev *dev, void *stage);
void mox__cuda_stages_destroy(mox__cuda_dev *dev);
/* HAL host_alloc / host_free (cuda_stage.c): a pinned chunk of the pool
 * lent to an upload (NULL when none can be had), and its return, which
 * takes only the pool's leaf lock and calls no driver. */
void *mox__cuda_host_lend(mox__cuda_dev *dev, size_t bytes, uint64_t *device_address);
void mox__cuda_host_return(mox__cuda_dev *dev, void *stage);
/* Enqueues a transfer dispatch of `group` on `stream` (the launcher, no lock held). */
mox_status mox__cuda_transfer(mox__cuda_dev *dev, mox__cuda_group *group, const mox__dispatch *d,
                              CUstream stream);

#endif
