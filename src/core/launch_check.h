/* launch_check.h - the argument checks of a generated launch
 * (launch_check.c), shared with launch.c, which builds the launch. */
#ifndef MOX_CORE_LAUNCH_CHECK_H
#define MOX_CORE_LAUNCH_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "module.h"

/* A resolved failed op whose error has `code`, names `kernel` (may be
 * NULL) and says the formatted message. */
mox_op *mox__launch_error(mox_status code, const char *kernel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The first argument error in module.h's order, as a failed op; NULL when
 * every argument passes (views and record types included). */
mox_op *mox__launch_check_args(mox_device *dev, const mox__kernel_check *k, const mox_arg *args,
                               uint32_t n);

/* Whether every argument passes mox__launch_check_args, in one pass: the
 * common case (buffers and values of built-in types, of the launch's
 * device). False does not mean an error: call mox__launch_check_args. */
bool mox__launch_args_pass(const mox_device *dev, const mox__kernel_check *k, const mox_arg *args,
                           uint32_t n);

#endif
