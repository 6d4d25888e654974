/* src/cuda/cuda_settings.c - the CUDA backend's settings from the
 * environment (docs/cuda-backend.md, "Settings"), read when a device opens.
 * Every one is checked: unset or empty means the default; a word that is
 * not one of the setting's, or a number with other characters, a sign or
 * beyond its range, is MOX_ERR_CONFIG naming the variable and the value.
 * (MOX_CUDA_LIBRARY and MOX_CUDA_DEVICE are read where the driver is
 * loaded and the device chosen: cuda_api.c, cuda_enumerate.c.) */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* The index of `name`'s value among `words` (n of them; unset or empty:
 * `fallback`), or MOX_ERR_CONFIG listing them. */
static mox_status word_setting(const char *name, const char *const *words, uint32_t n,
                               uint32_t fallback, uint32_t *out)
{
    const char *v = getenv(name);
    *out = fallback;
    if (!v || !v[0])
        return MOX_OK;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(v, words[i]) == 0) {
            *out = i;
            return MOX_OK;
        }
    char list[64] = "";
    for (uint32_t i = 0; i < n; i++) {
        strcat(list, words[i]);
        strcat(list, i + 2 < n ? ", " : i + 1 < n ? " or " : "");
    }
    return mox__cuda_error(MOX_ERR_CONFIG, "%s must be %s (got '%.40s')", name, list, v);
}

/* A whole number in `name` (unset or empty: `fallback`), at most `max`. */
static mox_status number_setting(const char *name, const char *unit, unsigned long max,
                                 uint32_t fallback, uint32_t *out)
{
    const char *v = getenv(name);
    *out = fallback;
    if (!v || !v[0] || mox__parse_setting_uint(v, max, out))
        return MOX_OK;
    return mox__cuda_error(MOX_ERR_CONFIG, "%s must be a number of %s (0 to %lu), not '%.40s'", name,
                           unit, max, v);
}

mox_status mox__cuda_read_settings(mox__cuda_dev *dev)
{
    static const char *const launch[] = {"graph", "stream"};
    static const char *const events[] = {"spin", "blocking"};
    static const char *const pdl[] = {"off", "end", "start"};
    static const char *const off_on[] = {"0", "1"};
    uint32_t mode, ev, pd, coalesce, stats, nap_us, upload_kib;
    mox_status st = word_setting("MOX_CUDA_LAUNCH", launch, 2, UINT32_MAX, &mode);
    if (st == MOX_OK)
        st = number_setting("MOX_CUDA_SPIN_US", "microseconds", 60000000ul, 200, &dev->spin_us);
    if (st == MOX_OK)
        st = number_setting("MOX_CUDA_POLL_NS", "nanoseconds", 1000000000ul, 1000, &dev->poll_ns);
    if (st == MOX_OK)
        st = number_setting("MOX_CUDA_NAP_US", "microseconds", 60000000ul, 0, &nap_us);
    if (st == MOX_OK)
        st = word_setting("MOX_CUDA_COALESCE", off_on, 2, 1, &coalesce);
    if (st == MOX_OK)
        st = number_setting("MOX_CUDA_DEFER_DEPTH", "launches", 1000000ul, MOX__CUDA_DEFER_DEPTH,
                            &dev->defer_depth);
    if (st == MOX_OK)
        st = word_setting("MOX_CUDA_EVENTS", events, 2, 0, &ev);
    if (st == MOX_OK)
        st = word_setting("MOX_CUDA_PDL", pdl, 3, 1, &pd); /* default end (docs/cuda-backend.md) */
    if (st == MOX_OK)
        st = word_setting("MOX_CUDA_STATS", off_on, 2, 0, &stats);
    if (st == MOX_OK)
        st = number_setting("MOX_CUDA_UPLOAD_NODE_KIB", "KiB", 16384ul, MOX__CUDA_UPLOAD_NODE_KIB,
                            &upload_kib);
    if (st != MOX_OK)
        return st;
    dev->upload_node_max = 1024ull * upload_kib;
    dev->mode = mode == 0 ? MOX__CUDA_LAUNCH_GRAPH : mode == 1 ? MOX__CUDA_LAUNCH_STREAM
                                                              : MOX__CUDA_LAUNCH_AUTO;
    dev->nap_min_ns = 1000ull * nap_us;
    dev->coalesce = coalesce == 1 && dev->defer_depth != 0;
    dev->events = ev == 0 ? MOX__CUDA_EVENTS_SPIN : MOX__CUDA_EVENTS_BLOCKING;
    dev->pdl = pd == 1 ? MOX__CUDA_PDL_END : pd == 2 ? MOX__CUDA_PDL_START : MOX__CUDA_PDL_OFF;
    dev->print_stats = stats == 1;
    return MOX_OK;
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
