/* cts.h - the HAL contract suite's harness (tests/hal/cts.c): it plays the
 * core for one backend, opened through its constructor and driven through
 * its vtable only (src/hal/hal.h): buffers, the halk module loaded from its
 * artifact, command buffers built by hand, queues with their semaphores,
 * executions and their completions. The backend comes from
 * MOX_HAL_CTS_BACKEND (cpu or cuda); cuda exits 77 without a device. A
 * second device of the same backend (ordinal 1) serves the cases across
 * devices; they are skipped where there is none. */
#ifndef MOX_TESTS_HAL_CTS_H
#define MOX_TESTS_HAL_CTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hal/hal.h"

#define CTS_SKIP 77
#define CTS_MAX_CMDS 8
#define CTS_MAX_QUEUES 16

enum { K_FILL = 0, K_ADD, K_FAIL, K_SLOW }; /* halk's kernels, ABI order */

typedef struct cts {
    mox__backend *be;
    mox__backend_info info;
    void *module;
    mox__semaphore sems[CTS_MAX_QUEUES];
    uint64_t values[CTS_MAX_QUEUES]; /* last value handed out per queue */
    uint64_t serial;
} cts;

/* One command buffer and its completion record. */
typedef struct cts_cb {
    mox__submission pub;
    void *be;                        /* backend scratch (info.submission_state_size) */
    mox__dispatch d[CTS_MAX_CMDS];
    void *dbe[CTS_MAX_CMDS];
    mox__dispatch *dptr[CTS_MAX_CMDS];
    void *params[CTS_MAX_CMDS][6];
    _Alignas(16) uint64_t store[CTS_MAX_CMDS][6];
    union {                          /* a copy's or fill's operands (hal.h) */
        mox__copy_operands copy;
        mox__fill_operands fill;
    } operands[CTS_MAX_CMDS];
    uint32_t preds[32], succs[32], npreds;
    mox__gate gates[8];
    uint32_t ngates;
    mox__sem_point waits[4];
    pthread_mutex_t m;
    pthread_cond_t c;
    bool done;
    mox_status status;               /* of the error it completed with */
    const mox_error *error;          /* which one (compared, never dereferenced) */
    char message[256];
    uint64_t order;                  /* its place among completions, from 1 */
    uint64_t sem_value_at_completion; /* its queue's semaphore then */
} cts_cb;

void cts_open(cts *t);
/* Device `ordinal` of the backend; false (nothing opened) if it has none. */
bool cts_open_ordinal(cts *t, int ordinal);
void cts_close(cts *t);
/* Device memory of n floats, filled with `value`; its address. */
void *cts_buffer(cts *t, uint32_t n, float value);
void cts_free(cts *t, void *address);
/* Reads n floats back through a download command (execution on queue 0). */
void cts_read(cts *t, void *address, float *out, uint32_t n);

void cts_cb_init(cts *t, cts_cb *cb);
void cts_cb_fini(cts_cb *cb);
/* Appends a dispatch of kernel k over n threads (blocks of 64); returns its
 * index. Arguments follow with cts_ptr/cts_f32/cts_u32 in ABI order. */
uint32_t cts_dispatch(cts *t, cts_cb *cb, uint32_t kernel, uint32_t n);
void cts_ptr(cts_cb *cb, void *address);
void cts_f32(cts_cb *cb, float v);
void cts_u32(cts_cb *cb, uint32_t v);
/* The last command starts after command `from` of the same buffer. */
void cts_pred(cts_cb *cb, uint32_t from);
/* The last command is gated on command `i` of the earlier `cb`. */
void cts_gate(cts_cb *cb, const cts_cb *earlier, uint32_t i);
/* Appends a download of `bytes` from `address` to `host`. */
uint32_t cts_download(cts_cb *cb, void *address, void *host, uint64_t bytes);
/* Appends a copy of `bytes` from `src` (a buffer of `from`, this device or
 * another of the backend) to `dst`. */
uint32_t cts_copy(cts_cb *cb, const cts *from, void *src, void *dst, uint64_t bytes);
/* A FILL of dst[0, bytes) with the `size` bytes at `pattern` (kept by the
 * caller until the execution completed). */
uint32_t cts_fill(cts_cb *cb, void *dst, uint64_t bytes, const void *pattern, uint32_t size);
/* An UPLOAD of `bytes` from `src` into dst, as the core makes them: the
 * bytes copied into memory the backend lends (host_alloc, operands laid
 * out as a copy's) where it has the hook, else into ordinary memory.
 * *lent is that memory, to give back with cts_upload_done after the wait. */
uint32_t cts_upload(cts *t, cts_cb *cb, void *dst, const void *src, uint64_t bytes, void **lent);
void cts_upload_done(cts *t, void *lent);
/* Adds a wait point: `earlier`'s signal (call after executing `earlier`). */
void cts_wait_for(cts_cb *cb, const cts_cb *earlier);
/* Executes on `queue` (successors computed here, signal = next value). */
void cts_execute(cts *t, cts_cb *cb, uint32_t queue);
/* Blocks until completion (aborts after 60 s rather than hang). */
void cts_wait(cts_cb *cb);

#endif
