/* tests/cuda/test_glue.h - see test_glue.c. */
#ifndef MOX_TESTS_CUDA_GLUE_H
#define MOX_TESTS_CUDA_GLUE_H

#include "hal/hal.h"

typedef void (*mox__test_complete_fn)(mox__submission *sub, mox_error *error);
/* Receives every mox__execution_complete call (takes `error` over), after
 * the glue signalled the execution's semaphore point as the core does. */
extern mox__test_complete_fn mox__test_complete_hook;


#endif
