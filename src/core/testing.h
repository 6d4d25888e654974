/* testing.h - hidden hooks for mox's own tests (exported, not part of the
 * public API; tests include this header from src/core). */
#ifndef MOX_CORE_TESTING_H
#define MOX_CORE_TESTING_H

#include <stdbool.h>
#include <stdint.h>

#include <mox/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the runtime's (count+1)-th host allocation from now fail, once;
 * count < 0 disarms. For allocation-failure loops. */
MOX_API void mox__testing_fail_alloc_after(long count);

/* While held, submitted work does not start executing on the device (it is
 * queued); releasing starts it in submission order. Keeps a batch "in
 * flight" deterministically: command capacity (A3) and cross-batch failure
 * gating of an unfinished writer (A9) are tested with it.
 * Codes: MOX_ERR_INVALID_ARGUMENT, MOX_ERR_STATE (backend cannot hold). */
MOX_API mox_status mox__testing_hold(mox_device *device, bool hold);

/* Batches submitted and not yet completed. */
MOX_API uint32_t mox__testing_in_flight(mox_device *device);

#ifdef __cplusplus
}
#endif
#endif
