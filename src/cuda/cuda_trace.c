/* src/cuda/cuda_trace.c - device spans for the timeline trace (docs/trace.md)
 * while it is on: a launch is bracketed by two timing events on its
 * stream, and when it has finished each dispatch that ran gets the span
 * between them, converted to the trace's clock through an epoch event of
 * the device (recorded and waited for once, at its first traced launch,
 * with the host clock read right after). A launch runs many dispatches
 * (a graph, or merged submissions): they share its span. With tracing off
 * none of this runs: no event, no call. */
#include "cuda/cuda_internal.h"

#include "core/trace.h"

/* Launcher only (one at a time, handed over under dev->lock). */
static bool epoch_ready(mox__cuda_dev *dev, CUstream cs)
{
    const mox__cuda_api *api = dev->api;
    if (dev->trace_epoch)
        return true;
    CUevent e = NULL;
    if (api->cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
        return false;
    if (api->cuEventRecord(e, cs) != CUDA_SUCCESS || api->cuEventSynchronize(e) != CUDA_SUCCESS) {
        api->cuEventDestroy(e);
        return false;
    }
    dev->trace_epoch_ns = mox__trace_now();
    dev->trace_epoch = e;
    return true;
}

void mox__cuda_trace_begin(mox__cuda_dev *dev, mox__cuda_group *g, CUstream cs)
{
    const mox__cuda_api *api = dev->api;
    if (!epoch_ready(dev, cs))
        return; /* no span for it: the trace says nothing rather than something wrong */
    if (api->cuEventCreate(&g->trace_start, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
        g->trace_start = NULL;
        return;
    }
    if (api->cuEventCreate(&g->trace_end, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
        api->cuEventRecord(g->trace_start, cs) != CUDA_SUCCESS) {
        mox__cuda_trace_drop(dev, g);
    }
}

void mox__cuda_trace_end(mox__cuda_dev *dev, mox__cuda_group *g, CUstream cs)
{
    if (g->trace_start && dev->api->cuEventRecord(g->trace_end, cs) != CUDA_SUCCESS)
        mox__cuda_trace_drop(dev, g);
}

void mox__cuda_trace_drop(mox__cuda_dev *dev, mox__cuda_group *g)
{
    if (g->trace_start)
        dev->api->cuEventDestroy(g->trace_start);
    if (g->trace_end)
        dev->api->cuEventDestroy(g->trace_end);
    g->trace_start = g->trace_end = NULL;
}

static uint64_t on_trace_clock(const mox__cuda_dev *dev, float ms_after_epoch)
{
    double ns = (double)ms_after_epoch * 1e6;
    return ns > 0 ? dev->trace_epoch_ns + (uint64_t)ns : dev->trace_epoch_ns;
}

void mox__cuda_trace_finish(mox__cuda_dev *dev, mox__cuda_group *g)
{
    const mox__cuda_api *api = dev->api;
    float a = 0.0f, b = 0.0f;
    bool timed = g->trace_start && g->launched;
    if (timed)
        api->cuCtxSetCurrent(dev->ctx); /* the finishing thread's may be another device's */
    if (timed &&
        api->cuEventElapsedTime(&a, dev->trace_epoch, g->trace_start) == CUDA_SUCCESS &&
        api->cuEventElapsedTime(&b, dev->trace_epoch, g->trace_end) == CUDA_SUCCESS) {
        uint64_t start = on_trace_clock(dev, a), end = on_trace_clock(dev, b);
        if (end < start)
            end = start;
        for (uint32_t s = 0; s < g->nsubs; s++)
            for (uint32_t i = 0; i < g->subs[s]->count; i++) {
                const mox__dispatch *d = g->subs[s]->dispatches[i];
                if (d->state != MOX_DISPATCH_GATED) /* a gated one did not run */
                    mox__trace_device_span(g->subs[s], d, start, end);
            }
    }
    mox__cuda_trace_drop(dev, g);
}

void mox__cuda_trace_close(mox__cuda_dev *dev)
{
    if (dev->trace_epoch)
        dev->api->cuEventDestroy(dev->trace_epoch);
    dev->trace_epoch = NULL;
}
