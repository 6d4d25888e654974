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

/* Every status code once: X(name, value, what it means). The enum, the
 * names mox_status_name returns and docs/errors.md's headings come from
 * this one list (tests/runtime/errors.c checks the docs against it). */
#define MOX_STATUS_MAP(X)                                                                        \
    X(MOX_OK, 0, "success")                                                                      \
    X(MOX_ERR_INVALID_ARGUMENT, 1, "NULL handle, bad enum value, misuse of an API")             \
    X(MOX_ERR_OUT_OF_MEMORY, 2, "a host allocation failed")                                     \
    X(MOX_ERR_DEVICE_UNAVAILABLE, 3, "no usable device, or a forced backend is unavailable")    \
    X(MOX_ERR_CONFIG, 4, "a bad environment setting (e.g. MOX_BACKEND=foo)")                    \
    X(MOX_ERR_DEVICE_MISMATCH, 5, "objects from different device contexts mixed")              \
    X(MOX_ERR_LENGTH_OVERFLOW, 6, "length * element size overflows")                            \
    X(MOX_ERR_BUFFER_TOO_LARGE, 7, "allocation above the device's limit")                       \
    X(MOX_ERR_ALLOCATION_FAILED, 8, "device memory allocation failed")                          \
    X(MOX_ERR_OUT_OF_RANGE, 9, "host access outside a buffer")                                  \
    X(MOX_ERR_INVALID_LAUNCH, 10, "launch geometry or required block rejected")                 \
    X(MOX_ERR_TOO_MANY_ARGUMENTS, 11, "more arguments than the ABI allows")                     \
    X(MOX_ERR_ABI_MISMATCH, 12, "arguments or bindings disagree with the kernel ABI")           \
    X(MOX_ERR_ARTIFACT, 13, "manifest invalid, hash mismatch, missing file")                    \
    X(MOX_ERR_IO, 14, "reading a file failed")                                                  \
    X(MOX_ERR_KERNEL_NOT_FOUND, 15, "no kernel of that name in the module")                     \
    X(MOX_ERR_MODULE_LOAD, 16, "the backend could not load the module code")                    \
    X(MOX_ERR_UNSUPPORTED_DEVICE, 17, "the module needs features the device lacks")             \
    X(MOX_ERR_KERNEL_FAILED, 18, "a dispatch called mox_fail(code)")                            \
    X(MOX_ERR_GATED, 19, "skipped because work it depends on failed")                           \
    X(MOX_ERR_DEVICE_LOST, 20, "a sticky device fault; reopen the device")                      \
    X(MOX_ERR_BACKEND, 21, "any other backend (CUDA driver) error")                             \
    X(MOX_ERR_CALLBACK, 22, "a then/map callback reported failure")                             \
    X(MOX_ERR_STATE, 23, "object used in the wrong state (e.g. batch already ended)")

typedef enum mox_status {
#define MOX_STATUS_ENUM_(name, value, what) name = value,
    MOX_STATUS_MAP(MOX_STATUS_ENUM_)
#undef MOX_STATUS_ENUM_
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
