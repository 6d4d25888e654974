/* src/cuda/cuda_device.h - one device: its counters, limits, streams, pools and lock, settings, opening and closing, gate slots, host flags and events. Part of
 * cuda/cuda_internal.h, which includes the backend's headers in order:
 * include that one. */
#ifndef MOX_CUDA_DEVICE_H
#define MOX_CUDA_DEVICE_H

#ifndef MOX_CUDA_INTERNAL_H
#error "include cuda/cuda_internal.h, not cuda/cuda_device.h"
#endif

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
    atomic_ullong builtin_loads;   /* attempts to load the copy and fill kernels (cuda_copy.c) */
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
    void *doomed;                    /* given back past the cache, to free (cuda_stage.c) */
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
    CUmodule copy_module;            /* the gated copy and fill kernels, loaded on first use
                                        (launcher) */
    CUfunction copy_fn, fill_fn;
    /* The same two as kernels of graph nodes (cuda_copy.c): ready once
     * loaded (release; describe_node reads it under dev->lock). */
    mox__cuda_kernel copy_k, fill_k;
    _Atomic bool builtins_ready;
    /* Their load failed for good (the driver cannot JIT the PTX, say):
     * the code and message every later use gets without loading again
     * (the launcher's; MOX_OK while none failed, or only for memory). */
    mox_status builtins_failure;
    char builtins_message[320];
    mox__cuda_peer peers[MOX__CUDA_MAX_PEERS]; /* the launcher's */
    uint32_t peer_count;

    pthread_mutex_t pool_lock;       /* the staging pool; a leaf, never held over a driver call */


    /* completion */
    mox__cuda_group *inflight_head, *inflight_tail;
    /* Launches whose end was seen and whose executions are completing
     * towards the core (g->finishing): a launch that waits for one still
     * becomes its successor (mox__cuda_group_of_point). */
    mox__cuda_group *finishing;
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
    uint64_t upload_node_max; /* MOX_CUDA_UPLOAD_NODE_KIB in bytes: the largest upload a graph node copies */

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

#endif
