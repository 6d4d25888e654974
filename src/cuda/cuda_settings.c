/* src/cuda/cuda_settings.c - the CUDA backend's settings from the
 * environment (docs/cuda-backend.md, "Settings"), read when a device opens.
 * MOX_CUDA_PDL and MOX_CUDA_EVENTS are checked: anything but their words
 * is MOX_ERR_CONFIG.
 * The older tuning knobs keep their lenient reading (an unknown word means
 * the default). */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

static mox__cuda_launch_mode mode_from_env(void)
{
    const char *m = getenv("MOX_CUDA_LAUNCH");
    if (m && strcmp(m, "graph") == 0)
        return MOX__CUDA_LAUNCH_GRAPH;
    if (m && strcmp(m, "stream") == 0)
        return MOX__CUDA_LAUNCH_STREAM;
    return MOX__CUDA_LAUNCH_AUTO;
}

static mox_status pdl_from_env(mox__cuda_pdl *out)
{
    const char *v = getenv("MOX_CUDA_PDL");
    *out = MOX__CUDA_PDL_OFF;
    if (!v || !v[0] || strcmp(v, "off") == 0)
        return MOX_OK;
    if (strcmp(v, "end") == 0)
        *out = MOX__CUDA_PDL_END;
    else if (strcmp(v, "start") == 0)
        *out = MOX__CUDA_PDL_START;
    else
        return mox__cuda_error(MOX_ERR_CONFIG,
                               "MOX_CUDA_PDL must be off, end or start (got '%.40s')", v);
    return MOX_OK;
}

static mox_status events_from_env(mox__cuda_events *out)
{
    const char *v = getenv("MOX_CUDA_EVENTS");
    *out = MOX__CUDA_EVENTS_SPIN;
    if (!v || !v[0] || strcmp(v, "spin") == 0)
        return MOX_OK;
    if (strcmp(v, "blocking") == 0)
        *out = MOX__CUDA_EVENTS_BLOCKING;
    else
        return mox__cuda_error(MOX_ERR_CONFIG,
                               "MOX_CUDA_EVENTS must be spin or blocking (got '%.40s')", v);
    return MOX_OK;
}

mox_status mox__cuda_read_settings(mox__cuda_dev *dev)
{
    dev->mode = mode_from_env();
    dev->spin_us = 200;
    const char *spin = getenv("MOX_CUDA_SPIN_US");
    if (spin && spin[0])
        dev->spin_us = (uint32_t)strtoul(spin, NULL, 10);
    dev->poll_ns = 1000;
    const char *poll = getenv("MOX_CUDA_POLL_NS");
    if (poll && poll[0])
        dev->poll_ns = (uint32_t)strtoul(poll, NULL, 10);
    const char *nap = getenv("MOX_CUDA_NAP_US");
    dev->nap_min_ns = 1000ull * (nap && nap[0] ? strtoul(nap, NULL, 10) : 0u);
    const char *co = getenv("MOX_CUDA_COALESCE");
    dev->coalesce = !(co && strcmp(co, "0") == 0);
    const char *dd = getenv("MOX_CUDA_DEFER_DEPTH");
    dev->defer_depth = dd && dd[0] ? (uint32_t)strtoul(dd, NULL, 10) : MOX__CUDA_DEFER_DEPTH;
    if (dev->defer_depth == 0)
        dev->coalesce = false;
    mox_status st = events_from_env(&dev->events);
    return st != MOX_OK ? st : pdl_from_env(&dev->pdl);
}

void mox__cuda_settle_pdl(mox__cuda_dev *dev)
{
    /* griddepcontrol.wait and programmatic edges need sm_90 and a driver
     * with edge data (CUDA 12.3); the marker is read through
     * cuModuleGetGlobal. Without them the setting quietly means off. */
    const mox__cuda_api *api = dev->api;
    if (dev->limits.cc_major < 9 || !api->cuGraphAddDependencies || !api->cuModuleGetGlobal)
        dev->pdl = MOX__CUDA_PDL_OFF;
    atomic_init(&dev->pdl_refused, false);
    atomic_init(&dev->sleepy, false);
}
