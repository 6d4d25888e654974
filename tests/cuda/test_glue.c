/* tests/cuda/test_glue.c - the core functions the CUDA backend calls
 * (src/core/backend.h), for the backend-only tests that link src/cuda
 * without the runtime core: simple error objects, and completion forwarded
 * to a hook the GPU fixture installs. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_glue.h"

struct mox_error {
    atomic_uint refs;
    mox_status code;
    char message[512];
};

mox__test_complete_fn mox__test_complete_hook;

mox_error *mox__error_new(mox_status code, const char *fmt, ...)
{
    mox_error *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    atomic_init(&e->refs, 1);
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return e;
}

mox_error *mox_error_retain(mox_error *error)
{
    if (error)
        atomic_fetch_add(&error->refs, 1);
    return error;
}

void mox_error_release(mox_error *error)
{
    if (error && atomic_fetch_sub(&error->refs, 1) == 1)
        free(error);
}

mox_status mox_error_code(const mox_error *error)
{
    return error ? error->code : MOX_OK;
}

const char *mox_error_message(const mox_error *error)
{
    return error ? error->message : "";
}

void mox__thread_mark_runtime(void)
{
}

void mox__submission_complete(mox__submission *sub, mox_status status, mox_error *error)
{
    if (!mox__test_complete_hook)
        abort(); /* the loader test never submits */
    mox__test_complete_hook(sub, status, error);
}
