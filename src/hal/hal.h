/* hal.h - the hardware abstraction layer: the contract between the runtime
 * core (src/core) and a backend (src/cpu, src/cuda). Modelled on IREE's HAL
 * (device, command buffer, semaphore), smaller. docs/backends.md maps it onto
 * CUDA, the CPU and, on paper, Metal.
 *
 * Objects
 *   device          mox__backend: memory, modules, `queue_count` queues.
 *   command buffer  mox__submission: the commands of one batch with their
 *                   barriers, recorded by the core. Names here follow the
 *                   core ("submission", "dispatch"): a command buffer is what
 *                   one batch submits, a command is a dispatch or a transfer.
 *   semaphore       mox__semaphore: a timeline (a 64-bit value that only
 *                   grows) plus a failure. Queue q of a device signals the
 *                   device's semaphore q, one value per execution.
 *
 * The core owns everything users see: validation, ops, batches, ordering,
 * failure attribution, capacity, module preparation. It records a command
 * buffer from a batch, computes its barriers (intra-batch edges from buffer
 * accesses), its queue, its wait list and its signal value under its own
 * lock, then calls `execute` with no core lock held. A backend owns device
 * memory, loaded module code and execution; it never decides an order
 * between command buffers: the wait list does.
 *
 * Lifecycle
 *   open -> buffer_alloc/free, buffer_upload, module_load/unload, execute ...
 *   -> destroy (once no execution is in flight and every buffer and module
 *   is freed).
 *
 * Threads and locks
 *   Every entry point may be called from any thread, never with a core lock
 *   held. `execute` is called by one thread at a time per device, in the
 *   order of the executions' serial numbers (the order the core's trackers
 *   saw), so every point in a wait list - of this device or another - was
 *   handed to its device's execute before. It must not block on device
 *   work. Lock order in the runtime: core device locks (two at most, by
 *   device id) -> a submission's lock -> a waker cell's lock; a semaphore's
 *   lock is a leaf; backend locks are never held while calling into the
 *   core, and core locks never while calling a backend.
 *
 * Execution (`execute(device, sub)`)
 *   sub->queue      the queue (< info.queue_count) the core chose;
 *   sub->waits      points (semaphore, value) of other queues that must be
 *                   reached before any command starts; on one queue,
 *                   executions start in signal order, each after the
 *                   previous one on that queue completed (queues are FIFO:
 *                   waits on the own queue are implicit);
 *   sub->signal     the value the queue's semaphore reaches when this
 *                   execution completes.
 *   Inside: dispatch i starts only after every dispatch in
 *   preds[d->pred_first .. +pred_count) finished (barriers from accesses:
 *   read-after-write, write-after-read, write-after-write; indices < i;
 *   an edge implied by a path through another predecessor may be left
 *   out). Commands without a path between them may run concurrently.
 *
 *   Failure gating (rule A9). A dispatch ends in one of three states:
 *     MOX_DISPATCH_OK      it ran (a transfer: it copied);
 *     MOX_DISPATCH_FAILED  it ran and called mox_fail(code) (fail_code = the
 *                          first code), or the backend detected a fault in it;
 *     MOX_DISPATCH_GATED   it did not run because a predecessor is FAILED or
 *                          GATED, or because one of its gates is.
 *   gates[d->gate_first .. +gate_count) name dispatches of earlier
 *   executions that this one waits for (directly or through its queue): if
 *   such a dispatch ends FAILED or GATED, this one is GATED. A gate is the
 *   one place a backend reads another command buffer: the named dispatch's
 *   state once it completed, or the status storage its own execute made for
 *   it while it runs (CUDA: the device reads the status word, no host
 *   decision). Host transfers (DOWNLOAD, UPLOAD) are never gated: host
 *   access ignores failures. COPY and FILL are device work: they are gated
 *   like a kernel (a GATED copy or fill writes nothing) and cannot fail
 *   themselves.
 *   Independent dispatches of a batch in which something failed still run.
 *   The core works out which failure caused a GATED state, builds the errors
 *   and picks the batch's result; the backend only reports states.
 *
 * Completion
 *   When every dispatch has a final state, the backend stores `state` and
 *   `fail_code` in each dispatch and calls mox__execution_complete(sub,
 *   error) exactly once, from one of its own threads (never from inside
 *   execute) or from the thread the core lends it in complete_inline,
 *   after every execution `sub` waited for completed, and on a
 *   queue in signal order. "Completed" means its mox__execution_complete
 *   returned: an execution submitted while an earlier one is finishing
 *   (its end seen, its completion not yet returned) still waits for that
 *   one (CUDA: the finishing list, cuda_finish.c; conformance ordering
 *   submitted_while_completing_resolves_after). `error` is the one status object that crosses the
 *   boundary: NULL for success (failed dispatches are states, not errors),
 *   else an error whose code is MOX_ERR_DEVICE_LOST (a sticky device fault),
 *   MOX_ERR_OUT_OF_MEMORY or MOX_ERR_BACKEND; then dispatches that did not
 *   finish are GATED. The core then sets the semaphore's value to
 *   sub->signal.value and runs its host waiters. After the call the backend
 *   must not touch `sub` again. A device-wide fault completes every
 *   execution in flight with MOX_ERR_DEVICE_LOST and fails the device's
 *   semaphores (mox__semaphore_fail), so no waiter - on this device or one
 *   waiting on its semaphores - can hang.
 *
 * Semaphores
 *   The core creates one per queue at device open (semaphore_init lets the
 *   backend attach device state, e.g. CUDA events per value). `value` is the
 *   host's view: the highest value whose execution completed. A backend
 *   that waits on the host (the CPU) registers a mox__sem_waiter; one that
 *   waits on the device (CUDA) uses its own state for the value. A failed
 *   semaphore satisfies every wait; an execution that waited on it completes
 *   with its failure - that very error object, retained - and runs nothing.
 *
 * Several devices
 *   A wait point may name a semaphore of another device (sem->owner is not
 *   the executing device): of the same backend (CUDA: the device waits, on
 *   the event the owner's semaphore state gives for the value) or of another
 *   backend (the executing backend waits on the host). Only COPY commands
 *   reach into another device's memory (src_device, of the same backend;
 *   copies between backends are staged by the core: a download on one, an
 *   upload on the other). A COPY's gates may name a dispatch of another
 *   device's execution (the source's unfinished writer): the CPU reads its
 *   final state, CUDA its status word through the owner's semaphore state.
 *   An execution that completes with the failure of another device's
 *   semaphore does not make its own device lost (the core compares the
 *   error with the waited semaphores' failures).
 *
 * Memory shape of kernel arguments
 *   d->params[i] points to the i-th argument: for a buffer, to a `void *`
 *   holding the buffer's address (as returned by buffer_alloc); for a value,
 *   to its bytes (16-byte aligned). This is both kernel_abi.h's CPU argument
 *   vector and cuLaunchKernel's kernelParams (minus the mox_gate the CUDA
 *   entries take first). Pointers stay valid until completion.
 *
 * Operands of copies and fills as parameters
 *   COPY and FILL dispatches also carry their operands as `params`, with a
 *   1-D `config`, so that a backend may run them as a kernel of its own
 *   (the CUDA backend's graph nodes) without allocating anything:
 *     COPY (param_count 3): u64 source address (src_address + src_offset),
 *          u64 destination address (address + offset), u64 bytes;
 *     FILL (param_count 4): u64 destination address, u64 bytes, the
 *          pattern in MOX__FILL_MAX_PATTERN bytes (zero past pattern_size;
 *          `host` points at it), u32 pattern_size;
 *   config: blocks of MOX__COMMAND_BLOCK threads, one per 16 * MOX__COMMAND_BLOCK
 *   bytes (at least one, at most MOX__COMMAND_MAX_BLOCKS: the kernel strides).
 *   Whoever makes such a dispatch lays them out with mox__copy_operands_set
 *   or mox__fill_operands_set (below), in storage that lives as long as it.
 *
 * Uploads from device-readable host memory
 *   mox_buffer_upload copies the program's bytes at once. Where the
 *   backend has host_alloc, that copy goes into memory the device reads in
 *   place (the CUDA backend's pinned staging), and the UPLOAD dispatch
 *   carries a COPY's operands (param_count 3, the source being the copy's
 *   device address, src_address): the backend may run it as its copy
 *   kernel among other nodes, or copy from `host` directly, with no
 *   staging of its own. The core gives the memory back (host_free) when
 *   the execution completes, or with the dispatch if it never ran. An
 *   UPLOAD with param_count 0 reads ordinary memory at `host`.
 */
#ifndef MOX_HAL_H
#define MOX_HAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mox/kernel_abi.h>
#include <mox/launch.h>
#include <mox/status.h>

#include "core/sync.h"
#include <mox/types.h>

#include "artifact/abi.h"      /* mox_abi */
#include "artifact/manifest.h" /* mox_artifact_file */

typedef struct mox__backend mox__backend;
typedef struct mox__submission mox__submission;
typedef struct mox__dispatch mox__dispatch;
typedef struct mox__semaphore mox__semaphore;
typedef struct mox_buffer mox_buffer;
typedef struct mox__devmod mox__devmod;

typedef enum mox__cmd_kind {
    MOX__CMD_KERNEL = 0,   /* run a kernel over a non-empty grid */
    MOX__CMD_DOWNLOAD = 1, /* copy buffer bytes [offset, offset+bytes) to host */
    MOX__CMD_UPLOAD = 2,   /* copy host bytes into buffer [offset, offset+bytes) */
    MOX__CMD_COPY = 3,     /* copy device bytes from a source buffer of this device or of
                              another device of the same backend into [offset, offset+bytes) */
    MOX__CMD_FILL = 4      /* set buffer bytes [offset, offset+bytes) to the pattern_size
                              bytes at `host` repeated (bytes is a multiple of pattern_size,
                              offset too; pattern_size 1..MOX__FILL_MAX_PATTERN) */
} mox__cmd_kind;

/* The largest element a fill repeats (mox_buffer_fill): the CUDA backend
 * passes the pattern as a kernel parameter. */
#define MOX__FILL_MAX_PATTERN 128u
/* The launch shape copies and fills carry ("Operands of copies and fills"). */
#define MOX__COMMAND_BLOCK 256u
#define MOX__COMMAND_MAX_BLOCKS 1024u

/* ---------------- semaphores ---------------- */

/* A host waiter on a semaphore point: fn(ctx) runs once the semaphore
 * reaches `value` or fails, on the thread that got it there, with no lock
 * held. Embedded in the waiting backend's own state (no allocation). */
typedef struct mox__sem_waiter {
    void (*fn)(void *ctx);
    void *ctx;
    uint64_t value;
    struct mox__sem_waiter *next;
} mox__sem_waiter;

struct mox__semaphore {
    _Atomic uint64_t value;           /* highest completed value (host view) */
    _Atomic uint64_t issued;          /* highest value handed to the owner's execute (core) */
    _Atomic(mox_error *) failure;     /* set once; then every wait is satisfied */
    mox__backend *owner;              /* the device whose queue signals it */
    uint32_t queue;
    void *be;                         /* the owner's state (semaphore_init) */
    mox__mutex lock;                  /* guards `waiters`; a leaf lock (core/sync.h) */
    mox__sem_waiter *waiters;
};

/* A value on a semaphore. */
typedef struct mox__sem_point {
    mox__semaphore *sem;
    uint64_t value;
} mox__sem_point;

/* Registers `w` for (sem, w->value). Returns false, registering nothing,
 * when the point is already reached or the semaphore failed: the caller
 * goes on at once. Core-implemented. */
bool mox__semaphore_wait_async(mox__semaphore *sem, mox__sem_waiter *w);
/* The failure (borrowed), or NULL. */
static inline mox_error *mox__semaphore_failure(mox__semaphore *sem)
{
    return atomic_load_explicit(&sem->failure, memory_order_acquire);
}
static inline bool mox__semaphore_reached(mox__semaphore *sem, uint64_t value)
{
    return atomic_load_explicit(&sem->value, memory_order_acquire) >= value;
}
/* Fails the semaphore with `error` (taken over; the first failure wins) and
 * runs every host waiter. Core-implemented; backends call it for device
 * loss. */
void mox__semaphore_fail(mox__semaphore *sem, mox_error *error);

/* ---------------- command buffers ---------------- */

/* mox__dispatch.entry values (mox/kernel_abi.h, MOX_ENTRY_NOALIAS_SUFFIX). */
enum { MOX__ENTRY_DEFAULT = 0, MOX__ENTRY_NOALIAS = 1 };

/* A dispatch of an earlier execution whose failure gates. */
typedef struct mox__gate {
    const mox__submission *sub;
    uint32_t dispatch;
} mox__gate;

struct mox__dispatch {
    /* ---- set by the core, read by the backend ---- */
    mox__cmd_kind kind;
    uint32_t index;          /* position in its command buffer */
    /* MOX__CMD_KERNEL */
    void *module;            /* the backend's handle from module_load */
    uint32_t kernel;         /* kernel index in the module (ABI order) */
    const char *kernel_name;
    uint32_t kernel_features; /* MOX_KFEAT_* from the ABI */
    /* Which generated entry to run (MOX__ENTRY_*): NOALIAS when no buffer
     * the dispatch writes is also another of its arguments (launch.c); a
     * backend without that entry for the kernel runs the default one. */
    uint32_t entry;
    mox_launch_config config; /* validated, non-empty grid; shared_bytes: dynamic shared memory per block */
    uint32_t param_count;
    void *const *params;     /* see "Memory shape" above */
    /* MOX__CMD_DOWNLOAD / _UPLOAD / _COPY / _FILL (the destination) */
    void *buffer;            /* backend buffer handle */
    void *address;           /* its address */
    uint64_t offset, bytes;
    void *host;              /* destination (download), source (upload) or the
                                pattern (fill: lives as long as the dispatch) */
    uint32_t pattern_size;   /* MOX__CMD_FILL: bytes of the pattern at `host` */
    /* MOX__CMD_COPY: the source, on `src_device` (this device, or another
     * device of the same backend: see "Several devices") */
    mox__backend *src_device;
    void *src_buffer;
    void *src_address;
    uint64_t src_offset;
    /* barriers, indices into the command buffer's arrays */
    uint32_t pred_first, pred_count;
    uint32_t succ_first, succ_count; /* the inverse of preds, for convenience */
    uint32_t gate_first, gate_count;

    /* ---- written by the backend before completion ---- */
    uint32_t state;          /* MOX_DISPATCH_OK / _FAILED / _GATED */
    uint32_t fail_code;      /* FAILED by mox_fail: the first code */
    const char *fault;       /* FAILED by a fault the backend detected: static text
                                saying what (NULL for mox_fail) */
    uint32_t fault_status;   /* with fault: its mox_status, 0 for MOX_ERR_KERNEL_FAILED
                                (MOX_ERR_OUT_OF_MEMORY when the host ran out of memory) */

    /* ---- backend scratch: info.dispatch_state_size bytes, zeroed, 64-aligned ---- */
    void *be;

    /* ---- core private: backends never touch what follows ---- */
    uint32_t arg_count;
    struct mox__karg *args;  /* arg_count entries */
    mox__devmod *devmod;
    mox_error *error;        /* FAILED/GATED after completion: this dispatch's error */
    _Atomic(mox_error *) cause; /* the original failure (FAILED: its own), set once */
    void *storage;           /* allocation holding this dispatch (mox__block_alloc) */
    size_t storage_size;
    void *owned_host;        /* host bytes it owns (an upload's copy: `host`), freed with it */
    mox__backend *owned_host_be; /* owned_host came from this backend's host_alloc */
};

/* Storage of a copy's or a fill's operands ("Operands of copies and fills
 * as parameters"), and the setters that lay them out and point d->params
 * at them; d's other fields (addresses, offsets, bytes) are set first. */
typedef struct mox__copy_operands {
    uint64_t src, dst, bytes;
    void *params[3];
} mox__copy_operands;
typedef struct mox__fill_operands {
    uint64_t dst, bytes;
    unsigned char pattern[MOX__FILL_MAX_PATTERN];
    uint32_t pattern_size;
    void *params[4];
} mox__fill_operands;

static inline mox_launch_config mox__command_config(uint64_t bytes)
{
    uint64_t blocks = bytes / (16ull * MOX__COMMAND_BLOCK) + 1u;
    if (blocks > MOX__COMMAND_MAX_BLOCKS)
        blocks = MOX__COMMAND_MAX_BLOCKS;
    return mox_launch_config_make(mox_dim3_make((uint32_t)blocks, 1, 1),
                                  mox_dim3_make(MOX__COMMAND_BLOCK, 1, 1));
}

static inline void mox__copy_operands_set(mox__dispatch *d, mox__copy_operands *o)
{
    o->src = (uint64_t)(uintptr_t)d->src_address + d->src_offset;
    o->dst = (uint64_t)(uintptr_t)d->address + d->offset;
    o->bytes = d->bytes;
    o->params[0] = &o->src;
    o->params[1] = &o->dst;
    o->params[2] = &o->bytes;
    d->params = o->params;
    d->param_count = 3;
    d->config = mox__command_config(d->bytes);
}

/* Also copies the pattern (pattern_size bytes; the rest zeroed) and points
 * d->host at that copy. */
static inline void mox__fill_operands_set(mox__dispatch *d, mox__fill_operands *o,
                                          const void *pattern, uint32_t pattern_size)
{
    o->dst = (uint64_t)(uintptr_t)d->address + d->offset;
    o->bytes = d->bytes;
    memset(o->pattern, 0, sizeof o->pattern);
    memcpy(o->pattern, pattern, pattern_size);
    o->pattern_size = pattern_size;
    o->params[0] = &o->dst;
    o->params[1] = &o->bytes;
    o->params[2] = o->pattern;
    o->params[3] = &o->pattern_size;
    d->params = o->params;
    d->param_count = 4;
    d->config = mox__command_config(d->bytes);
    d->host = o->pattern;
    d->pattern_size = pattern_size;
}

struct mox__submission {
    /* ---- set by the core, read by the backend ---- */
    uint32_t count;
    uint32_t transfer_count;       /* dispatches that are not MOX__CMD_KERNEL */
    mox__dispatch *const *dispatches;
    const uint32_t *preds;
    const uint32_t *succs;
    const mox__gate *gates;
    uint32_t queue;
    const mox__sem_point *waits;   /* on other queues (or other devices) */
    uint32_t wait_count;
    mox__sem_point signal;         /* sem == the device's semaphore of `queue` */
    uint64_t serial;               /* 1, 2, ... per device, in execute order */
    uint64_t context_id;           /* the device's process-unique context id (traces name
                                      a batch by it and its serial: docs/trace.md) */
    _Atomic bool awaited;          /* set (before flush) once the core blocks on it:
                                      do not hold it back from then on */
    /* ---- backend scratch: info.submission_state_size bytes, zeroed, 64-aligned ---- */
    void *be;
    /* The core's private state follows: the core embeds this struct first in
     * its own submission object. */
};

/* ---------------- devices ---------------- */

/* What module_load gets: the verified bytes of the artifact file the backend
 * asked for (info.module_file), plus the checked ABI. */
typedef struct mox__module_image {
    const char *name;        /* module name */
    const char *dir;         /* artifact directory (for messages) */
    const mox_abi *abi;      /* the manifest's ABI, equal to the bindings' */
    const char *abi_sha256;
    const void *bytes;       /* verified against the manifest hash; NUL after them */
    size_t size;
} mox__module_image;

typedef struct mox__backend_info {
    char name[128];              /* mox_device_name */
    mox_dim3 max_block;          /* per-axis block limit */
    uint32_t max_threads_per_block;
    uint32_t max_shared_bytes;   /* dynamic shared memory a launch may ask per block */
    uint64_t max_buffer_bytes;   /* largest single buffer */
    uint32_t warp_size;
    uint32_t features;           /* MOX_FEAT_* the device supports */
    mox_artifact_file module_file; /* MOX_FILE_CPU_SO or MOX_FILE_FATBIN */
    uint32_t queue_count;        /* queues (>= 1), one semaphore each */
    size_t submission_state_size; /* bytes of sub->be the backend wants */
    size_t dispatch_state_size;   /* bytes of d->be the backend wants */
    uint32_t ordinal;            /* which device of the backend (mox_device_ordinal) */
    char uuid[37];               /* mox_device_uuid: 8-4-4-4-12 lower-case hex */
} mox__backend_info;

typedef struct mox__backend_config {
    uint32_t cpu_threads;        /* 0 = number of cores */
    uint64_t context_id;         /* the device's process-unique id */
    int32_t ordinal;             /* the device to open; -1: the backend's default */
    const char *uuid;            /* or the device with this UUID (then ordinal is -1) */
} mox__backend_config;

/* How two devices of one backend reach each other's memory
 * (mox_peer_link's values). */
enum {
    MOX__PEER_NONE = 0,
    MOX__PEER_SAME = 1,
    MOX__PEER_HOST = 2,
    MOX__PEER_PCIE = 3,
    MOX__PEER_NVLINK = 4
};

/* What the core lends a backend in complete_inline. */
typedef struct mox__inline_wait {
    uint64_t until_ns;       /* give the thread back by then */
    bool (*stop)(void *ctx); /* true: give it back now */
    void *ctx;
    /* Puts the thread to sleep (no CPU) until `until_ns` or until stop
     * would say true, and returns stop's answer. Time spent in it does not
     * count against until_ns: that bounds spinning, not sleeping. NULL:
     * the thread may only spin. */
    bool (*nap)(void *ctx, uint64_t until_ns);
    bool watching;    /* the thread is counted by vtable watch meanwhile */
    /* Past until_ns the backend may keep the thread, blocked in the driver
     * until the launch is done, instead of giving it back: the core would
     * only put it to sleep until a backend thread wakes it. */
    bool block_after;
} mox__inline_wait;

/* Every function returning mox_error * returns NULL on success, else the
 * error (code + message + cause), which the caller takes over. */
typedef struct mox__backend_vtable {
    /* Frees the backend; nothing is in flight or allocated any more. */
    void (*destroy)(mox__backend *backend);
    /* Zero-filled device memory of `bytes` (> 0, <= max_buffer_bytes).
     * *handle identifies it to the backend; *address is what kernels get.
     * Codes: MOX_ERR_ALLOCATION_FAILED, MOX_ERR_DEVICE_LOST. */
    mox_error *(*buffer_alloc)(mox__backend *backend, uint64_t bytes, void **handle,
                               void **address);
    void (*buffer_free)(mox__backend *backend, void *handle);
    /* Synchronous copy into a buffer no execution touches yet (creation). */
    mox_error *(*buffer_upload)(mox__backend *backend, void *handle, uint64_t offset,
                                const void *src, uint64_t bytes);
    /* Loads module code. Checks the code against image->abi (kernel count and
     * names, interface version). Codes: MOX_ERR_MODULE_LOAD,
     * MOX_ERR_KERNEL_NOT_FOUND, MOX_ERR_UNSUPPORTED_DEVICE. */
    mox_error *(*module_load)(mox__backend *backend, const mox__module_image *image,
                              void **module);
    void (*module_unload)(mox__backend *backend, void *module);
    /* Attaches backend state to the semaphore of `sem->queue` (NULL if none
     * is needed); semaphore_fini frees it. */
    mox_error *(*semaphore_init)(mox__backend *backend, mox__semaphore *sem);
    void (*semaphore_fini)(mox__backend *backend, mox__semaphore *sem);
    /* Starts executing `sub` (see "Execution"). Never fails: problems are
     * reported through completion. */
    void (*execute)(mox__backend *backend, mox__submission *sub);
    /* The core is about to block on `sub`, an execution it prepared and has
     * not seen complete; it set sub->awaited first. `sub` may not have been
     * handed to execute yet (another thread drains the issue list: execute
     * then sees `awaited`), or may complete meanwhile: read only the
     * backend's own state of it, under the backend's lock. If the backend
     * holds it back to merge it with later ones (CUDA coalescing), launch
     * it now, so nothing waited for waits for a backend thread to start it.
     * NULL if the backend holds nothing back. */
    void (*flush)(mox__backend *backend, mox__submission *sub);
    /* The core is about to block on `sub` (after flush) and lends the
     * calling thread until wait->until_ns (mox__now_ns clock) or until
     * wait->stop(wait->ctx) says to give it back. If completing `sub`
     * calls no other execution's completion (it is alone in what the
     * backend launched; the op it resolves may be a shared op, whose
     * clones the core wakes, docs/async.md A2) and nothing earlier holds
     * its completion back, the backend may watch the device on this thread and, once
     * `sub` finished there, complete it here (mox__execution_complete is
     * called from inside) and return true - the waiting thread then needs
     * no hand-off from a backend thread. While it watches, its own threads
     * leave `sub` alone. Returns false at once when it cannot, or when the
     * time is up (unless wait->block_after) or stop said so. NULL if
     * unsupported. */
    bool (*complete_inline)(mox__backend *backend, mox__submission *sub,
                            const mox__inline_wait *wait);
    /* The core's waiting thread starts (on) or stops (off) watching for an
     * execution of this backend to complete, spinning rather than sleeping
     * (it offers itself to complete_inline meanwhile). Calls pair up, from
     * any number of threads. While any thread watches, the backend's own
     * threads do not sleep on the device either: a launch it cannot hand
     * to the waiter (one shared with other executions) is then seen done
     * within the backend's query pace, not after a thread wake-up. NULL if
     * the backend has no such threads. */
    void (*watch)(mox__backend *backend, bool on);
    /* Testing hook (src/core/testing.h): while held, executed work does not
     * start; releasing starts it. NULL if unsupported. */
    void (*set_hold)(mox__backend *backend, bool hold);
    /* How `backend` reaches the memory of `other` (another device of the
     * same backend): a MOX__PEER_* value. Codes: MOX_ERR_BACKEND. */
    mox_error *(*peer)(mox__backend *backend, mox__backend *other, uint32_t *link);
    /* Host memory of `bytes` (> 0) that this device's commands read in
     * place, for an upload's copy of the program's bytes ("Uploads from
     * device-readable host memory"); *device_address is where the device
     * sees it. NULL when there is none to give (the core then copies into
     * ordinary memory, as without the hook). Called on any thread with no
     * core lock held. host_free gives it back once nothing reads it any
     * more: when the execution completes (inside mox__execution_complete,
     * on whichever thread completes it) or with a dispatch that never ran,
     * with no core lock held; it takes only leaf locks and calls no driver.
     * Both NULL where commands read ordinary host memory (the CPU). */
    void *(*host_alloc)(mox__backend *backend, size_t bytes, uint64_t *device_address);
    void (*host_free)(mox__backend *backend, void *host);
} mox__backend_vtable;

struct mox__backend {
    const mox__backend_vtable *vt;
};

/* Backend constructors. A backend that is not compiled in is a NULL weak
 * symbol. Codes: MOX_ERR_DEVICE_UNAVAILABLE (no such device or driver),
 * MOX_ERR_OUT_OF_MEMORY, MOX_ERR_BACKEND. */
typedef mox_error *(*mox__backend_open_fn)(const mox__backend_config *config,
                                           mox__backend **out, mox__backend_info *info);
mox_error *mox__cpu_backend_open(const mox__backend_config *config, mox__backend **out,
                                 mox__backend_info *info) __attribute__((weak));
mox_error *mox__cuda_backend_open(const mox__backend_config *config, mox__backend **out,
                                  mox__backend_info *info) __attribute__((weak));
/* How many devices a backend has (0 when its driver or device is missing).
 * Codes: MOX_ERR_CONFIG (a bad setting, e.g. MOX_CPU_DEVICES),
 * MOX_ERR_BACKEND (the driver failed to answer). */
mox_error *mox__cpu_device_count(uint32_t *count) __attribute__((weak));
mox_error *mox__cuda_device_count(uint32_t *count) __attribute__((weak));

/* Implemented by the core; see "Completion". `error` (may be NULL) is taken
 * over. */
void mox__execution_complete(mox__submission *sub, mox_error *error);

/* Backends create errors with these (src/core/error.h has the full set). */
mox_error *mox__error_new(mox_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Backend worker threads call this once at start: the core then never joins
 * a backend's threads from one of them (a completion may drop the last
 * reference to a device). `name` (at most 15 characters, "mox-..." by
 * convention) becomes the thread's name as tools show it (top -H, gdb,
 * /proc/<pid>/task/<tid>/comm). */
void mox__thread_mark_runtime(const char *name);

/* A setting's text as a whole decimal number of at most `max`: false for
 * anything before the digits (a sign, a space), anything after them, or a
 * value beyond `max`. Every numeric MOX_* setting of the core and the
 * backends is read with it (MOX_CPU_FIBER_STACK: its digits, then a unit)
 * and named in its own MOX_ERR_CONFIG message. */
static inline bool mox__parse_setting_uint(const char *text, unsigned long max, uint32_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long n = strtoul(text, &end, 10);
    if (errno || *end || n > max)
        return false;
    *out = (uint32_t)n;
    return true;
}

#endif
