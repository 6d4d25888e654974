/* tests/cuda/test_glue.h - see test_glue.c. */
#ifndef MOX_TESTS_CUDA_GLUE_H
#define MOX_TESTS_CUDA_GLUE_H

#include "core/backend.h"

typedef void (*mox__test_complete_fn)(mox__submission *sub, mox_status status, mox_error *error);
/* Receives every mox__submission_complete call (takes `error` over). */
extern mox__test_complete_fn mox__test_complete_hook;


#endif
