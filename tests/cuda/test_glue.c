/* tests/cuda/test_glue.c - the backend's one call into the core, for the
 * backend-only tests that link src/cuda without the runtime core: the
 * message stays readable through mox__cuda_last_message(). */
#include "cuda/cuda_glue.h"

void mox__cuda_glue_set_error(mox_status code, const char *message)
{
    (void)code;
    (void)message;
}
