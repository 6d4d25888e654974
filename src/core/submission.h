/* submission.h - dispatches and submissions inside the core: recording
 * (intra-batch edges from accesses), submission (capacity, trackers,
 * cross-batch waits and gates, the backend), completion (failure
 * attribution, results, wakeups). */
#ifndef MOX_CORE_SUBMISSION_H
#define MOX_CORE_SUBMISSION_H

#include <stdint.h>
#include <string.h>

#include <mox/module.h>

#include "hal/hal.h"
#include "alloc.h"
#include "buffer.h"
#include "device.h"
#include "sync.h"
#include "trace.h"

/* One argument of a dispatch, as the core sees it. */
typedef struct mox__karg {
    mox_buffer *buffer;        /* retained until completion (or drop); NULL for values;
                                  stale once completion released it (args_released) */
    mox_access access;
    uint32_t ub;               /* index of the buffer in the submission's ub table */
} mox__karg;

/* Allocates a kernel dispatch with room for `arg_count` args and
 * `value_bytes` of 16-aligned value storage. Params, addresses, backend
 * scratch are laid out in the same zeroed allocation. NULL on out of
 * memory. */
mox__dispatch *mox__dispatch_alloc(mox_device *device, uint32_t arg_count, size_t value_bytes,
                                   unsigned char **values);
/* Where the parts of a dispatch's block lie (mox__dispatch_layout_of): the
 * same for every dispatch of one kernel on one device, so launches keep it
 * (launch.c). */
typedef struct mox__dispatch_layout {
    uint32_t total;            /* bytes of the block */
    uint32_t arg_count;
    bool head;                 /* a head precedes the dispatch (mox__dispatch_head) */
    bool has_be;               /* the backend wants scratch */
    uint32_t off_d, off_args, off_params, off_values, off_be;
} mox__dispatch_layout;
/* The layout of a dispatch with room for `arg_count` args and `value_bytes`
 * of 16-aligned value storage, with `head` more bytes (zeroed, 16-aligned)
 * in front of it for the caller when not 0: the launch op that carries the
 * dispatch, so that a launch makes one allocation, not two. */
void mox__dispatch_layout_of(const mox_device *device, uint32_t arg_count, size_t value_bytes,
                             size_t head, mox__dispatch_layout *l);
/* Where a dispatch's parameters (params[i]), the address slots of its
 * buffers (addr[i]: a buffer's params[i] points at it) and its value
 * copies lie. */
typedef struct mox__dispatch_parts {
    void **params;
    void **addr;
    unsigned char *values;
} mox__dispatch_parts;
/* A zeroed dispatch of layout `l` with its args, storage and backend
 * scratch set: the caller sets its kind and, for a kernel, its params and
 * param_count. A head's block goes once both the dispatch
 * (mox__dispatch_free) and the head (mox__dispatch_head_free) are freed, in
 * either order, on any thread. NULL on out of memory. */
/* What precedes a dispatch whose block also holds a head (a launch op,
 * op.c): how many of the two still use the block, and its size. The
 * dispatch and the head end independently (a driven launch's op may
 * outlive its dispatch, or the other way round, on different threads):
 * the last one frees the block. */
typedef struct mox__block_share {
    _Atomic uint32_t users;
    uint32_t size;
} mox__block_share;
/* Bytes in front of a head (its block's share), keeping what follows
 * 16-aligned. */
enum { MOX__SHARE_ROOM = 16 };
_Static_assert(sizeof(mox__block_share) <= MOX__SHARE_ROOM, "mox__block_share outgrew its room");
static inline void mox__block_share_release(mox__block_share *share)
{
    if (mox__block_last_user(&share->users))
        mox__block_free(share, share->size);
}
/* (Inline: every launch makes one.) */
static inline mox__dispatch *mox__dispatch_alloc_laid(const mox__dispatch_layout *l,
                                                      mox__dispatch_parts *parts)
{
    /* A zeroed block (cheaper than an aligned allocation). */
    unsigned char *p = mox__block_alloc(l->total);
    if (!p)
        return NULL;
    memset(p, 0, l->total);
    if (l->head) {
        mox__block_share *share = (mox__block_share *)p;
        atomic_init(&share->users, 2);
        share->size = l->total;
    }
    mox__dispatch *d = (mox__dispatch *)(p + l->off_d);
    d->args = (struct mox__karg *)(p + l->off_args);
    d->arg_count = l->arg_count;
    parts->params = (void **)(p + l->off_params);
    parts->addr = parts->params + l->arg_count;
    parts->values = p + l->off_values;
    d->be = l->has_be ? (void *)(((uintptr_t)(p + l->off_be) + 63u) & ~(uintptr_t)63u) : NULL;
    d->storage = p;
    d->storage_size = l->total;
    return d;
}
static inline void *mox__dispatch_head(mox__dispatch *d)
{
    return (unsigned char *)d->storage + MOX__SHARE_ROOM;
}
static inline void mox__dispatch_head_free(void *head)
{
    mox__block_share_release((mox__block_share *)((unsigned char *)head - MOX__SHARE_ROOM));
}
/* A transfer dispatch on `buffer` (retained). */
mox__dispatch *mox__transfer_alloc(mox_device *device, mox__cmd_kind kind, mox_buffer *buffer,
                                   uint64_t offset, uint64_t bytes, void *host);
/* An upload dispatch of `bytes` into `buffer` (retained) at `offset`, with
 * `bytes` of host memory it owns at d->host for the caller to fill: the
 * backend's device-readable memory where it has some (hal.h, "Uploads
 * from device-readable host memory"), else ordinary memory. NULL: out of
 * memory. */
mox__dispatch *mox__upload_alloc(mox_device *device, mox_buffer *buffer, uint64_t offset,
                                 uint64_t bytes);
/* Gives back the host memory d owns (owned_host), to the backend that
 * lent it or to the allocator. */
void mox__dispatch_host_release(mox__dispatch *d);
/* A copy dispatch (MOX__CMD_COPY): `bytes` from src at src_offset into dst
 * at dst_offset; both buffers retained. */
mox__dispatch *mox__copy_alloc(mox_device *device, mox_buffer *src, uint64_t src_offset,
                               mox_buffer *dst, uint64_t dst_offset, uint64_t bytes);
/* A fill dispatch (MOX__CMD_FILL): `bytes` of dst from dst_offset set to
 * the `pattern_size` bytes at `pattern` repeated (copied into the
 * dispatch); dst retained. */
mox__dispatch *mox__fill_alloc(mox_device *device, mox_buffer *dst, uint64_t dst_offset,
                               uint64_t bytes, const void *pattern, uint32_t pattern_size);
/* Frees an unsubmitted dispatch, releasing its buffers. */
void mox__dispatch_free(mox__dispatch *d);
/* Releases the error and cause of a dispatch that did not run OK. */
void mox__dispatch_release_errors(mox__dispatch *d);
/* Frees a dispatch whose buffers were released already (completion).
 * Inline: a batch's free runs it for each of its dispatches. */
static inline void mox__dispatch_free_released(mox__dispatch *d)
{
    /* only a dispatch that did not run OK has them */
    if (__builtin_expect(d->error || atomic_load(&d->cause), 0))
        mox__dispatch_release_errors(d);
    if (__builtin_expect(d->owned_host != NULL, 0))
        mox__dispatch_host_release(d);
    if (d->storage != (void *)d)
        mox__block_share_release(d->storage); /* a head precedes it */
    else
        mox__block_free(d->storage, d->storage_size);
}

/* A buffer used by a submission, with its accesses summarised. */
typedef struct mox__ub {
    mox_buffer *buffer;
    int32_t first_write;       /* first dispatch writing it, -1 none */
    int32_t last_write;        /* last dispatch writing it, -1 none */
    int32_t readers;           /* head of the reader chain since last_write, -1 none */
    mox__gate ext_writer;      /* unfinished writer of an earlier submission, set by
                                  preparation (prepare.c) when there is one */
    int32_t gate_to;           /* the last dispatch that takes ext_writer's gate, -1
                                  none (no such writer); set by preparation */
    uint32_t refs;             /* arguments of the batch's dispatches that hold a
                                  reference to it: completion drops them at once */
} mox__ub;

typedef struct mox__reader_node {
    uint32_t dispatch;
    int32_t next;
} mox__reader_node;

typedef struct mox_result mox_result;

#define MOX__SUB_INLINE_GATES 4

typedef struct mox__record_memo mox__record_memo; /* record_memo.c */

struct mox__sub {
    mox__submission pub;       /* what the backend sees; must be first */
    _Atomic unsigned refs;
    /* The batch's op lies in the batch's block when op_in_block
     * (mox__op_submit): the two end independently, the last one frees the
     * block; block_users counts them (mox__block_last_user). */
    bool op_in_block;
    _Atomic uint32_t block_users;
    mox_device *device;        /* retained while in flight */

    /* completion, under `lock` (a spin lock: a few fields, no call out) */
    mox__spin lock;
    _Atomic bool done;
    mox__waker_cell *waiter;
    const mox_result *result;  /* built at completion, until the op takes it */
    bool detached;             /* the op resolved or was dropped: no one wants result */
    bool yields_args;          /* single launch: the result yields its arguments */
    bool yields_bytes;         /* readback: the result holds owned_host */
    void *owned_host;          /* readback bytes, owned until moved into the result */
    size_t owned_size;

    /* recording */
    uint32_t count, npreds, nubs;
    uint32_t unloaded;         /* kernel dispatches pushed without their module handle */
    bool heap_arrays;          /* an array below left its inline storage (or ub_index
                                  was made): mox__sub_free looks at each */
    uint32_t *ub_index;        /* open addressing over ubs when nubs > 16; 0 = empty, else idx+1 */
    uint32_t ub_index_cap;
    uint32_t nreaders;
    /* Following the recording thread's memo (record_memo.c): until the
     * batch is sealed its ub table holds buffers only, and the memo says
     * the rest; NULL once it left it, or when it never followed one. */
    mox__record_memo *memo;
    uint64_t memo_gen;         /* the memo's generation and dispatch count when the */
    uint32_t memo_count;       /* batch began following it */
    /* The seal took the batch's tables from the memo (record_memo.h): its
     * successors are laid out already (succs, pub.succs, succ_first) and
     * `cands` lists each dispatch's gate candidates (a count, then that
     * many ub indices, dispatch after dispatch: the buffers it touches
     * before the batch writes them, in argument order, each once), which
     * preparation visits instead of the arguments, whose ub indices the
     * seal then left unwritten. */
    bool laid;
    uint32_t cands_words;      /* 8-byte words of cands */
    uint64_t *cands;

    /* submission */
    uint32_t nwaits;
    mox__gate *gates;
    bool submitted;
    bool args_released;        /* completion released the dispatches' buffers */
    /* Order stamps from one process-wide counter (mox__order_stamp):
     * queued_at when the batch joined an admission queue at its first poll
     * (0: never queued), done_at when its states were final (publish). A
     * queued batch is prepared at admission, but a writer that finished
     * after it was queued was unfinished at its submission: it still takes
     * that writer's gate (A9; prepare.c, tracker_ops.h). */
    uint64_t queued_at;
    uint64_t done_at;          /* written before `done` is set */
    /* admission queue, under the device lock */
    bool queued;
    bool modules_pending;      /* a kernel's module was still being prepared at the
                                  first poll: admitted once it is loaded (admission.c) */
    struct mox__sub *admit_next;
    mox_error *queue_error;    /* why a queued batch could not be submitted */
    /* the wait list handed to the backend: one point per other queue */
    uint32_t npoints;
    struct mox__sub *issue_next; /* the device's issue list */
    /* copies between devices (copy.c) */
    mox_device *other;         /* a copy's source device when it is another context:
                                  its lock is taken with the device's (by id) to
                                  prepare; retained until completion */
    struct mox__sub *staged;   /* a copy between backends: the download on `other`
                                  this upload waits for (retained), prepared and
                                  issued with it; it owns the host stage */
    mox_device *home;          /* the device whose admission queue holds it (queued) */
    struct mox__sub *admit_next_other; /* its link in other's admission queue */
    uint8_t yield_count;       /* the result yields yield_bufs[0 .. yield_count): a copy
                                  {src, dst}, a fill or an upload {buffer} */
    mox_buffer *yield_bufs[2]; /* retained until the result takes them */

    /* Set by mox__sub_create (not zeroed first): the block's size, and
     * the growable arrays, each starting in its inline storage below. */
    uint32_t alloc_size;       /* bytes of its block (mox__block_alloc) */
    uint32_t cap, cap_preds, cap_ubs, cap_readers, cap_waits, cap_points;
    mox__dispatch **d;
    uint32_t *preds;
    mox__ub *ubs;
    mox__reader_node *readers;
    mox__sub **waits;          /* retained until completion */
    mox__sem_point *points;    /* the wait list handed to the backend */
    uint32_t *succs;

    /* Small inline storage for the common one- or two-dispatch batch. It
     * is not zeroed at creation (each array is written before it is read);
     * everything above alloc_size is. */
    mox__dispatch *d_inline[2];
    uint32_t preds_inline[4];
    uint32_t succs_inline[4];
    mox__ub ubs_inline[6];
    mox__reader_node readers_inline[6];
    mox__sub *waits_inline[4];
    mox__sem_point points_inline[4];
    mox__gate gates_inline[MOX__SUB_INLINE_GATES];
    uint64_t cands_inline[2];
};

static inline mox__sub *mox__sub_of(mox__submission *pub) { return (mox__sub *)pub; }

/* Every batch's block has room for its op right after the batch (one
 * allocation per batch instead of two): where it lies, and its size
 * (op.c asserts that a mox_op fits). */
enum { MOX__SUB_OP_ROOM = 128 };
#define MOX__SUB_OP_OFFSET ((sizeof(mox__sub) + 15u) & ~(size_t)15u)
static inline void *mox__sub_op_room(mox__sub *sub) { return (unsigned char *)sub + MOX__SUB_OP_OFFSET; }
static inline mox__sub *mox__sub_of_op_room(void *op)
{
    return (mox__sub *)((unsigned char *)op - MOX__SUB_OP_OFFSET);
}
/* Ends the batch's or its op's use of the batch's block: frees it when
 * the other one is gone too (or the op never lay there). */
static inline void mox__sub_block_release(mox__sub *sub)
{
    if (!sub->op_in_block || mox__block_last_user(&sub->block_users))
        mox__block_free(sub, sub->alloc_size);
}

mox__sub *mox__sub_create(mox_device *device);
/* Grows an array of a batch that starts in inline storage to hold `need`
 * elements (its heap copies are blocks). false on out of memory. */
bool mox__sub_grow_slow(mox__sub *s, void **arr, uint32_t *cap, const void *inline_arr, size_t elem,
                        uint32_t need);
static inline bool mox__sub_grow(mox__sub *s, void **arr, uint32_t *cap, const void *inline_arr,
                                 size_t elem, uint32_t need)
{
    return need <= *cap || mox__sub_grow_slow(s, arr, cap, inline_arr, elem, need);
}
/* Inline: trackers, waits and ops take and drop references to a batch
 * several times per dispatch; only the last drop calls out. */
static inline mox__sub *mox__sub_ref(mox__sub *sub)
{
    atomic_fetch_add_explicit(&sub->refs, 1, memory_order_relaxed);
    return sub;
}
/* Frees a batch whose last reference was just dropped. */
void mox__sub_free(mox__sub *sub);
static inline void mox__sub_unref(mox__sub *sub)
{
    if (sub && atomic_fetch_sub_explicit(&sub->refs, 1, memory_order_acq_rel) == 1)
        mox__sub_free(sub);
}
/* Appends a dispatch (taken over even on failure) and computes its edges.
 * Codes: MOX_ERR_OUT_OF_MEMORY. */
mox_status mox__sub_push(mox__sub *sub, mox__dispatch *d);

/* Recomputes the edges and the ub table of every dispatch pushed so far
 * (a batch that stops following its memo). false on out of memory (the
 * batch must then be discarded). */
bool mox__sub_replay(mox__sub *s);
/* Outcome of trying to submit. */
typedef enum mox__submit_result {
    MOX__SUBMIT_DONE,          /* handed to the backend (or failed: see *error) */
    MOX__SUBMIT_QUEUED         /* no free slot: in the admission queue */
} mox__submit_result;

/* Submits under the device lock: orders against earlier submissions and
 * hands the batch to the backend when a command slot is free and no batch
 * is queued before it; otherwise appends it to the device's admission
 * queue (FIFO), from which the completion that frees a slot submits it -
 * without another poll. Either way `cell` becomes the waiter, woken once
 * when the batch resolves. On failure before the backend (device lost, out
 * of memory) returns MOX__SUBMIT_DONE with *error set and nothing
 * submitted; a queued batch that fails so later resolves with that error. */
mox__submit_result mox__sub_submit(mox_device *device, mox__sub *sub, mox__waker_cell *cell,
                                   mox_error **error);
/* Orders a batch against earlier work and prepares its HAL execution
 * (queue, wait list, signal value, gates); takes the backend's reference.
 * Device lock held, a slot free. NULL, or the error (nothing changed). */
mox_error *mox__sub_prepare_locked(mox_device *device, mox__sub *sub);
/* Hands the device's issue list to the backend, in order, with no lock
 * held (the caller was told to drain it). */
void mox__issue_drain(mox_device *device);
/* Appends a prepared batch to the issue list. Device lock held. Returns
 * true when the caller must drain it (nobody is draining). */
bool mox__issue_locked(mox_device *device, mox__sub *sub);
/* After preparing `sub`: a staged copy's download goes onto its device's
 * issue list (also when `sub` itself then failed: it is in flight).
 * Returns the device whose list the caller must drain first, or NULL.
 * Both locks held. */
mox_device *mox__issue_staged_locked(mox__sub *sub);

/* The admission queue (admission.c). A copy between devices waits in the
 * queues of both (its place in both orders) and is admitted at the head
 * of both. Locks: the device's, and for such a copy its source's too. */
bool mox__admit_needed_locked(mox_device *device, const mox__sub *sub);
void mox__admit_enqueue_locked(mox_device *device, mox__sub *sub);
/* Prepares queued batches while slots are free, stopping at a copy
 * between devices (*cross set: call mox__admit_cross once the lock is
 * released). Device lock held. */
mox__sub *mox__admit_queued_locked(mox_device *device, bool *drain, bool *cross);
/* Admits what the queue holds while slots are free, then resolves the
 * batches that failed admission, drains and admits copies between devices,
 * all with no lock held on entry (a slot came back, a batch left a queue). */
void mox__admit_run(mox_device *device);
/* Resolves batches that failed admission, each on its own device. */
void mox__resolve_failed_admissions(mox__sub *failed);
/* Admits the copies between devices at the heads of their queues, and
 * what follows them. No lock held. */
void mox__admit_cross(mox_device *device);
/* Locks `a` and, when not NULL and another context, `b`: lower id first
 * (the lock order of several devices). */
void mox__lock_pair(mox_device *a, mox_device *b);
void mox__unlock_pair(mox_device *a, mox_device *b);
/* Takes a queued batch out of the admission queue (its op is dropped).
 * Returns false when it is no longer queued (it was submitted, or resolved
 * with an error): then it is in flight or done like any submitted batch. */
bool mox__sub_dequeue(mox_device *device, mox__sub *sub);
/* The result once the submission completed (taken: the caller owns the
 * reference and the op is detached), else NULL with `cell` registered as
 * the waiter. */
const mox_result *mox__sub_take_result(mox__sub *sub, mox__waker_cell *cell);
/* Marks `sub` done with result `r` (taken over; kept unless the op is
 * detached: then handed back in *unused, for the caller to release once it
 * is done with the device) and returns its waiter, pinned: wake and unpin
 * it once the device is notified. completion.c. */
mox__waker_cell *mox__sub_publish(mox__sub *sub, const mox_result *r, const mox_result **unused);
/* The next value of the process-wide order counter (> 0). */
uint64_t mox__order_stamp(void);
/* Detaches the op (dropped): no waiter, no result wanted. The caller then
 * quiesces its cell. */
void mox__sub_detach(mox__sub *sub);

#endif
