/* tests/cuda/test_glue.c - the core functions the CUDA backend calls
 * (src/hal/hal.h), for the backend-only tests that link src/cuda
 * without the runtime core: simple error objects, semaphores, and
 * completion forwarded to a hook the GPU fixture installs. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_glue.h"

#include "core/error.h"
#include "core/trace.h"

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

void mox__thread_mark_runtime(const char *name)
{
    (void)name;
}

/* core/sync.c (the backend's spin locks) traces waker cells, which only
 * the core's ops have: no trace here. */
void mox__trace_wake(const mox__waker_cell *cell)
{
    (void)cell;
}

/* Semaphores as the core keeps them (src/core/semaphore.c), without host
 * waiters: the CUDA backend waits on the device. */
bool mox__semaphore_wait_async(mox__semaphore *sem, mox__sem_waiter *w)
{
    (void)sem;
    (void)w;
    abort(); /* the CUDA backend never waits on the host */
}

void mox__semaphore_fail(mox__semaphore *sem, mox_error *error)
{
    mox_error *expected = NULL;
    if (!atomic_compare_exchange_strong(&sem->failure, &expected, error))
        mox_error_release(error);
}

void mox__execution_complete(mox__submission *sub, mox_error *error)
{
    if (!mox__test_complete_hook)
        abort(); /* the loader test never executes */
    uint64_t cur = atomic_load(&sub->signal.sem->value);
    while (cur < sub->signal.value &&
           !atomic_compare_exchange_weak(&sub->signal.sem->value, &cur, sub->signal.value)) {
    }
    mox__test_complete_hook(sub, error);
}

/* The trace's API errors (src/core/trace.c, linked for the backend's trace
 * hooks): the last message of this thread, as the core keeps it. */
static _Thread_local char last_message[512];

mox_status mox__raise(mox_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return code;
}

const char *mox_error_last_message(void)
{
    return last_message;
}
