/* enumerate.h - device selection shared by device.c and enumerate.c. */
#ifndef MOX_CORE_ENUMERATE_H
#define MOX_CORE_ENUMERATE_H

#include <mox/device.h>

#include "hal/hal.h"

/* The backend MOX_BACKEND names (MOX_BACKEND_AUTO when unset or empty).
 * Codes: MOX_ERR_CONFIG. */
mox_status mox__backend_from_env(mox_backend *out);
/* Fills cfg->ordinal and cfg->uuid from the options' device selection
 * (uuid_buf holds the normalised UUID). Codes: MOX_ERR_INVALID_ARGUMENT
 * (a malformed UUID), MOX_ERR_DEVICE_UNAVAILABLE (an absurd ordinal). */
mox_status mox__selection_config(const mox_device_options *opts, mox__backend_config *cfg,
                                 char uuid_buf[37]);

#endif
