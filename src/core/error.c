/* error.c - mox_error objects, status names, and the per-thread last error
 * (rule A10). Errors are immutable once built, so they can be shared by
 * every clone of a shared op and by every dispatch a failure gated. */
#include "error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

struct mox_error {
    _Atomic unsigned refs;
    bool immortal;
    mox_status code;
    unsigned fail_code;
    char *kernel;
    mox_error *cause;
    char *message;
};

static mox_error oom_error = {
    .refs = 1,
    .immortal = true,
    .code = MOX_ERR_OUT_OF_MEMORY,
    .message = (char *)"out of memory (a host allocation failed)",
};

mox_error *mox__error_oom(void) { return &oom_error; }

static const char *const status_names[MOX_STATUS_COUNT_] = {
#define MOX_STATUS_NAME_(name, value, what) [name] = #name,
    MOX_STATUS_MAP(MOX_STATUS_NAME_)
#undef MOX_STATUS_NAME_
};

const char *mox_status_name(mox_status status)
{
    if ((unsigned)status >= (unsigned)MOX_STATUS_COUNT_)
        return "MOX_STATUS_UNKNOWN";
    return status_names[status];
}

mox_error *mox__error_createv(mox_status code, const char *kernel, unsigned fail_code,
                              const mox_error *cause, const char *fmt, va_list ap)
{
    char stack[256];
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(stack, sizeof stack, fmt, copy);
    va_end(copy);
    if (n < 0)
        n = 0;
    size_t cause_len = cause ? strlen(cause->message) + 2 : 0;
    size_t total = (size_t)n + cause_len + 1;
    mox_error *e = mox__calloc(1, sizeof *e);
    char *msg = mox__malloc(total);
    char *k = kernel ? mox__str_dup(kernel) : NULL;
    if (!e || !msg || (kernel && !k)) {
        mox__free(e);
        mox__free(msg);
        mox__free(k);
        return mox__error_oom();
    }
    if ((size_t)n < sizeof stack)
        memcpy(msg, stack, (size_t)n + 1);
    else
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    if (cause) {
        memcpy(msg + n, ": ", 2);
        memcpy(msg + n + 2, cause->message, cause_len - 2);
        msg[total - 1] = '\0';
    }
    atomic_init(&e->refs, 1);
    e->code = code;
    e->fail_code = fail_code;
    e->kernel = k;
    e->cause = cause ? mox__error_ref(cause) : NULL;
    e->message = msg;
    return e;
}

mox_error *mox__error_create(mox_status code, const char *kernel, unsigned fail_code,
                             const mox_error *cause, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mox_error *e = mox__error_createv(code, kernel, fail_code, cause, fmt, ap);
    va_end(ap);
    return e;
}

mox_error *mox__error_new(mox_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mox_error *e = mox__error_createv(code, NULL, 0, NULL, fmt, ap);
    va_end(ap);
    return e;
}

mox_error *mox_error_retain(mox_error *error)
{
    if (error && !error->immortal)
        atomic_fetch_add_explicit(&error->refs, 1, memory_order_relaxed);
    return error;
}

void mox_error_release(mox_error *error)
{
    /* Causes form a chain; release it iteratively. */
    while (error && !error->immortal) {
        if (atomic_fetch_sub_explicit(&error->refs, 1, memory_order_acq_rel) != 1)
            return;
        mox_error *cause = error->cause;
        mox__free(error->kernel);
        mox__free(error->message);
        mox__free(error);
        error = cause;
    }
}

mox_status mox_error_code(const mox_error *error) { return error ? error->code : MOX_ERR_INVALID_ARGUMENT; }
const char *mox_error_message(const mox_error *error) { return error ? error->message : ""; }
const mox_error *mox_error_cause(const mox_error *error) { return error ? error->cause : NULL; }
const char *mox_error_kernel(const mox_error *error) { return error ? error->kernel : NULL; }
unsigned mox_error_fail_code(const mox_error *error) { return error ? error->fail_code : 0; }

/* ---- last error: a pthread key so a thread's error is freed when it exits ---- */

static pthread_key_t last_key;
static pthread_once_t last_once = PTHREAD_ONCE_INIT;

static void last_destroy(void *p) { mox_error_release(p); }
static void last_init(void) { (void)pthread_key_create(&last_key, last_destroy); }

mox_status mox__set_last(mox_error *error)
{
    pthread_once(&last_once, last_init);
    mox_error *old = pthread_getspecific(last_key);
    mox_status code = error->code;
    if (pthread_setspecific(last_key, error) != 0) {
        mox_error_release(error);
        return code;
    }
    mox_error_release(old);
    return code;
}

mox_status mox__raise(mox_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mox_error *e = mox__error_createv(code, NULL, 0, NULL, fmt, ap);
    va_end(ap);
    if (e->immortal && code != MOX_ERR_OUT_OF_MEMORY) {
        /* No memory to describe it: keep the caller's code, generic text. */
        mox__set_last(e);
        return code;
    }
    return mox__set_last(e);
}

mox_error *mox_error_last(void)
{
    pthread_once(&last_once, last_init);
    return mox_error_retain(pthread_getspecific(last_key));
}

const char *mox_error_last_message(void)
{
    pthread_once(&last_once, last_init);
    mox_error *e = pthread_getspecific(last_key);
    return e ? e->message : "";
}
