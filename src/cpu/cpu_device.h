/* cpu_device.h - the CPU backend's virtual devices (cpu_device.c). */
#ifndef MOX_CPU_DEVICE_H
#define MOX_CPU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"

/* The device `config` selects (ordinal or UUID). Codes:
 * MOX_ERR_DEVICE_UNAVAILABLE (no such device), MOX_ERR_CONFIG. */
mox_error *mox__cpu_device_select(const mox__backend_config *config, uint32_t *ordinal);
void mox__cpu_device_uuid(uint32_t ordinal, char out[37]);
void mox__cpu_device_name(uint32_t ordinal, uint32_t threads, char *out, size_t size);

#endif
