/* src/cuda/cuda_internal.h - the CUDA backend's own objects and the
 * internal interface between its files. The core talks to the backend
 * only through src/hal/hal.h (vtable in cuda_backend.c).
 *
 *   mox__cuda_dev    one device: primary context, streams, the gate status
 *                    pool, host flags, staging, plan cache, completion thread.
 *   mox__cuda_kernel a loaded kernel (CUfunction, attributes, param sizes).
 *   mox__cuda_plan   a launch shape (kernels, geometry, edges), cached; its
 *                    CUDA graph is built once.
 *   mox__cuda_inst   one runnable copy of a plan: its own gate slots, deps
 *                    array, host flag and instantiated graph. Re-launched
 *                    only when idle, so no two runs share status words.
 *   mox__cuda_sub    the backend's state of one core submission (sub->be).
 *   mox__cuda_group  one launch: one or more submissions of one stream
 *                    coalesced into a single graph launch, one event.
 */
#ifndef MOX_CUDA_INTERNAL_H
#define MOX_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <mox/kernel_abi.h>
#include <mox/module.h>
#include <mox/status.h>

#include "core/alloc.h"
#include "core/sync.h"
#include "hal/hal.h"
#include "cuda/cuda_api.h"

#define MOX__CUDA_STREAMS 4u
#define MOX__CUDA_STREAM_PLANS 4u /* recent plans compared per stream (cuda_plan.c) */
/* Gate status words: 2 per slot. Slot 0 reads FAILED forever (a dependency
 * on an earlier dispatch known to have failed), slot 1 reads OK forever (one
 * known to have succeeded), so a plan's deps layout never depends on timing. */
#define MOX__CUDA_POOL_SLOTS (1u << 20)
#define MOX__CUDA_SENTINEL_SLOT 0u
#define MOX__CUDA_OK_SLOT 1u
#define MOX__CUDA_FIRST_SLOT 2u
/* Coalescing: a submission waits in its stream's pending list while that
 * stream already has `defer_depth` launches queued (MOX_CUDA_DEFER_DEPTH,
 * default below; 0 turns coalescing off); at most MERGE_SUBS submissions
 * (MERGE_NODES dispatches) go into one launch. */
#define MOX__CUDA_DEFER_DEPTH 2u
#define MOX__CUDA_MERGE_SUBS 16u
#define MOX__CUDA_MERGE_NODES 256u
/* Successors a launch's group holds without an allocation (cuda_group.c). */
#define MOX__CUDA_SUCCS_INLINE 2u

typedef struct mox__cuda_dev mox__cuda_dev;
typedef struct mox__cuda_plan mox__cuda_plan;
typedef struct mox__cuda_inst mox__cuda_inst;
typedef struct mox__cuda_group mox__cuda_group;

/* CLOCK_MONOTONIC in ns (the core's mox__now_ns clock; the backend's
 * tests link it without the core). */
static inline uint64_t mox__cuda_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void mox__cuda_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- errors (cuda_error.c) ---- */

/* The mox code for a driver result (DEVICE_LOST for sticky faults,
 * ALLOCATION_FAILED for out of memory, MODULE_LOAD for bad images...). */
mox_status mox__cuda_status_of(CUresult result);
/* The one conversion point: records "<call>: <CUDA name> (<text>)
 * [context]" as the calling thread's backend error; returns its code. */
mox_status mox__cuda_fail(const mox__cuda_api *api, CUresult result, const char *call,
                          const char *context);
/* Records an error that did not come from a driver call; returns `code`. */
mox_status mox__cuda_error(mox_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Message of the last error recorded on this thread. */
const char *mox__cuda_last_message(void);
/* A core error object from the last recorded error. */
mox_error *mox__cuda_last_error(mox_status code);

/* ---- kernels (cuda_module.c) ---- */

typedef struct mox__cuda_kernel {
    CUfunction fn;
    CUfunction fn_noalias;  /* mox_entry_<kernel>__noalias, or NULL (no read buffers, older artifact) */
    /* The same two without the gate check (MOX_ENTRY_UNGATED_SUFFIX), or
     * NULL: older artifact, or MOX_CUDA_PDL on and a module whose entries
     * without the check lack the grid wait (its marker reads 1). */
    CUfunction fn_ungated, fn_ungated_noalias;
    /* The two checking one inline dependency only (MOX_ENTRY_ONE_DEP_SUFFIX),
     * or NULL: older artifact, deferred gate check, or MOX_CUDA_PDL on and
     * a module whose marker does not say every entry waits. */
    CUfunction fn_gate1, fn_gate1_noalias;
    char name[96];
    uint32_t max_threads;   /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
    uint32_t static_shared; /* bytes */
    uint32_t max_dynamic_shared; /* bytes a launch may ask (MOX_KFEAT_DYNAMIC_SHARED kernels) */
    uint32_t param_count;
    uint32_t param_size[MOX_MAX_PARAMS]; /* bytes each parameter occupies */
    /* Every parameter 4 or 8 bytes (buffers, built-in scalars): an
     * instance keeps each of a node's last arguments in 8 bytes, compared
     * as one word (cuda_plan_internal.h); `wide`: bit p, parameter p has 8. */
    bool word_params;
    uint32_t wide_params;
    /* The entry a dispatch runs when its gate has no dependency, by
     * whether it asks for the no-alias one: mox__cuda_entry_fn(k, d, 0),
     * set once the module's entries are loaded (cuda_replay.c reads it). */
    CUfunction entry_plain[2];
    bool grid_wait;         /* its entries start with griddepcontrol.wait (module marker) */
} mox__cuda_kernel;

typedef struct mox__cuda_module {
    mox__cuda_dev *dev;
    CUmodule module;
    uint32_t kernel_count;
    mox__cuda_kernel *kernels;
} mox__cuda_module;

/* Loads verified fatbin bytes and looks up mox_entry_<kernel> for every
 * kernel of `abi`, checking each against the device (required block vs the
 * function's thread limit, static shared memory vs the device's). */
mox_status mox__cuda_module_load(mox__cuda_dev *dev, const void *image, size_t size,
                                 const mox_abi *abi, mox__cuda_module **out);
void mox__cuda_module_unload(mox__cuda_module *module);

/* The entry a dispatch of kernel k runs: the no-alias one where
 * mox__dispatch.entry asks for it and it exists; where the launch's gate
 * has no dependency (no failure can reach it) the one of those without the
 * gate check, and where it has exactly one (inline: make_gate) the one
 * checking one dependency, where those exist. */
static inline CUfunction mox__cuda_entry_of(const mox__cuda_kernel *k, uint32_t entry, uint32_t deps)
{
    bool noalias = entry == MOX__ENTRY_NOALIAS && k->fn_noalias;
    CUfunction special = deps == 0   ? (noalias ? k->fn_ungated_noalias : k->fn_ungated)
                         : deps == 1 ? (noalias ? k->fn_gate1_noalias : k->fn_gate1)
                                     : NULL;
    return special ? special : noalias ? k->fn_noalias : k->fn;
}

static inline CUfunction mox__cuda_entry_fn(const mox__cuda_kernel *k, const mox__dispatch *d, uint32_t deps)
{
    return mox__cuda_entry_of(k, d->entry, deps);
}

/* ---- per-submission state: lives in sub->be ---- */

typedef struct mox__cuda_sub {
    mox__submission *pub;
    struct mox__cuda_sub *next_exec; /* the launcher's queue of executions */
    mox__cuda_group *group;   /* its launch; NULL while pending and once done */
    uint32_t offset;          /* index of its first dispatch within the group */
    uint32_t stream;
    bool done;                /* completed (dispatch states are final) */
    struct mox__cuda_sub *next_pending;
    /* A point of another device that cannot be waited for on the device
     * yet (another backend's, or not launched): held, with the device's
     * later work, until host waiters see it reached (cuda_foreign.c). */
    bool blocked;
    uint32_t fwaits_left;
    mox__cuda_dev *dev;
    mox__sem_waiter *fwaiters;
    mox__sem_waiter fwaiters_inline[2];
    /* Waiting in its stream's pending list. Written by the launcher under
     * dev->lock; mox__cuda_flush reads it with no lock (cuda_submit.c says
     * why that cannot miss a flush). Last: mox__cuda_submit's memset stops
     * before it. */
    _Atomic bool pending;
} mox__cuda_sub;

static inline mox__cuda_sub *mox__cuda_sub_of(const mox__submission *pub)
{
    return (mox__cuda_sub *)pub->be;
}

/* ---- per-dispatch state: lives in d->be ---- */

/* may_fail: whether a dispatch can end anything but OK: its kernel can
 * call mox_fail, or it is gated on one that can. Only such dispatches are
 * gate dependencies of others, so a batch of kernels that never fail runs
 * with no gate reads at all (each read costs every warp of the grid a
 * dependent load before it starts: ~9% of a 2^28-element streaming
 * kernel).
 * carry_first, carry_count: for a kernel with MOX_KFEAT_GATE_DEFERRED, the
 * status slots its gate reads, kept in its launch's group (carried[]) for
 * the gates of its readers (cuda_gates.c); written when its node is
 * described, read while it has not finished. */
typedef struct mox__cuda_dstate {
    uint32_t may_fail;
    uint32_t carry_first, carry_count;
} mox__cuda_dstate;

/* A status slot a deferred dispatch's gate reads (cuda_gates.c): `intra`,
 * an index in its own launch; else an absolute slot of `inst`, an earlier
 * launch's instance its launch holds a reader count on, or (`inst` NULL)
 * the FAILED sentinel. */
typedef struct mox__cuda_carried {
    mox__cuda_inst *inst;
    uint32_t slot;
    bool intra;
} mox__cuda_carried;

static inline bool mox__cuda_may_fail(const mox__dispatch *d)
{
    return d->be && ((const mox__cuda_dstate *)d->be)->may_fail;
}

/* ---- launches (cuda_submit.c) ---- */

/* A download: the device copies into pinned staging, completion copies
 * the staging to the host destination. */
typedef struct mox__cuda_copyback {
    void *stage;
    void *host;
    size_t bytes;
} mox__cuda_copyback;

struct mox__cuda_group {
    mox__cuda_group *next, *prev;   /* in-flight list */
    /* Completion order: a group completes (towards the core) only after the
     * groups it waits for did: the previous group of its stream and those
     * of other streams it waits on. The core relies on it (a gated
     * dispatch's cause is read from the earlier submission). */
    uint32_t npred;
    mox__cuda_group **succs;
    uint32_t nsucc;
    mox__cuda_inst *inst;           /* NULL for transfer-only launches */
    CUevent event;
    bool event_spin;                /* a spin event (MOX_CUDA_EVENTS): no blocking wait on it */
    CUevent trace_start, trace_end; /* timing events around it while tracing (cuda_trace.c) */
    uint32_t stream;
    uint64_t first_value, last_value; /* the stream's semaphore values it signals */
    uint32_t count;                 /* dispatches */
    uint32_t nsubs;
    mox__submission **subs;
    bool check_status;              /* read status words even with a clear flag */
    bool launched;                  /* event recorded */
    bool linked;                    /* on the in-flight list */
    bool claimed;                   /* a waiting thread is completing it */
    bool snapped;                   /* in the completion thread's snapshot as unwatched: only
                                     * the completion thread may free it then (cuda_complete.c) */
    bool idle_launch;               /* launched with nothing else in flight on the device */
    uint64_t launch_ns;             /* when it was launched (mox__now_ns clock); idle launches only */
    mox_status status;              /* not OK: complete every member with it */
    mox_error *error;
    mox__gate *live_gates;          /* gates read from running launches' slots */
    uint32_t live_count;            /* (a GATED state from them raises no flag) */
    mox__cuda_inst **read_insts;    /* instances it holds reader counts on */
    uint32_t read_count;
    mox__cuda_carried *carried;     /* slots its deferred dispatches' gates read (cuda_gates.c) */
    uint32_t carried_count, carried_cap;
    mox__cuda_copyback *copybacks;
    uint32_t copyback_count;
    void **stages;                  /* pinned staging to give back */
    uint32_t stage_count;
    /* several devices (cuda_foreign.c) */
    struct mox__cuda_sem *sem;      /* its stream's semaphore state, while registered there */
    mox__cuda_group *sem_next, *sem_prev;
    mox__sem_point *foreign;        /* other devices' points it waits for: it completes after */
    uint32_t foreign_count;
    struct mox__cuda_fwait *foreign_waiters; /* they wake the completion thread */
    struct mox__cuda_pin *pins;     /* other devices' instances whose status words it reads */
    uint32_t pin_count;
    struct mox__cuda_mirror *mirrors; /* status words copied into its copies' own slots */
    uint32_t mirror_count;
    /* Room for a launch's executions (at most MOX__CUDA_MERGE_SUBS) and
     * its first successors (mostly one: the next launch of its stream), not
     * zeroed: each is written before it is read. Last. */
    mox__submission *subs_inline[MOX__CUDA_MERGE_SUBS];
    mox__cuda_group *succs_inline[MOX__CUDA_SUCCS_INLINE];
};

/* One node of a launch, flattened over the coalesced submissions. */
typedef struct mox__cuda_lnode {
    const mox__dispatch *d;
    const mox__cuda_kernel *k;     /* NULL for transfers */
    CUfunction fn;                 /* the entry it runs (mox__cuda_node_fn); NULL for transfers */
    uint32_t edge_off, edge_cnt;   /* graph predecessors (launch indices) */
    uint32_t gdep_off, gdep_cnt;   /* gate dependencies (launch indices) */
    uint32_t ext_off, ext_cnt;     /* gate dependencies (absolute slots) */
    /* Replayed launches (cuda_replay.c) list only the nodes whose
     * parameters must be set, each with its index; their fn and edges are
     * left unwritten (the plan's). */
    uint32_t node;
} mox__cuda_lnode;

/* The function kernel node `ln` runs: its gate has dependencies exactly
 * when it has gate dependencies inside the launch or on earlier ones. */
static inline CUfunction mox__cuda_node_fn(const mox__cuda_lnode *ln)
{
    return mox__cuda_entry_fn(ln->k, ln->d, ln->gdep_cnt + ln->ext_cnt);
}

/* A launch's description. Each array holds its nodes' entries in node
 * order, so the totals are the arrays' lengths. */
typedef struct mox__cuda_ldesc {
    uint32_t count;
    mox__cuda_lnode *nodes;
    uint32_t *edges;
    uint32_t *gdeps;
    uint32_t *ext;
    uint32_t edge_count;           /* of edges */
    uint32_t deps_total;           /* gate dependency words: of gdeps and ext */
    bool deps_array;               /* a node has more than MOX_GATE_INLINE_DEPS of them */
    bool has_transfer;
    /* Described against the plan it repeats (cuda_replay.c): no gate
     * dependencies, `edges` are the plan's, and `nodes` lists only the
     * `stale` nodes whose parameters the instance must be given. */
    bool replayed;
    uint32_t stale;                /* replayed: nodes listed in `nodes`, their parameters to set */
} mox__cuda_ldesc;

/* A growable array for building a launch (cuda_submit.c). */
typedef struct u32vec {
    uint32_t *v;
    uint32_t n, cap;
} u32vec;

static inline bool mox__cuda_u32_push(u32vec *a, uint32_t x)
{
    if (a->n == a->cap) {
        uint32_t cap = a->cap ? 2u * a->cap : 16u;
        uint32_t *n = mox__realloc(a->v, cap * sizeof *n);
        if (!n)
            return false;
        a->v = n;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return true;
}

/* ---- gates of a launch's nodes (cuda_gates.c): the launcher, dev->lock
 * held, describing launch g; gdeps and ext are the launch's gate slots
 * being built (in the launch, absolute), node ln's from ln->gdep_off and
 * ln->ext_off. False or not OK: out of memory (or another device's error). */

/* For each of dispatch d's gates (execution pub) on a dispatch that may
 * still fail, the slot it reads, and what a deferred one carries; *may_fail
 * when it has one. `at` is the node's index in the launch. */
mox_status mox__cuda_describe_gates(mox__cuda_dev *dev, mox__cuda_group *g, const mox__cuda_lnode *ln,
                                    u32vec *gdeps, u32vec *ext, const mox__submission *pub,
                                    const mox__dispatch *d, uint32_t at, bool *may_fail);
/* Node ln's gate also reads the slots that deferred dispatch gd
 * (MOX_KFEAT_GATE_DEFERRED) carries: gd is a node of `carrier`, which is g
 * or a launched earlier launch not yet finished. */
bool mox__cuda_carry_in(mox__cuda_group *g, const mox__cuda_lnode *ln, u32vec *gdeps, u32vec *ext,
                        const mox__cuda_group *carrier, const mox__dispatch *gd);
/* Node ln, a deferred dispatch whose gate is described (its counts set),
 * keeps the slots it reads for its readers. */
bool mox__cuda_carry_keep(mox__cuda_group *g, const mox__cuda_lnode *ln, const u32vec *gdeps,
                          const u32vec *ext);

void mox__cuda_submit(mox__cuda_dev *dev, mox__submission *pub);
/* Runs the launcher's requests unless someone already does (cuda_submit.c).
 * Caller holds dev->lock (released inside around driver calls). */
void mox__cuda_launcher_enter(mox__cuda_dev *dev);
/* Launches subs[0..n) on `stream` as one group (cuda_launch.c). Never
 * fails: a group that cannot launch goes to the completion thread with its
 * error. Called by the launcher, dev->lock held; released around the
 * driver calls. */
void mox__cuda_launch_group(mox__cuda_dev *dev, mox__submission *const *subs, uint32_t n,
                            uint32_t stream);
mox__cuda_group *mox__cuda_group_new(uint32_t nsubs);
void mox__cuda_group_free(mox__cuda_group *g);
/* `later` completes only after `earlier` did (once per pair). */
bool mox__cuda_add_succ(mox__cuda_group *earlier, mox__cuda_group *later);
/* A reader count of `g` on an earlier launch's instance, whose status
 * words it reads (once per instance; false: out of memory). dev->lock held. */
bool mox__cuda_add_reader(mox__cuda_group *g, mox__cuda_inst *inst);
/* Drops the reader counts a group holds on earlier instances. dev->lock held. */
void mox__cuda_drop_readers(mox__cuda_dev *dev, mox__cuda_group *g);
/* The launch (launched or not) that signals `pt`, NULL once it finished.
 * Caller holds dev->lock. */
mox__cuda_group *mox__cuda_group_of_point(mox__cuda_dev *dev, const mox__sem_point *pt);
/* The core is about to block on `pub`: if it is held back (pending), its
 * stream's pending executions go out now. */
void mox__cuda_flush(mox__cuda_dev *dev, mox__submission *pub);
void mox__cuda_set_hold(mox__cuda_dev *dev, bool hold);
/* Whether stream q holds back (pending) an execution at or below `value`.
 * Caller holds dev->lock. */
bool mox__cuda_pending_covers(const mox__cuda_dev *dev, uint32_t q, uint64_t value);
/* Asks the launcher to launch what is held, in submission order, once
 * nothing holds it any more. Caller holds dev->lock. */
void mox__cuda_release_held(mox__cuda_dev *dev);
/* Launches the pending executions of `stream`. The launcher, dev->lock held. */
void mox__cuda_flush_stream(mox__cuda_dev *dev, uint32_t stream);
/* How a waiting thread saw the group it watched end (cuda_watch.c):
 * when (`seen`, the mox__cuda_now_ns clock), and the run to time, if any
 * (mox__cuda_run_observe's arguments; `inst` NULL: none). */
typedef struct mox__cuda_seen {
    uint64_t seen;
    mox__cuda_inst *inst;
    uint64_t ns, gap;
    bool napped;
} mox__cuda_seen;
/* Completes a finished (or failed) group: states, copybacks, releases,
 * then mox__execution_complete for every member. No lock held. The group
 * is freed. `by_waiter` NULL: the completion thread, which unlinked it
 * already. Otherwise a waiting thread finishes it (claimed, still on the
 * in-flight list): it is unlinked, its run observed and the quiet window
 * opened in the same critical section as its release; if it is in the
 * completion thread's snapshot (g->snapped), it is left on dev->reap for
 * that thread instead of being freed. */
void mox__cuda_group_finish(mox__cuda_dev *dev, mox__cuda_group *g, CUresult r,
                            const mox__cuda_seen *by_waiter);

/* ---- device spans of the timeline trace (cuda_trace.c) ----
 * begin/end bracket a launch on its stream (launcher, no lock, tracing
 * on); finish writes the spans of a finished launch and frees its events
 * (drop frees them without spans); close frees the device's epoch. */
void mox__cuda_trace_begin(mox__cuda_dev *dev, mox__cuda_group *g, CUstream cs);
void mox__cuda_trace_end(mox__cuda_dev *dev, mox__cuda_group *g, CUstream cs);
void mox__cuda_trace_finish(mox__cuda_dev *dev, mox__cuda_group *g);
void mox__cuda_trace_drop(mox__cuda_dev *dev, mox__cuda_group *g);
void mox__cuda_trace_close(mox__cuda_dev *dev);
/* A thread about to block on `pub`: if its launch holds it alone and has
 * no unfinished predecessor, watches the launch's event (the completion
 * thread leaves it alone meanwhile) until it finished on the device - then
 * completes it here and returns true - or until wait's time is up or its
 * stop says so. */
bool mox__cuda_complete_inline(mox__cuda_dev *dev, mox__submission *pub,
                               const mox__inline_wait *wait);
/* Run-time estimates of graph instances (cuda_watch.c), dev->lock held.
 * When a waiting thread should wake from a nap through a run of `inst`
 * launched at `launch_ns`, or 0: no nap (fewer than two runs measured,
 * runs shorter than MOX_CUDA_NAP_US, or naps off). */
uint64_t mox__cuda_nap_end(const mox__cuda_dev *dev, const mox__cuda_inst *inst, uint64_t launch_ns);
/* A run of `inst` seen done `ns` after its launch, `gap` after a query
 * found it still running: exact when that is within a 64th of the run (or
 * 20 us: a waiter the scheduler set aside for a moment). An inexact one
 * below the estimate (the run ended unseen, during a nap when `napped`:
 * it was shorter than the runs before) lowers it and stops the naps until
 * two runs are measured again; an inexact one above it says nothing. */
void mox__cuda_run_observe(mox__cuda_dev *dev, mox__cuda_inst *inst, uint64_t ns, uint64_t gap,
                           bool napped);
/* Takes g off the in-flight list; dev->lock held (cuda_complete.c). */
void mox__cuda_inflight_unlink(mox__cuda_dev *dev, mox__cuda_group *g);
/* After a waiting thread completed a launch (seen done at `now`, the
 * mox__cuda_now_ns clock): new launches do not signal the completion
 * thread for a while; dev->lock held. */
void mox__cuda_quiet_after_inline(mox__cuda_dev *dev, uint64_t now);
/* Frees the groups waiting threads completed. Caller holds dev->lock and
 * holds no snapshot of the in-flight list. */
void mox__cuda_groups_reap(mox__cuda_dev *dev);

/* ---- several devices (cuda_foreign.c) ---- */

/* A point of another device: another CUDA device's semaphore state tells
 * where its launch is, under that state's lock (a leaf, taken under any
 * device's dev->lock, never held over a driver call). */
typedef struct mox__cuda_sem mox__cuda_sem;

/* Another device's instance whose status words a launch reads. */
typedef struct mox__cuda_pin {
    mox__cuda_dev *owner;
    mox__cuda_inst *inst;
} mox__cuda_pin;

/* A status word of another device copied into node `node`'s own slot
 * before the node runs (its gate then reads it there). */
typedef struct mox__cuda_mirror {
    uint32_t node;
    CUdeviceptr word;
    CUcontext ctx;
} mox__cuda_mirror;

/* Whether `b` is a device of this backend. */
bool mox__cuda_is_cuda(const mox__backend *b);
/* realloc that aborts on failure (a few bytes of bookkeeping). */
void *mox__cuda_xrealloc(void *p, size_t n);

/* What a semaphore state tells about a point (cuda_sem.c). */
typedef enum mox__cuda_pt {
    MOX__CUDA_PT_SETTLED, /* finished on the device: its states are final */
    MOX__CUDA_PT_LIVE,    /* launched: it has an event and status words */
    MOX__CUDA_PT_FAILED,  /* its launch failed: it completes with an error */
    MOX__CUDA_PT_UNKNOWN  /* no launch yet (held back, or not executed) */
} mox__cuda_pt;
mox__cuda_dev *mox__cuda_sem_owner(const mox__cuda_sem *st);
/* The state of (st's semaphore, value); with `event` and a live launch,
 * its event, pinned until mox__cuda_sem_unpin_event. */
mox__cuda_pt mox__cuda_sem_point(mox__cuda_sem *st, uint64_t value, CUevent *event);
void mox__cuda_sem_unpin_event(mox__cuda_sem *st, CUevent event);
/* A gate on dispatch j of `sub` (its signal on st's semaphore): its state;
 * *may_fail when live and able to fail - then *word is its status word and
 * *inst the owner's instance holding it, held (foreign_readers) until
 * mox__cuda_foreign_release. */
mox__cuda_pt mox__cuda_sem_gate(mox__cuda_sem *st, const mox__submission *sub, uint32_t j,
                                bool *may_fail, CUdeviceptr *word, mox__cuda_inst **inst);
/* The backend state of a queue's semaphore (sem->be): that stream's
 * launches in flight, with their events and status words. */
mox_error *mox__cuda_sem_init(mox__cuda_dev *dev, mox__semaphore *sem);
void mox__cuda_sem_fini(mox__cuda_dev *dev, mox__semaphore *sem);
/* A group enters its stream's state when pushed to completion and leaves
 * it when finished (states final). Caller holds dev->lock. Unregistering
 * returns whether its event goes back to the pool now (false: another
 * device's launcher still has to wait on it, and gives it back). */
void mox__cuda_sem_register(mox__cuda_dev *dev, mox__cuda_group *g);
bool mox__cuda_sem_unregister(mox__cuda_dev *dev, mox__cuda_group *g);
/* No lock held: points of other CUDA devices still in their owners'
 * pending lists go out, so that they have events. */
void mox__cuda_foreign_flush(mox__cuda_dev *dev, const mox__submission *pub);
/* dev->lock held: true when a point of another device cannot be waited
 * for on the device now; `me` is then blocked until host waiters see its
 * points reached (dev->blocked counts it; everything later waits). */
bool mox__cuda_foreign_block(mox__cuda_dev *dev, mox__cuda_sub *me);
/* The events of other devices' launches a launch waits for on the device
 * (cuStreamWaitEvent across contexts), each pinned to its owner's state. */
typedef struct mox__cuda_fevent {
    mox__cuda_sem *st;
    CUevent event;
} mox__cuda_fevent;
typedef struct mox__cuda_fevents {
    mox__cuda_fevent *v;
    uint32_t n, cap;
} mox__cuda_fevents;
/* Building a launch (dev->lock held): the events of `pub`'s points of other
 * devices, pinned. */
mox_status mox__cuda_foreign_events(mox__cuda_dev *dev, const mox__submission *pub,
                                    mox__cuda_fevents *out);
/* Launching it (no lock held): `stream` waits for them on the device. */
mox_status mox__cuda_foreign_wait_events(mox__cuda_dev *dev, CUstream stream,
                                         const mox__cuda_fevents *ev);
/* After that (no lock held), launched or not: the pins go. */
void mox__cuda_foreign_unpin_events(mox__cuda_fevents *ev);
/* dev->lock held: a gate of node `node` on another device's dispatch.
 * *skip: it can never close; else *slot is what the gate reads: settled
 * (sentinel or OK slot, *intra false), or the node's own slot (*intra true,
 * slot = node), into which the remote status word is mirrored first. */
mox_status mox__cuda_foreign_gate(mox__cuda_dev *dev, mox__cuda_group *g, const mox__gate *gate,
                                  uint32_t node, bool *skip, bool *intra, uint32_t *slot);
/* dev->lock held, before `g` is built: its points of other devices not
 * reached yet, each with a host waiter that wakes the completion thread. */
void mox__cuda_foreign_collect(mox__cuda_dev *dev, mox__cuda_group *g);
/* Whether `g` may complete: its points of other devices are reached (or
 * failed). Caller holds dev->lock. */
bool mox__cuda_foreign_ready(const mox__cuda_group *g);
/* The failure of another device's semaphore `g` waited on (borrowed). */
mox_error *mox__cuda_foreign_failure(const mox__cuda_group *g);
/* At finish, no lock held: gives other devices' instances back. */
void mox__cuda_foreign_release(mox__cuda_group *g);
/* Frees what the foreign bookkeeping of `g` allocated. */
void mox__cuda_foreign_free(mox__cuda_group *g);

/* ---- copies (cuda_copy.c): the launcher's, no lock held ---- */

/* Enqueues COPY node `node` of `g` on `stream`: mirrors first, then a
 * plain copy (cuMemcpyDtoDAsync on one context, cuMemcpyPeerAsync across)
 * or, when `gate` has dependencies, the gated copy kernel. */
mox_status mox__cuda_copy(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t node,
                          const mox__dispatch *d, const mox_gate *gate, CUstream stream);
void mox__cuda_copy_unload(mox__cuda_dev *dev);

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
/* Enqueues a transfer dispatch of `group` on `stream` (the launcher, no lock held). */
mox_status mox__cuda_transfer(mox__cuda_dev *dev, mox__cuda_group *group, const mox__dispatch *d,
                              CUstream stream);

/* ---- device (cuda_device.c) ---- */

typedef struct mox__cuda_stats {
    atomic_ullong instantiations;  /* cuGraphInstantiate calls */
    atomic_ullong plans;           /* plans created */
    atomic_ullong node_updates;    /* cuGraphExecKernelNodeSetParams calls */
    atomic_ullong graph_launches;
    atomic_ullong stream_launches; /* cuLaunchKernel calls */
    atomic_ullong groups;          /* launches (graph or stream), one event each */
    atomic_ullong coalesced;       /* submissions that went into a shared launch */
    atomic_ullong deps_uploads;
    atomic_ullong resets;
    atomic_ullong status_reads;    /* completions that read status words */
    atomic_ullong live_gates;      /* gates read from the slots of running launches */
    atomic_ullong gate_deps;       /* dependency words launched gates read */
    atomic_ullong inline_completions; /* launches a waiting user thread completed */
    atomic_ullong programmatic_edges; /* graph edges added as programmatic (MOX_CUDA_PDL) */
    atomic_ullong event_sleeps;    /* completion thread's blocking waits on a launch's event */
    atomic_ullong ungated_nodes;   /* plan nodes that run an entry without the gate check */
    /* Offers of a waiting thread to complete its launch that were declined
     * (mox__cuda_complete_inline), by reason, and watches that ended
     * before the launch did (the waiter's spin ran out or it was woken). */
    atomic_ullong inline_not_out;  /* the launch was not made yet */
    atomic_ullong inline_shared;   /* it carries other executions, or waits for other launches */
    atomic_ullong inline_taken;    /* another waiting thread watches it */
    atomic_ullong inline_missed;   /* watched, then given back unfinished */
    atomic_ullong quiet_waits;     /* completion thread's timed waits new launches do not end */
    atomic_ullong inline_naps;     /* waiting threads' sleeps through a predicted long run */
    atomic_ullong nap_late_ns;     /* their wake-ups past the time asked, summed */
    atomic_ullong nap_overslept;   /* naps the run ended in (seen late, estimate lowered) */
    atomic_ullong inline_blocks;   /* waiting threads' blocking waits on their launch's event */
    atomic_ullong spin_events;     /* launches whose event is a spin event (MOX_CUDA_EVENTS) */
    atomic_ullong wake_events;     /* blocking-sync events recorded to sleep on (mox__cuda_event_sleep) */
    atomic_ullong replays;         /* launches described against the plan they repeat (cuda_replay.c) */
} mox__cuda_stats;

/* MOX_CUDA_EVENTS: the kind of event a launch records. A blocking-sync
 * event lets a thread sleep in cuEventSynchronize until the launch is
 * done, but the driver raises an interrupt for every one recorded, and a
 * thread running on the CPU that takes the GPU's interrupts loses tens of
 * microseconds to each (docs/performance.md, "the slow-wait mode"). A spin
 * event raises none: a thread that sleeps on such a launch records a
 * blocking-sync event behind it when it decides to (mox__cuda_event_sleep). */
typedef enum mox__cuda_events {
    MOX__CUDA_EVENTS_SPIN = 0,     /* the default */
    MOX__CUDA_EVENTS_BLOCKING = 1  /* every launch blocking-sync (before 2026-12-02) */
} mox__cuda_events;

typedef enum mox__cuda_launch_mode {
    MOX__CUDA_LAUNCH_AUTO = 0,   /* graphs (streams for launches with transfers) */
    MOX__CUDA_LAUNCH_GRAPH = 1,
    MOX__CUDA_LAUNCH_STREAM = 2
} mox__cuda_launch_mode;

/* MOX_CUDA_PDL: whether graph edges into kernels whose entries wait
 * (mox__cuda_kernel.grid_wait) are programmatic, and from which port of
 * the upstream kernel (docs/cuda-backend.md, "Programmatic dependent
 * launch"). */
typedef enum mox__cuda_pdl {
    MOX__CUDA_PDL_OFF = 0,
    MOX__CUDA_PDL_END = 1,  /* the dependent starts once every upstream block ended */
    MOX__CUDA_PDL_START = 2 /* ... once every upstream block began */
} mox__cuda_pdl;

typedef struct mox__cuda_limits {
    uint32_t max_block[3];
    uint32_t max_grid[3];
    uint32_t max_threads;
    uint32_t warp_size;
    uint32_t shared_per_block;
    uint32_t shared_optin;  /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    uint32_t sm_count;
    uint32_t cc_major, cc_minor;
    uint64_t total_mem;
} mox__cuda_limits;

typedef struct mox__cuda_flag_chunk {
    struct mox__cuda_flag_chunk *next;
    uint32_t *host;
    CUdeviceptr dev;
} mox__cuda_flag_chunk;

typedef struct mox__cuda_stream_state {
    uint32_t depth;                  /* launched, not completed groups */
    mox__cuda_group *last;           /* its newest group not yet completed */
    mox__cuda_sub *pending_head, *pending_tail;
    uint32_t pending_count;
} mox__cuda_stream_state;

typedef struct mox__cuda_stage_pool {
    void **free[40];                 /* per power-of-two class */
    uint32_t count[40], cap[40];
    uint64_t cached_bytes;
} mox__cuda_stage_pool;

typedef struct mox__cuda_peer {
    CUcontext ctx;                   /* a source context copies read from */
    bool access;                     /* cuCtxEnablePeerAccess to it succeeded */
} mox__cuda_peer;

#define MOX__CUDA_MAX_PEERS 16u

struct mox__cuda_dev {
    mox__backend base;               /* first: the core's handle */
    const mox__cuda_api *api;
    CUdevice device;
    CUcontext ctx;
    char name[128];
    uint32_t ordinal;
    char uuid[37];
    mox__cuda_limits limits;
    mox__cuda_launch_mode mode;
    mox__cuda_pdl pdl;               /* MOX_CUDA_PDL, OFF where the GPU or driver lacks it */
    atomic_bool pdl_refused;         /* the driver refused a programmatic edge: off from then on */
    bool coalesce;                   /* MOX_CUDA_COALESCE=0 turns it off */
    bool print_stats;                /* MOX_CUDA_STATS=1: counters on stderr at close */
    uint32_t defer_depth;            /* see MOX__CUDA_DEFER_DEPTH */
    CUstream streams[MOX__CUDA_STREAMS];
    CUstream copy_stream;            /* allocation zeroing, synchronous uploads */

    mox__mutex lock;                 /* everything below (core/sync.h: a futex word) */
    uint32_t next_stream;
    mox__cuda_stream_state stream_state[MOX__CUDA_STREAMS];
    bool hold;                       /* set_hold: launch nothing */
    /* the launcher (cuda_submit.c): its token and its requests */
    bool launching;
    mox__cuda_sub *exec_head, *exec_tail;
    uint32_t flush_mask;             /* streams whose held-back list must go out */
    bool hold_asked, hold_wanted;
    CUdeviceptr pool;                /* gate status words, 2 per slot */
    unsigned char *slot_used;
    uint32_t slot_hint;
    mox__cuda_flag_chunk *flag_chunks;
    uint32_t **free_flags;
    CUdeviceptr *free_flags_dev;
    uint32_t free_flag_count, free_flag_cap;
    CUevent *free_events[2];         /* by kind: [0] blocking-sync, [1] spin */
    uint32_t free_event_count[2], free_event_cap[2];
    uint32_t events_made[2];         /* free_event_cap is at least this */
    mox__cuda_events events;         /* MOX_CUDA_EVENTS */
    /* The completion thread went to sleep with launches nobody watches in
     * flight (it cleared it when nothing was): new launches record
     * blocking-sync events, so it can sleep on each until its end even
     * with others queued behind (mox__cuda_event_spin). */
    atomic_bool sleepy;
    mox__cuda_stage_pool stages;
    mox__cuda_plan **plans;          /* hash buckets */
    /* The plans each stream found last, most recent first (NULLs at the
     * end): a pipeline's launches alternate between a few shapes (one
     * execution, or several merged), compared before any hash. */
    mox__cuda_plan *stream_plan[MOX__CUDA_STREAMS][MOX__CUDA_STREAM_PLANS];
    uint32_t plan_cap, plan_count;
    uint64_t plan_clock;
    /* Scratch for describing a launch (cuda_submit.c): kept between
     * launches, so building one allocates nothing once grown. */
    mox__cuda_lnode *scratch_nodes;
    uint32_t scratch_nodes_cap;
    u32vec scratch_u32[3];           /* edges, gate deps, external gate slots */

    /* several devices (cuda_foreign.c, cuda_copy.c) */
    uint32_t blocked;                /* executions held for another device's point (dev->lock) */
    CUevent trace_epoch;             /* the trace's reference event (cuda_trace.c; launcher) */
    uint64_t trace_epoch_ns;         /* the trace clock when it completed */
    bool release_asked;              /* the last one was released: the launcher flushes */
    struct mox__cuda_sem *sems[MOX__CUDA_STREAMS]; /* its queues' semaphore states */
    CUmodule copy_module;            /* the gated copy kernel, loaded on first use (launcher) */
    CUfunction copy_fn;
    mox__cuda_peer peers[MOX__CUDA_MAX_PEERS]; /* the launcher's */
    uint32_t peer_count;

    pthread_mutex_t pool_lock;       /* the staging pool; a leaf, never held over a driver call */


    /* completion */
    mox__cuda_group *inflight_head, *inflight_tail;
    mox__cuda_group *reap;           /* completed by waiting threads; freed by the completion thread */
    uint32_t inflight;
    mox__cond work_cv;               /* with `lock` (core/sync.h) */
    bool waiting;                    /* completion thread is in work_cv */
    /* While waiting threads complete their launches (until quiet_until_ns
     * after the last one did), the completion thread looks for new launches
     * every QUIET_POLL_US instead of being signalled for each (`quiet`):
     * the signal is a futex wake on the submitting thread's path, and its
     * waking contends for dev->lock with the waiter (cuda_complete.c). */
    bool quiet;
    uint64_t quiet_until_ns;
    _Atomic uint32_t pushes;         /* groups handed to the completion thread; read
                                        without the lock while it spins idle */
    _Atomic uint32_t watchers;       /* user threads spinning in mox_op_wait on this
                                        device (vtable watch): the completion
                                        thread then queries instead of sleeping */
    pthread_t thread;
    bool thread_started;
    bool stopping;
    atomic_bool lost;
    char lost_message[320];
    uint32_t spin_us;
    uint32_t poll_ns;         /* least time between two query rounds while spinning */
    uint64_t nap_min_ns;      /* MOX_CUDA_NAP_US: least expected run a waiter sleeps through (0, the default: never) */

    mox__cuda_stats stats;
};

/* Whether `gate` of a dispatch of launch g can never close: it is on a
 * dispatch of this device that finished OK, or that cannot fail and is
 * still in flight (launched, or in g). mox__cuda_describe_gates skips such
 * gates; describe_node calls it only for a dispatch with another. */
static inline bool mox__cuda_gate_never_closes(const mox__cuda_dev *dev, const mox__cuda_group *g,
                                               const mox__gate *gate)
{
    if (gate->sub->signal.sem->owner != &dev->base)
        return false; /* another device's: mox__cuda_foreign_gate decides */
    const mox__cuda_sub *gs = mox__cuda_sub_of(gate->sub);
    const mox__dispatch *gd = gate->sub->dispatches[gate->dispatch];
    if (gs->done)
        return gd->state == MOX_DISPATCH_OK;
    return gs->group && (gs->group->launched || gs->group == g) && !mox__cuda_may_fail(gd);
}

/* Whether the device holds back what is executed (the testing hold, or an
 * execution blocked on another device's point). Caller holds dev->lock. */
static inline bool mox__cuda_held(const mox__cuda_dev *dev)
{
    return dev->hold || dev->blocked > 0;
}

/* The MOX_CUDA_* settings into `dev` (cuda_settings.c); MOX_ERR_CONFIG
 * for a bad MOX_CUDA_PDL. */
mox_status mox__cuda_read_settings(mox__cuda_dev *dev);
/* Turns MOX_CUDA_PDL off where the GPU (below sm_90) or the driver lacks
 * what it needs; call once the limits are known. */
void mox__cuda_settle_pdl(mox__cuda_dev *dev);

/* Opens device `ordinal`: primary context, streams, pools, completion
 * thread. MOX_ERR_DEVICE_UNAVAILABLE without a driver or device. */
mox_status mox__cuda_dev_open(int ordinal, mox__cuda_dev **out);
/* The ordinal `config` selects: its ordinal, the device with its UUID, or
 * MOX_CUDA_DEVICE (0 when unset). Codes: MOX_ERR_DEVICE_UNAVAILABLE,
 * MOX_ERR_CONFIG (a bad MOX_CUDA_DEVICE), MOX_ERR_BACKEND. */
mox_status mox__cuda_select(const mox__backend_config *config, int *ordinal);
/* Writes device `d`'s UUID in mox_device_uuid's form. */
mox_status mox__cuda_uuid_of(const mox__cuda_api *api, CUdevice d, char out[37]);
/* How `dev` reaches `peer`'s memory (MOX__PEER_*). */
mox_status mox__cuda_peer_link(mox__cuda_dev *dev, mox__cuda_dev *peer, uint32_t *link);
/* Stops the completion thread (after in-flight work drained) and frees. */
void mox__cuda_dev_close(mox__cuda_dev *dev);
/* Makes the device's context current on the calling thread. */
mox_status mox__cuda_dev_enter(mox__cuda_dev *dev);
/* Marks the device lost after a sticky fault (first message wins).
 * Caller holds dev->lock. */
void mox__cuda_dev_lost(mox__cuda_dev *dev, const char *message);

/* Gate slots and failure flags: the launcher's alone (instances are made
 * and destroyed by it), no lock. */
mox_status mox__cuda_slots_alloc(mox__cuda_dev *dev, uint32_t count, uint32_t *base);
void mox__cuda_slots_free(mox__cuda_dev *dev, uint32_t base, uint32_t count);
mox_status mox__cuda_flag_alloc(mox__cuda_dev *dev, uint32_t **host, CUdeviceptr *devp);
void mox__cuda_flag_free(mox__cuda_dev *dev, uint32_t *host, CUdeviceptr devp);
/* Events from the device's pools, by kind (spin: no blocking wait): got by
 * the launcher, given back by completions. take and keep with dev->lock
 * held (take: false when the pool is empty); get and put with no lock held
 * (they take dev->lock briefly; get makes an event when the pool is
 * empty, with no lock held over the driver). */
bool mox__cuda_event_take(mox__cuda_dev *dev, bool spin, CUevent *out);
void mox__cuda_event_keep(mox__cuda_dev *dev, bool spin, CUevent event);
mox_status mox__cuda_event_get(mox__cuda_dev *dev, bool spin, CUevent *out);
void mox__cuda_event_put(mox__cuda_dev *dev, bool spin, CUevent event);
/* Whether a launch made now records a spin event: MOX_CUDA_EVENTS=spin and
 * the completion thread not sleeping on unwatched launches (dev->sleepy). */
bool mox__cuda_event_spin(const mox__cuda_dev *dev);
/* Sleeps in the driver until g's launch is done: on its event when that is
 * blocking-sync, else on a blocking-sync one recorded now on its stream,
 * provided g is still the newest group there (checked under dev->lock,
 * taken here; a launch queued behind it meanwhile may make the wake-up
 * later). *r: the synchronization's result, CUDA_SUCCESS once g is done
 * (a failure is for a query of g's event to tell). False, having done
 * nothing, when it cannot. Any context may be current (it sets the
 * device's to make an event); no lock held. */
bool mox__cuda_event_sleep(mox__cuda_dev *dev, mox__cuda_group *g, CUresult *r);

/* ---- completion thread (cuda_complete.c) ---- */

mox_status mox__cuda_completion_start(mox__cuda_dev *dev);
void mox__cuda_completion_stop(mox__cuda_dev *dev);
/* Adds a group to the in-flight list (launched, or failed before launch:
 * then completed without querying). Caller holds dev->lock. */
void mox__cuda_completion_push(mox__cuda_dev *dev, mox__cuda_group *g);

#endif
