/* enumerate.c - several devices of a backend (docs/multi-device.md): how
 * many there are, which one an open selects (ordinal or UUID), a device's
 * identity, and how two devices reach each other's memory. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "device.h"
#include "enumerate.h"
#include "error.h"

mox_status mox__backend_from_env(mox_backend *out)
{
    const char *v = getenv("MOX_BACKEND");
    if (!v || !*v) {
        *out = MOX_BACKEND_AUTO;
        return MOX_OK;
    }
    if (strcmp(v, "cpu") == 0) {
        *out = MOX_BACKEND_CPU;
        return MOX_OK;
    }
    if (strcmp(v, "cuda") == 0) {
        *out = MOX_BACKEND_CUDA;
        return MOX_OK;
    }
    return mox__raise(MOX_ERR_CONFIG, "MOX_BACKEND must be 'cuda' or 'cpu' (or unset), not '%s'", v);
}

/* The backend MOX_BACKEND_AUTO means, honouring MOX_BACKEND. */
static mox_status resolve_auto(mox_backend *which)
{
    if (*which != MOX_BACKEND_AUTO)
        return MOX_OK;
    return mox__backend_from_env(which);
}

static mox_status count_of(mox_backend which, uint32_t *count)
{
    mox_error *(*fn)(uint32_t *) = which == MOX_BACKEND_CUDA ? mox__cuda_device_count
                                                            : mox__cpu_device_count;
    *count = 0;
    if (!fn)
        return MOX_OK; /* not built in: no device */
    mox_error *err = fn(count);
    if (!err)
        return MOX_OK;
    *count = 0;
    return mox__set_last(err);
}

mox_status mox_device_count(mox_backend backend, uint32_t *count)
{
    if (!count)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_count: count is NULL");
    *count = 0;
    if ((unsigned)backend > MOX_BACKEND_CUDA)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_count: unknown backend %d",
                         (int)backend);
    mox_status st = resolve_auto(&backend);
    if (st != MOX_OK)
        return st;
    if (backend != MOX_BACKEND_AUTO)
        return count_of(backend, count);
    /* What mox_device_open picks: CUDA when it has a device, else the CPU. */
    if ((st = count_of(MOX_BACKEND_CUDA, count)) != MOX_OK || *count > 0)
        return st;
    return count_of(MOX_BACKEND_CPU, count);
}

/* Accepts "8-4-4-4-12" hex digits in either case, optionally after
 * nvidia-smi's "GPU-" prefix, itself in any case ("gpu-" too); writes the
 * lower-case form. */
static bool normalize_uuid(const char *in, char out[37])
{
    if (strncasecmp(in, "GPU-", 4) == 0)
        in += 4;
    if (strlen(in) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? in[i] != '-' : !isxdigit((unsigned char)in[i]))
            return false;
        out[i] = (char)tolower((unsigned char)in[i]);
    }
    out[36] = '\0';
    return true;
}

mox_status mox__selection_config(const mox_device_options *opts, mox__backend_config *cfg,
                                 char uuid_buf[37])
{
    cfg->ordinal = -1;
    cfg->uuid = NULL;
    if (opts->uuid) {
        if (!normalize_uuid(opts->uuid, uuid_buf))
            return mox__raise(MOX_ERR_INVALID_ARGUMENT,
                             "mox_device_open: '%s' is not a device UUID (8-4-4-4-12 hex digits, "
                             "as mox_device_uuid writes it)",
                             opts->uuid);
        cfg->uuid = uuid_buf;
        return MOX_OK;
    }
    if (opts->use_ordinal) {
        if (opts->ordinal > INT32_MAX)
            return mox__raise(MOX_ERR_DEVICE_UNAVAILABLE, "mox_device_open: no device %u",
                             opts->ordinal);
        cfg->ordinal = (int32_t)opts->ordinal;
    }
    return MOX_OK;
}

uint32_t mox_device_ordinal(const mox_device *d) { return d ? d->info.ordinal : 0; }

mox_status mox_device_uuid(const mox_device *d, char out[37])
{
    if (!d || !out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_uuid: %s is NULL",
                         d ? "out" : "device");
    memcpy(out, d->info.uuid, 37);
    out[36] = '\0';
    return MOX_OK;
}

mox_status mox_device_peer(const mox_device *a, const mox_device *b, mox_peer_link *out)
{
    if (!a || !b || !out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_device_peer: %s is NULL",
                         !out ? "out" : !a ? "a" : "b");
    *out = MOX_PEER_NONE;
    if (a->kind != b->kind)
        return MOX_OK; /* different backends: through the host */
    if (a->id == b->id) {
        *out = MOX_PEER_SAME;
        return MOX_OK;
    }
    uint32_t link = MOX__PEER_NONE;
    mox_error *err = a->backend->vt->peer ? a->backend->vt->peer(a->backend, b->backend, &link)
                                          : NULL;
    if (err)
        return mox__set_last(err);
    *out = (mox_peer_link)link;
    return MOX_OK;
}

const char *mox_peer_link_name(mox_peer_link link)
{
    switch (link) {
    case MOX_PEER_NONE: return "MOX_PEER_NONE";
    case MOX_PEER_SAME: return "MOX_PEER_SAME";
    case MOX_PEER_HOST: return "MOX_PEER_HOST";
    case MOX_PEER_PCIE: return "MOX_PEER_PCIE";
    case MOX_PEER_NVLINK: return "MOX_PEER_NVLINK";
    }
    return "MOX_PEER_UNKNOWN";
}
