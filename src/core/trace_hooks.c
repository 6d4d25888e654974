/* trace_hooks.c - the events of the timeline (docs/trace.md). Every op is
 * an async track (cat "op", id its address) from allocation to free, with
 * instants for its launch, why it is pending, its wakes and its result;
 * recording and submission are instants on the calling thread; every batch
 * is an async span (cat "batch", id "batch-<context>.<serial>": serials
 * restart in every device context) from submission to completion; every
 * dispatch's execution is an async span (cat "device", named by its
 * kernel: trace_backend.c); module preparation is a complete event ("X")
 * on the worker thread. Called only while a trace is on
 * (trace.h). */
#include <stddef.h>
#include <stdio.h>

#include "op.h"
#include "submission.h"
#include "trace_internal.h"

static const char *op_kind_name(mox__op_kind kind)
{
    switch (kind) {
    case MOX__OP_READY: return "ready";
    case MOX__OP_LAUNCH: return "launch";
    case MOX__OP_SUBMIT: return "batch";
    case MOX__OP_THEN: return "then";
    case MOX__OP_MAP: return "map";
    case MOX__OP_CLONE: return "share";
    }
    return "op";
}

static const char *access_name(mox_access a)
{
    return a == MOX_ACCESS_READ ? "read" : a == MOX_ACCESS_WRITE ? "write" : "atomic";
}

/* [{"id": "0x...", "access": "read"}, ...] of a dispatch's buffers. */
static json_t *buffers_of(const mox__dispatch *d)
{
    json_t *list = json_array();
    for (uint32_t a = 0; list && a < d->arg_count; a++) {
        if (!d->args[a].buffer)
            continue;
        char id[MOX__TRACE_ID_SIZE];
        mox__trace_id(id, d->args[a].buffer);
        json_array_append_new(list, json_pack("{s:s, s:s}", "id", id, "access", access_name(d->args[a].access)));
    }
    return list;
}

static json_t *dim3(mox_dim3 v) { return json_pack("[I, I, I]", (json_int_t)v.x, (json_int_t)v.y, (json_int_t)v.z); }

static bool file_on(void) { return atomic_load_explicit(&mox__trace_file_active, memory_order_relaxed); }

/* An event on the op's async track. */
static void op_event(const mox_op *op, const char *ph, const char *name, json_t *args)
{
    if (!file_on()) {
        json_decref(args);
        return;
    }
    char id[MOX__TRACE_ID_SIZE];
    mox__trace_id(id, op);
    json_t *ev = mox__trace_event(ph, "op", name);
    if (ev) {
        json_object_set_new(ev, "id", json_string(id));
        if (args)
            json_object_set(ev, "args", args);
    }
    json_decref(args);
    mox__span_step step = ph[0] == 'b' ? MOX__SPAN_BEGIN : ph[0] == 'e' ? MOX__SPAN_END : MOX__SPAN_DURING;
    mox__trace_emit_on(ev, mox__trace_now(), mox__trace_op_key(op), step);
}

void mox__trace_op_new(const mox_op *op)
{
    op_event(op, "b", "op", json_pack("{s:s}", "kind", op_kind_name(op->kind)));
}

void mox__trace_op_launch(const mox_op *op, const mox__dispatch *d)
{
    char name[160];
    snprintf(name, sizeof name, "launch %s", d->kernel_name);
    if (mox__trace_nvtx_on())
        mox__trace_nvtx_mark(name);
    op_event(op, "n", name,
             json_pack("{s:s, s:o, s:o, s:o}", "kernel", d->kernel_name, "grid", dim3(d->config.grid), "block",
                       dim3(d->config.block), "buffers", buffers_of(d)));
}

void mox__trace_op_pending(const mox_op *op, const char *why)
{
    char name[160];
    snprintf(name, sizeof name, "pending: %s", why);
    op_event(op, "n", name, NULL);
}

void mox__trace_op_resolved(const mox_op *op)
{
    const mox_result *r = mox_op_result(op);
    op_event(op, "n", "resolved", json_pack("{s:s}", "status", mox_status_name(mox_result_status(r))));
}

void mox__trace_op_end(const mox_op *op) { op_event(op, "e", "op", NULL); }

void mox__trace_wake(const mox__waker_cell *cell)
{
    op_event((const mox_op *)(const void *)((const char *)cell - offsetof(mox_op, cell)), "n", "wake", NULL);
}

void mox__trace_record(const mox__sub *sub, const mox__dispatch *d)
{
    if (!file_on())
        return;
    char name[160], id[MOX__TRACE_ID_SIZE];
    snprintf(name, sizeof name, "record %s", d->kernel_name);
    mox__trace_id(id, sub);
    json_t *after = json_array();
    for (uint32_t p = d->pred_first; after && p < d->pred_first + d->pred_count; p++)
        json_array_append_new(after, json_integer(sub->preds[p]));
    json_t *ev = mox__trace_event("i", "batch", name);
    if (ev)
        json_object_set_new(ev, "s", json_string("t"));
    json_object_set_new(ev, "args",
                        json_pack("{s:s, s:I, s:s, s:o, s:o}", "batch", id, "dispatch", (json_int_t)d->index, "kernel",
                                  d->kernel_name, "buffers", buffers_of(d), "after", after));
    mox__trace_emit(ev, mox__trace_now());
}

/* "batch-<context>.<serial>": the id of the batch's span. */
static void batch_id(char *buf, size_t size, const mox__submission *sub)
{
    char batch[MOX__TRACE_BATCH_SIZE];
    mox__trace_batch_name(batch, sub);
    snprintf(buf, size, "batch-%s", batch);
}

/* "batch #C.N: k1, k2, ..." (shortened past ~200 characters). */
static void nvtx_batch_begin(const mox__submission *sub)
{
    char label[256], batch[MOX__TRACE_BATCH_SIZE];
    mox__trace_batch_name(batch, sub);
    int n = snprintf(label, sizeof label, "batch #%s:", batch);
    for (uint32_t i = 0; i < sub->count && n > 0 && (size_t)n < sizeof label - 64; i++)
        n += snprintf(label + n, sizeof label - (size_t)n, "%s %s", i ? "," : "", sub->dispatches[i]->kernel_name);
    mox__trace_nvtx_batch_begin(sub, label);
}

void mox__trace_op_submit(const mox_op *op, const mox__sub *sub)
{
    char id[MOX__TRACE_ID_SIZE];
    mox__trace_id(id, sub);
    op_event(op, "n", "submit", json_pack("{s:s}", "batch", id));
}

void mox__trace_submit(const mox__submission *sub)
{
    if (mox__trace_nvtx_on())
        nvtx_batch_begin(sub);
    if (!file_on())
        return;
    char name[80], bid[64], sid[MOX__TRACE_ID_SIZE], batch[MOX__TRACE_BATCH_SIZE];
    mox__trace_batch_name(batch, sub);
    snprintf(name, sizeof name, "submit batch #%s", batch);
    batch_id(bid, sizeof bid, sub);
    mox__trace_id(sid, sub);
    const mox__sub *core = (const mox__sub *)(const void *)sub; /* embeds it first */
    json_t *kernels = json_array(), *waits = json_array();
    for (uint32_t i = 0; kernels && i < sub->count; i++)
        json_array_append_new(kernels, json_string(sub->dispatches[i]->kernel_name));
    for (uint32_t w = 0; waits && w < core->nwaits; w++) { /* batches of any device: by span id */
        char wid[64];
        batch_id(wid, sizeof wid, &core->waits[w]->pub);
        json_array_append_new(waits, json_string(wid));
    }
    uint64_t now = mox__trace_now();
    json_t *args = json_pack("{s:I, s:I, s:s, s:s, s:I, s:o, s:o}", "context", (json_int_t)sub->context_id, "serial",
                             (json_int_t)sub->serial, "device", core->device->info.name, "batch", sid, "queue",
                             (json_int_t)sub->queue, "dispatches", kernels, "after_batches", waits);
    json_t *ev = mox__trace_event("i", "batch", name);
    if (ev)
        json_object_set_new(ev, "s", json_string("t"));
    json_object_set(ev, "args", args);
    mox__trace_emit(ev, now);
    snprintf(name, sizeof name, "batch #%s", batch);
    ev = mox__trace_event("b", "batch", name);
    json_object_set_new(ev, "id", json_string(bid));
    json_object_set(ev, "args", args);
    mox__trace_emit_on(ev, now, mox__trace_batch_key(sub->context_id, sub->serial), MOX__SPAN_BEGIN);
    json_decref(args);
}

void mox__trace_complete(const mox__submission *sub, mox_status status)
{
    if (mox__trace_nvtx_on())
        mox__trace_nvtx_batch_end(sub);
    if (!file_on())
        return;
    char name[80], bid[64], batch[MOX__TRACE_BATCH_SIZE];
    mox__trace_batch_name(batch, sub);
    batch_id(bid, sizeof bid, sub);
    json_t *states = json_array();
    for (uint32_t i = 0; states && i < sub->count; i++)
        json_array_append_new(states, json_string(mox__trace_state_name(sub->dispatches[i]->state)));
    snprintf(name, sizeof name, "batch #%s", batch);
    json_t *ev = mox__trace_event("e", "batch", name);
    json_object_set_new(ev, "id", json_string(bid));
    json_object_set_new(ev, "args", json_pack("{s:s, s:o}", "status", mox_status_name(status), "states", states));
    mox__trace_emit_on(ev, mox__trace_now(), mox__trace_batch_key(sub->context_id, sub->serial), MOX__SPAN_END);
}

void mox__trace_prepare(const char *module, const char *dir, mox_status status, uint64_t start_ns)
{
    char name[160];
    snprintf(name, sizeof name, "prepare module %s", module);
    if (mox__trace_nvtx_on())
        mox__trace_nvtx_mark(name);
    if (!file_on())
        return;
    uint64_t now = mox__trace_now();
    json_t *ev = mox__trace_event("X", "module", name);
    json_object_set_new(ev, "dur", json_real((double)(now - start_ns) / 1000.0));
    json_object_set_new(ev, "args", json_pack("{s:s, s:s}", "artifact", dir ? dir : "", "status",
                                              mox_status_name(status)));
    mox__trace_emit(ev, start_ns);
}
