/* src/cuda/cuda_event.c - the device's event pools (a launch's event,
 * spin or blocking-sync: docs/cuda-backend.md, "Launch events") and
 * sleeping on a launch. */
#include "cuda/cuda_internal.h"

/* ---- events: blocking-sync (a thread can sleep on one) or spin (no interrupt) ----
 * The pools are guarded by dev->lock: a launch takes its event while it is
 * built and its completion gives it back while it is published, both under
 * that lock already. Each pool's array has room for every event of its
 * kind ever made, so giving one back never allocates. */

bool mox__cuda_event_take(mox__cuda_dev *dev, bool spin, CUevent *out)
{
    if (dev->free_event_count[spin] == 0)
        return false;
    *out = dev->free_events[spin][--dev->free_event_count[spin]];
    return true;
}

void mox__cuda_event_keep(mox__cuda_dev *dev, bool spin, CUevent event)
{
    dev->free_events[spin][dev->free_event_count[spin]++] = event;
}

mox_status mox__cuda_event_get(mox__cuda_dev *dev, bool spin, CUevent *out)
{
    mox__lock(&dev->lock);
    bool pooled = mox__cuda_event_take(dev, spin, out);
    mox__unlock(&dev->lock);
    if (pooled)
        return MOX_OK;
    unsigned flags = CU_EVENT_DISABLE_TIMING | (spin ? 0u : (unsigned)CU_EVENT_BLOCKING_SYNC);
    CUresult r = dev->api->cuEventCreate(out, flags);
    if (r != CUDA_SUCCESS) {
        *out = NULL;
        return mox__cuda_fail(dev->api, r, "cuEventCreate", NULL);
    }
    mox__lock(&dev->lock);
    bool room = dev->events_made[spin] < dev->free_event_cap[spin];
    if (!room) {
        uint32_t cap = dev->free_event_cap[spin] ? 2u * dev->free_event_cap[spin] : 64u;
        CUevent *n = mox__realloc(dev->free_events[spin], cap * sizeof *n);
        if (n) {
            dev->free_events[spin] = n;
            dev->free_event_cap[spin] = cap;
            room = true;
        }
    }
    dev->events_made[spin] += room;
    mox__unlock(&dev->lock);
    if (room)
        return MOX_OK;
    dev->api->cuEventDestroy(*out);
    *out = NULL;
    return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory for a CUDA event");
}

void mox__cuda_event_put(mox__cuda_dev *dev, bool spin, CUevent event)
{
    mox__lock(&dev->lock);
    mox__cuda_event_keep(dev, spin, event);
    mox__unlock(&dev->lock);
}

bool mox__cuda_event_spin(const mox__cuda_dev *dev)
{
    return dev->events == MOX__CUDA_EVENTS_SPIN &&
           !atomic_load_explicit(&dev->sleepy, memory_order_relaxed);
}

bool mox__cuda_event_sleep(mox__cuda_dev *dev, mox__cuda_group *g, CUresult *r)
{
    if (!g->event_spin) {
        *r = dev->api->cuEventSynchronize(g->event);
        return true;
    }
    CUevent wake = NULL;
    mox__lock(&dev->lock);
    bool newest = dev->stream_state[g->stream].last == g;
    if (newest)
        mox__cuda_event_take(dev, false, &wake);
    mox__unlock(&dev->lock);
    /* A waiting thread may have another context current: one is made in
     * the device's (records and synchronizations need none). */
    if (!newest ||
        (!wake && (mox__cuda_dev_enter(dev) != MOX_OK || mox__cuda_event_get(dev, false, &wake) != MOX_OK)))
        return false;
    bool slept = dev->api->cuEventRecord(wake, dev->streams[g->stream]) == CUDA_SUCCESS;
    if (slept) {
        atomic_fetch_add_explicit(&dev->stats.wake_events, 1, memory_order_relaxed);
        /* Done means g is (recorded behind it on its stream); a failure
         * is g's own event's to tell. */
        *r = dev->api->cuEventSynchronize(wake);
    }
    mox__cuda_event_put(dev, false, wake);
    return slept;
}
