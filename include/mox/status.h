/* mox/status.h - status codes and refcounted error objects (rule A10).
 *
 * Every fallible mox function returns a mox_status (0 = MOX_OK). When it
 * fails it also records a detailed error for the calling thread, readable
 * through mox_error_last(). Operations carry their own error object, readable
 * through mox_result_error(). docs/errors.md lists every code.
 */
#ifndef MOX_STATUS_H
#define MOX_STATUS_H

#include <mox/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mox_status {
    MOX_OK = 0,
    MOX_ERR_INVALID_ARGUMENT,   /* NULL handle, bad enum value, misuse of an API */
    MOX_ERR_OUT_OF_MEMORY,      /* a host allocation failed */
    MOX_ERR_DEVICE_UNAVAILABLE, /* no usable device, or a forced backend is unavailable */
    MOX_ERR_CONFIG,             /* a bad environment setting (e.g. MOX_BACKEND=foo) */
    MOX_ERR_DEVICE_MISMATCH,    /* objects from different device contexts mixed */
    MOX_ERR_LENGTH_OVERFLOW,    /* length * element size overflows */
    MOX_ERR_BUFFER_TOO_LARGE,   /* allocation above the device's limit */
    MOX_ERR_ALLOCATION_FAILED,  /* device memory allocation failed */
    MOX_ERR_OUT_OF_RANGE,       /* host access outside a buffer */
    MOX_ERR_INVALID_LAUNCH,     /* launch geometry or required block rejected */
    MOX_ERR_TOO_MANY_ARGUMENTS, /* more arguments than the ABI allows */
    MOX_ERR_ABI_MISMATCH,       /* arguments or bindings disagree with the kernel ABI */
    MOX_ERR_ARTIFACT,           /* manifest invalid, hash mismatch, missing file */
    MOX_ERR_IO,                 /* reading a file failed */
    MOX_ERR_KERNEL_NOT_FOUND,   /* no kernel of that name in the module */
    MOX_ERR_MODULE_LOAD,        /* the backend could not load the module code */
    MOX_ERR_UNSUPPORTED_DEVICE, /* the module needs features the device lacks */
    MOX_ERR_KERNEL_FAILED,      /* a dispatch called mox_fail(code) */
    MOX_ERR_GATED,              /* skipped because work it depends on failed */
    MOX_ERR_DEVICE_LOST,        /* a sticky device fault; reopen the device */
    MOX_ERR_BACKEND,            /* any other backend (CUDA driver) error */
    MOX_ERR_CALLBACK,           /* a then/map callback reported failure */
    MOX_ERR_STATE,              /* object used in the wrong state (e.g. batch already ended) */
    MOX_STATUS_COUNT_
} mox_status;

typedef struct mox_error mox_error;

/* "MOX_ERR_GATED" etc.; "MOX_STATUS_UNKNOWN" for values out of range. */
MOX_API const char *mox_status_name(mox_status status);

/* Error objects are immutable and refcounted; release(NULL) is a no-op. */
MOX_API mox_error *mox_error_retain(mox_error *error);
MOX_API void mox_error_release(mox_error *error);
MOX_API mox_status mox_error_code(const mox_error *error);
/* Full message with context (kernel, argument, CUDA error name, cause). */
MOX_API const char *mox_error_message(const mox_error *error);
/* The error this one was caused by (e.g. the failure that gated a dispatch); borrowed, may be NULL. */
MOX_API const mox_error *mox_error_cause(const mox_error *error);
/* Kernel named by the error, or NULL. Borrowed. */
MOX_API const char *mox_error_kernel(const mox_error *error);
/* Code passed to mox_fail() for MOX_ERR_KERNEL_FAILED (and the cause of a gated error), else 0. */
MOX_API unsigned mox_error_fail_code(const mox_error *error);

/* The error recorded by the last failing mox call on this thread, retained
 * for the caller (release it), or NULL if none. */
MOX_API mox_error *mox_error_last(void);
/* Message of the last error on this thread, or "" - valid until the next mox call on this thread. */
MOX_API const char *mox_error_last_message(void);

#ifdef __cplusplus
}
#endif
#endif
