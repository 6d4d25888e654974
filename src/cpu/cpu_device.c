/* cpu_device.c - the CPU backend's virtual devices: MOX_CPU_DEVICES of them
 * (default 1), so that programs and tests written for several devices run
 * on any machine. Each is its own thread pool over the one host memory;
 * their UUIDs are fixed per ordinal (docs/multi-device.md). */
#include "cpu_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU_DEVICES_MAX 64u

mox_error *mox__cpu_device_count(uint32_t *count)
{
    *count = 1;
    const char *v = getenv("MOX_CPU_DEVICES");
    if (!v || !*v)
        return NULL;
    uint32_t n = 0;
    if (!mox__parse_setting_uint(v, CPU_DEVICES_MAX, &n) || n < 1)
        return mox__error_new(MOX_ERR_CONFIG,
                              "MOX_CPU_DEVICES must be a number of CPU devices (1 to %u), not '%s'",
                              CPU_DEVICES_MAX, v);
    *count = (uint32_t)n;
    return NULL;
}

void mox__cpu_device_uuid(uint32_t ordinal, char out[37])
{
    /* "moxcpu" in hex, a version-4 layout, the ordinal last. */
    snprintf(out, 37, "6d6f7863-7075-4000-8000-%012x", ordinal);
}

mox_error *mox__cpu_device_select(const mox__backend_config *config, uint32_t *ordinal)
{
    uint32_t count;
    mox_error *err = mox__cpu_device_count(&count);
    if (err)
        return err;
    if (config->uuid) {
        char u[37];
        for (uint32_t i = 0; i < count; i++) {
            mox__cpu_device_uuid(i, u);
            if (strcmp(u, config->uuid) == 0) {
                *ordinal = i;
                return NULL;
            }
        }
        return mox__error_new(MOX_ERR_DEVICE_UNAVAILABLE,
                              "no CPU device has UUID %s (%u CPU devices; MOX_CPU_DEVICES sets how "
                              "many)",
                              config->uuid, count);
    }
    *ordinal = config->ordinal < 0 ? 0u : (uint32_t)config->ordinal;
    if (*ordinal >= count)
        return mox__error_new(MOX_ERR_DEVICE_UNAVAILABLE,
                              "no CPU device %u (%u CPU devices; MOX_CPU_DEVICES sets how many)",
                              *ordinal, count);
    return NULL;
}

void mox__cpu_device_name(uint32_t ordinal, uint32_t threads, char *out, size_t size)
{
    if (ordinal == 0)
        snprintf(out, size, "CPU (%u threads)", threads);
    else
        snprintf(out, size, "CPU %u (%u threads)", ordinal, threads);
}
