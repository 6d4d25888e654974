/* src/cuda/cuda_launch.h - launches: the launcher's descriptions of a launch's nodes, their gates, launch groups and their successors, the pending lists, the timeline trace's device spans, naps and the in-flight list. Part of
 * cuda/cuda_internal.h, which includes the backend's headers in order:
 * include that one. */
#ifndef MOX_CUDA_LAUNCH_H
#define MOX_CUDA_LAUNCH_H

#ifndef MOX_CUDA_INTERNAL_H
#error "include cuda/cuda_internal.h, not cuda/cuda_launch.h"
#endif

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
    /* Done on the device and off the in-flight list, its executions not
     * yet complete towards the core (dev->finishing; cuda_finish.c): it
     * still takes successors, so nothing ordered after it resolves first. */
    mox__cuda_group *fin_next, *fin_prev;
    bool finishing;
    /* Completion order: a group completes (towards the core) only after the
     * groups it waits for did: the previous group of its stream and those
     * of other streams it waits on. The core relies on it (a gated
     * dispatch's cause is read from the earlier submission), and so do
     * programs: an op never resolves before one it was ordered after. It
     * rises under dev->lock (mox__cuda_add_succ) and drops, with release
     * order, once a predecessor's executions completed
     * (mox__cuda_group_finish); readers see a drop's completions. */
    _Atomic uint32_t npred;
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
/* The launch (launched or not, or finishing) that signals `pt`; NULL once
 * the core signalled it (after its op was published). Caller holds
 * dev->lock. */
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
/* Moves g from the in-flight list to the finishing list (its end was
 * seen; mox__cuda_group_finish takes it off that one); dev->lock held
 * (cuda_complete.c). */
void mox__cuda_inflight_retire(mox__cuda_dev *dev, mox__cuda_group *g);
/* After a waiting thread completed a launch (seen done at `now`, the
 * mox__cuda_now_ns clock): new launches do not signal the completion
 * thread for a while; dev->lock held. */
void mox__cuda_quiet_after_inline(mox__cuda_dev *dev, uint64_t now);
/* Frees the groups waiting threads completed. Caller holds dev->lock and
 * holds no snapshot of the in-flight list. */
void mox__cuda_groups_reap(mox__cuda_dev *dev);

#endif
