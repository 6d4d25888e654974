/* semaphore.h - the core's side of the HAL's timeline semaphores
 * (src/hal/hal.h declares what backends call). */
#ifndef MOX_CORE_SEMAPHORE_H
#define MOX_CORE_SEMAPHORE_H

#include "hal/hal.h"

void mox__semaphore_init(mox__semaphore *sem, mox__backend *owner, uint32_t queue);
void mox__semaphore_fini(mox__semaphore *sem);
/* Raises the value to `value` (never lowers it) and runs the host waiters
 * whose point it reached. No lock may be held. */
void mox__semaphore_signal(mox__semaphore *sem, uint64_t value);

#endif
