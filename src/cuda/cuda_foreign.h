/* src/cuda/cuda_foreign.h - several devices: semaphores shared across devices, pinned events, mirrors and a launch's waits on other devices. Part of
 * cuda/cuda_internal.h, which includes the backend's headers in order:
 * include that one. */
#ifndef MOX_CUDA_FOREIGN_H
#define MOX_CUDA_FOREIGN_H

#ifndef MOX_CUDA_INTERNAL_H
#error "include cuda/cuda_internal.h, not cuda/cuda_foreign.h"
#endif

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

#endif
