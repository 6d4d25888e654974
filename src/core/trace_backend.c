/* trace_backend.c - the hook backends call (trace.h): a dispatch's execution
 * on the device, an async span (cat "device", id
 * "batch-<context>.<serial>.<index>", named by its kernel) and, under an
 * NVTX tool, a mark; and the name of a batch, which the core's hooks use
 * too. It reads only what the HAL shows a backend, so a backend linked
 * without the runtime core (the HAL contract suite) links it with trace.c
 * alone. */
#include <stdio.h>

#include "hal/hal.h"
#include "trace_internal.h"

const char *mox__trace_state_name(uint32_t state)
{
    return state == MOX_DISPATCH_OK ? "ok" : state == MOX_DISPATCH_FAILED ? "failed" : "gated";
}

void mox__trace_batch_name(char buf[MOX__TRACE_BATCH_SIZE], const mox__submission *sub)
{
    snprintf(buf, MOX__TRACE_BATCH_SIZE, "%llu.%llu", (unsigned long long)sub->context_id,
             (unsigned long long)sub->serial);
}

void mox__trace_device_span(const mox__submission *sub, const mox__dispatch *d, uint64_t start_ns,
                            uint64_t end_ns)
{
    char batch[MOX__TRACE_BATCH_SIZE];
    mox__trace_batch_name(batch, sub);
    if (mox__trace_nvtx_on()) {
        char text[200];
        snprintf(text, sizeof text, "%s ran (batch #%s, %.1f us)", d->kernel_name, batch,
                 (double)(end_ns - start_ns) / 1000.0);
        mox__trace_nvtx_mark(text);
    }
    if (!atomic_load_explicit(&mox__trace_file_active, memory_order_relaxed))
        return;
    char id[80];
    snprintf(id, sizeof id, "batch-%s.%u", batch, d->index);
    json_t *b = mox__trace_event("b", "device", d->kernel_name);
    json_object_set_new(b, "id", json_string(id));
    json_object_set_new(b, "args", json_pack("{s:I, s:I, s:I, s:s}", "context", (json_int_t)sub->context_id,
                                             "serial", (json_int_t)sub->serial, "dispatch", (json_int_t)d->index,
                                             "state", mox__trace_state_name(d->state)));
    json_t *e = mox__trace_event("e", "device", d->kernel_name);
    json_object_set_new(e, "id", json_string(id));
    /* Not one of a batch that began before the trace. */
    mox__trace_emit_pair(b, start_ns, e, end_ns, mox__trace_batch_key(sub->context_id, sub->serial));
}
