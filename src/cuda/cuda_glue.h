/* src/cuda/cuda_glue.h - the few calls the CUDA backend makes into the
 * runtime core, kept in one header so the backend's files do not depend on
 * the core's internals beyond these. */
#ifndef MOX_CUDA_GLUE_H
#define MOX_CUDA_GLUE_H

#include <mox/status.h>

/* Records `message` as the calling thread's last error with `code`
 * (mox_error_last). */
void mox__cuda_glue_set_error(mox_status code, const char *message);

#endif
