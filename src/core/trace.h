/* trace.h - the runtime's internal tracing hooks (docs/trace.md). Each
 * hook site is written
 *     if (mox__trace_on()) mox__trace_xxx(...);
 * so that, while no trace is being written, it costs one relaxed load and a
 * branch predicted not taken. The hooks themselves (trace.c) build one
 * trace event each and append it to the file under the trace lock, a leaf
 * lock: nothing else is ever taken while it is held, so hooks may be called
 * with any core or backend lock held. Objects are named by their address
 * ("0x..."), batches by their device context and submission serial
 * ("<context>.<serial>": serials restart in every context). */
#ifndef MOX_CORE_TRACE_H
#define MOX_CORE_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mox/status.h>

typedef struct mox_op mox_op;
typedef struct mox__sub mox__sub;
typedef struct mox__submission mox__submission;
typedef struct mox__dispatch mox__dispatch;
typedef struct mox__waker_cell mox__waker_cell;

extern atomic_bool mox__trace_active;

static inline bool mox__trace_on(void)
{
    return __builtin_expect(atomic_load_explicit(&mox__trace_active, memory_order_relaxed), 0);
}

/* CLOCK_MONOTONIC in nanoseconds: the clock of every timestamp a hook gets. */
uint64_t mox__trace_now(void);

/* Names the calling thread in traces (a static string; cheap, call it
 * whether or not a trace is on). */
void mox__trace_thread_name(const char *name);

/* MOX_TRACE: the first device open starts the trace it names (once per
 * process). Codes: MOX_ERR_CONFIG (the file cannot be created). */
mox_status mox__trace_env_start(void);

/* ---- ops (core) ---- */
void mox__trace_op_new(const mox_op *op);           /* allocated: its timeline begins */
void mox__trace_op_launch(const mox_op *op, const mox__dispatch *d); /* kernel, buffers */
void mox__trace_op_pending(const mox_op *op, const char *why);      /* PENDING and why */
void mox__trace_op_resolved(const mox_op *op);      /* its result is there */
void mox__trace_op_end(const mox_op *op);           /* freed (dropped, or moved into a batch) */

/* ---- batches (core) ---- */
void mox__trace_record(const mox__sub *sub, const mox__dispatch *d); /* pushed into a batch */
/* The op's first poll submits (or queues) its batch `sub`. */
void mox__trace_op_submit(const mox_op *op, const mox__sub *sub);
/* Handed to the backend (no lock held), after preparation. */
void mox__trace_submit(const mox__submission *sub);
void mox__trace_complete(const mox__submission *sub, mox_status status);
/* A module's preparation on the worker, [start_ns, now). */
void mox__trace_prepare(const char *module, const char *dir, mox_status status, uint64_t start_ns);
/* A waker is about to be called for `cell` (an op's). */
void mox__trace_wake(const mox__waker_cell *cell);

/* ---- backends ---- */
/* Dispatch `d` of `sub` executed on the device during [start_ns, end_ns)
 * (mox__trace_now's clock). The CPU backend measures it on its workers; a
 * GPU backend converts its device timestamps (events) to that clock. */
void mox__trace_device_span(const mox__submission *sub, const mox__dispatch *d, uint64_t start_ns,
                            uint64_t end_ns);

#endif
