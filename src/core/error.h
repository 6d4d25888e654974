/* error.h - internal side of mox_error: construction with context, the
 * thread-local last error, and the immortal out-of-memory error used when
 * there is no memory left to describe a failure. */
#ifndef MOX_CORE_ERROR_H
#define MOX_CORE_ERROR_H

#include <stdarg.h>

#include <mox/status.h>

/* New error (refcount 1). `kernel` may be NULL; `cause` (may be NULL) is
 * retained. The message is the formatted text, then ": " and the cause's
 * message when there is a cause. Never returns NULL: on out of memory it
 * returns the immortal out-of-memory error. */
mox_error *mox__error_create(mox_status code, const char *kernel, unsigned fail_code,
                             const mox_error *cause, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
mox_error *mox__error_createv(mox_status code, const char *kernel, unsigned fail_code,
                              const mox_error *cause, const char *fmt, va_list ap);
/* mox__error_create(code, NULL, 0, NULL, fmt...). Declared in hal/hal.h too. */
mox_error *mox__error_new(mox_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
mox_error *mox__error_oom(void);

/* Records `error` (taken over) as this thread's last error; returns its code. */
mox_status mox__set_last(mox_error *error);
/* mox__set_last(mox__error_new(code, fmt...)). */
mox_status mox__raise(mox_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Const-correct retain used for causes and results. */
static inline mox_error *mox__error_ref(const mox_error *error)
{
    return mox_error_retain((mox_error *)error);
}

#endif
