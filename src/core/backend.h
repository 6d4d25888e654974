/* backend.h - the contract between the runtime core (src/core) and a backend
 * (src/cpu, src/cuda).
 *
 * The core owns everything users see: validation, ops, batches, ordering,
 * failure attribution, capacity, module preparation. A backend only owns
 * device memory, loaded module code, and the execution of submissions. The
 * core validates every launch before a backend sees it, so CPU and CUDA
 * reject bad launches identically; backends stay small.
 *
 * Lifecycle
 *   open -> buffer_alloc/free, buffer_upload, module_load/unload, submit ...
 *   -> destroy (only once no submission is in flight and every buffer and
 *   module is freed).
 *
 * Threads
 *   Every entry point may be called from any thread. `submit` is called with
 *   the device's submission lock held, in submission order (the order that
 *   defines cross-batch ordering), so it must be quick and never block on
 *   device work. Other entry points are called without core locks.
 *
 * Submissions (one batch = one submission)
 *   A submission is `count` dispatches. Dispatch i may start only after
 *     (a) every dispatch in preds[d->pred_first .. +pred_count) of the same
 *         submission finished (intra-batch edges computed by the core from
 *         buffer accesses: read-after-write, write-after-read,
 *         write-after-write; indices are < i), and
 *     (b) every submission in waits[0 .. wait_count) finished executing
 *         (earlier in-flight submissions that touch the same buffers; they
 *         were all passed to submit before this one and are kept alive by
 *         the core until this submission completes).
 *   Dispatches without a path between them may run concurrently.
 *
 *   Failure gating (rule A9). A dispatch ends in one of three states:
 *     MOX_DISPATCH_OK      it ran (a transfer: it copied);
 *     MOX_DISPATCH_FAILED  it ran and called mox_fail(code) (fail_code = the
 *                          first code), or the backend detected a fault in it;
 *     MOX_DISPATCH_GATED   it did not run because a predecessor (a) is FAILED
 *                          or GATED, or because one of its gates is.
 *   gates[d->gate_first .. +gate_count) names dispatches of earlier, still
 *   unfinished submissions (always members of `waits`) that last wrote a
 *   buffer this dispatch reads or writes: if such a dispatch ends FAILED or
 *   GATED, this one is GATED (the failure is inherited across batches).
 *   Transfers (MOX__CMD_DOWNLOAD/UPLOAD) are never gated: host access
 *   ignores failures of earlier work. Independent dispatches of a batch in
 *   which something failed still run. The core works out which failure
 *   caused a GATED state, builds the errors and picks the batch's result;
 *   the backend only reports states.
 *
 * Completion
 *   When every dispatch has a final state, the backend stores `state` and
 *   `fail_code` in each dispatch and calls mox__submission_complete(sub,
 *   MOX_OK, NULL) exactly once, from one of its own threads (never from
 *   inside submit: the core takes the submission lock there). After that
 *   call it must not touch `sub` again. A device-wide fault (CUDA sticky
 *   error) completes every in-flight submission with MOX_ERR_DEVICE_LOST and
 *   an error saying why (states of dispatches that did not finish: GATED);
 *   the core then reports the device as lost and fails new submissions
 *   itself. Every submission must be completed, even when the device is
 *   lost: a waiter must never hang.
 *
 * Memory shape of kernel arguments
 *   d->params[i] points to the i-th argument: for a buffer, to a `void *`
 *   holding the buffer's address (as returned by buffer_alloc); for a value,
 *   to its bytes (16-byte aligned). This is both kernel_abi.h's CPU argument
 *   vector and cuLaunchKernel's kernelParams (minus the mox_gate the CUDA
 *   entries take first). Pointers stay valid until completion.
 */
#ifndef MOX_CORE_BACKEND_H
#define MOX_CORE_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mox/kernel_abi.h>
#include <mox/launch.h>
#include <mox/status.h>
#include <mox/types.h>

#include "artifact/abi.h"      /* mox_abi */
#include "artifact/manifest.h" /* mox_artifact_file */

typedef struct mox__backend mox__backend;
typedef struct mox__submission mox__submission;
typedef struct mox__dispatch mox__dispatch;
typedef struct mox_buffer mox_buffer;
typedef struct mox__devmod mox__devmod;

typedef enum mox__cmd_kind {
    MOX__CMD_KERNEL = 0,   /* run a kernel over a non-empty grid */
    MOX__CMD_DOWNLOAD = 1, /* copy buffer bytes [offset, offset+bytes) to host */
    MOX__CMD_UPLOAD = 2    /* copy host bytes into buffer [offset, offset+bytes) */
} mox__cmd_kind;

/* A dispatch of an earlier in-flight submission whose failure gates. */
typedef struct mox__gate {
    const mox__submission *sub;
    uint32_t dispatch;
} mox__gate;

struct mox__dispatch {
    /* ---- set by the core, read by the backend ---- */
    mox__cmd_kind kind;
    uint32_t index;          /* position in its submission */
    /* MOX__CMD_KERNEL */
    void *module;            /* the backend's handle from module_load */
    uint32_t kernel;         /* kernel index in the module (ABI order) */
    const char *kernel_name;
    uint32_t kernel_features; /* MOX_KFEAT_* from the ABI */
    mox_launch_config config; /* validated, non-empty grid */
    uint32_t param_count;
    void *const *params;     /* see "Memory shape" above */
    /* MOX__CMD_DOWNLOAD / MOX__CMD_UPLOAD */
    void *buffer;            /* backend buffer handle */
    void *address;           /* its address */
    uint64_t offset, bytes;
    void *host;              /* destination (download) or source (upload) */
    /* graph, indices into the submission's arrays */
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
    void *storage;           /* allocation holding this dispatch */
};

struct mox__submission {
    /* ---- set by the core, read by the backend ---- */
    uint32_t count;
    mox__dispatch *const *dispatches;
    const uint32_t *preds;
    const uint32_t *succs;
    const mox__gate *gates;
    mox__submission *const *waits;
    uint32_t wait_count;
    uint64_t serial;         /* 1, 2, ... per device, in submission order */
    /* ---- backend scratch: info.submission_state_size bytes, zeroed, 64-aligned ---- */
    void *be;
    /* The core's private state follows: the core embeds this struct first in
     * its own submission object. */
};

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
    uint64_t max_buffer_bytes;   /* largest single buffer */
    uint32_t warp_size;
    uint32_t features;           /* MOX_FEAT_* the device supports */
    mox_artifact_file module_file; /* MOX_FILE_CPU_SO or MOX_FILE_FATBIN */
    size_t submission_state_size; /* bytes of sub->be the backend wants */
    size_t dispatch_state_size;   /* bytes of d->be the backend wants */
} mox__backend_info;

typedef struct mox__backend_config {
    uint32_t cpu_threads;        /* 0 = number of cores */
    uint64_t context_id;         /* the device's process-unique id */
} mox__backend_config;

typedef struct mox__backend_vtable {
    /* Frees the backend; nothing is in flight or allocated any more. */
    void (*destroy)(mox__backend *backend);
    /* Zero-filled device memory of `bytes` (> 0, <= max_buffer_bytes).
     * *handle identifies it to the backend; *address is what kernels get.
     * Codes: MOX_ERR_ALLOCATION_FAILED (with *error), MOX_ERR_DEVICE_LOST. */
    mox_status (*buffer_alloc)(mox__backend *backend, uint64_t bytes, void **handle,
                               void **address, mox_error **error);
    void (*buffer_free)(mox__backend *backend, void *handle);
    /* Synchronous copy into a buffer no submission touches yet (creation). */
    mox_status (*buffer_upload)(mox__backend *backend, void *handle, uint64_t offset,
                                const void *src, uint64_t bytes, mox_error **error);
    /* Loads module code. Checks the code against image->abi (kernel count and
     * names, interface version). Codes: MOX_ERR_MODULE_LOAD,
     * MOX_ERR_KERNEL_NOT_FOUND, MOX_ERR_UNSUPPORTED_DEVICE, with *error. */
    mox_status (*module_load)(mox__backend *backend, const mox__module_image *image,
                              void **module, mox_error **error);
    void (*module_unload)(mox__backend *backend, void *module);
    /* Starts executing `sub` (see the contract above). Never fails: problems
     * are reported through completion. */
    void (*submit)(mox__backend *backend, mox__submission *sub);
    /* Testing hook (src/core/testing.h): while held, submitted work does not
     * start executing; releasing starts it. NULL if unsupported. */
    void (*set_hold)(mox__backend *backend, bool hold);
} mox__backend_vtable;

struct mox__backend {
    const mox__backend_vtable *vt;
};

/* Backend constructors. A backend that is not compiled in is a NULL weak
 * symbol. Codes: MOX_ERR_DEVICE_UNAVAILABLE (no such device or driver),
 * MOX_ERR_OUT_OF_MEMORY, MOX_ERR_BACKEND; *error says why. */
typedef mox_status (*mox__backend_open_fn)(const mox__backend_config *config,
                                           mox__backend **out, mox__backend_info *info,
                                           mox_error **error);
mox_status mox__cpu_backend_open(const mox__backend_config *config, mox__backend **out,
                                 mox__backend_info *info, mox_error **error)
    __attribute__((weak));
mox_status mox__cuda_backend_open(const mox__backend_config *config, mox__backend **out,
                                  mox__backend_info *info, mox_error **error)
    __attribute__((weak));

/* Implemented by the core; see "Completion". `error` (may be NULL) is taken
 * over. `status` is MOX_OK or MOX_ERR_DEVICE_LOST / MOX_ERR_BACKEND. */
void mox__submission_complete(mox__submission *sub, mox_status status, mox_error *error);

/* Backends create errors with these (src/core/error.h has the full set). */
mox_error *mox__error_new(mox_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Backend worker threads call this once at start: the core then never joins
 * a backend's threads from one of them (a completion may drop the last
 * reference to a device). */
void mox__thread_mark_runtime(void);

#endif
