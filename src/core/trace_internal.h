/* trace_internal.h - what trace.c (the file) gives trace_hooks.c (the
 * events): building an event with its pid and tid, naming objects, and
 * appending it to the file. */
#ifndef MOX_CORE_TRACE_INTERNAL_H
#define MOX_CORE_TRACE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

/* {"ph": ph, "cat": cat, "name": name, "pid": ..., "tid": ...}; NULL on out
 * of memory (mox__trace_emit ignores NULL). */
json_t *mox__trace_event(const char *ph, const char *cat, const char *name);
/* Adds "ts" (at_ns on mox__trace_now's clock), appends the event if a
 * trace is still being written, and releases it. */
void mox__trace_emit(json_t *ev, uint64_t at_ns);

/* An event of an async span (op track, batch), by its track's key: a
 * BEGIN is recorded (and the key kept), a DURING (mark) or END only when
 * this trace recorded the span's begin; an END forgets the key. So a
 * trace started while earlier work is in flight holds none of its
 * remains (docs/trace.md). */
typedef enum mox__span_step { MOX__SPAN_BEGIN, MOX__SPAN_DURING, MOX__SPAN_END } mox__span_step;
void mox__trace_emit_on(json_t *ev, uint64_t at_ns, uint64_t track, mox__span_step step);
/* A span's begin and end at once (a dispatch on the device), within the
 * span of `track` (its batch's): only when this trace recorded that
 * span's begin (the backends report a dispatch before its batch ends). */
void mox__trace_emit_pair(json_t *b, uint64_t b_ns, json_t *e, uint64_t e_ns, uint64_t track);
/* The keys of tracks: an op's (its address), a batch's (its context and
 * serial, the top bit set). */
static inline uint64_t mox__trace_op_key(const void *op) { return (uint64_t)(uintptr_t)op; }
static inline uint64_t mox__trace_batch_key(uint64_t context, uint64_t serial)
{
    return (1ull << 63) | (context << 44) | (serial & ((1ull << 44) - 1u));
}

/* The set of began spans (trace_spans.c); the caller holds the trace lock. */
typedef struct mox__trace_spans {
    uint64_t *keys; /* 0: empty slot */
    size_t cap, count;
} mox__trace_spans;
bool mox__trace_spans_add(mox__trace_spans *s, uint64_t key); /* false: out of memory */
bool mox__trace_spans_has(const mox__trace_spans *s, uint64_t key);
void mox__trace_spans_remove(mox__trace_spans *s, uint64_t key);
void mox__trace_spans_clear(mox__trace_spans *s);

/* Whether the JSON file is being written (hooks skip building events
 * otherwise: the trace may be on for NVTX alone). */
extern atomic_bool mox__trace_file_active;

/* ---- NVTX (trace_nvtx.c, where the NVTX 3 headers were found) ---- */
#ifdef MOX_HAVE_NVTX3
/* At the first device open: on when a tool is injected (nsys). */
bool mox__trace_nvtx_start(void);
bool mox__trace_nvtx_on(void);
void mox__trace_nvtx_mark(const char *text);
void mox__trace_nvtx_batch_begin(const mox__submission *sub, const char *label);
void mox__trace_nvtx_batch_end(const mox__submission *sub);
#else
static inline bool mox__trace_nvtx_start(void) { return false; }
static inline bool mox__trace_nvtx_on(void) { return false; }
static inline void mox__trace_nvtx_mark(const char *text) { (void)text; }
static inline void mox__trace_nvtx_batch_begin(const mox__submission *sub, const char *label)
{
    (void)sub;
    (void)label;
}
static inline void mox__trace_nvtx_batch_end(const mox__submission *sub) { (void)sub; }
#endif

/* "ok", "failed" or "gated" (a dispatch's final state). */
const char *mox__trace_state_name(uint32_t state);

/* A batch's name in traces, "<context>.<serial>" ("2.1": batch 1 of device
 * context 2): serials restart at 1 in every device context, so the pair is
 * what is unique in the process. */
#define MOX__TRACE_BATCH_SIZE 48
void mox__trace_batch_name(char buf[MOX__TRACE_BATCH_SIZE], const mox__submission *sub);

#define MOX__TRACE_ID_SIZE 24
/* "0x..." for an object. */
void mox__trace_id(char buf[MOX__TRACE_ID_SIZE], const void *p);

#endif
