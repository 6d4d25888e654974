/* lang_support.h - helpers of the kernel-language tests: the device chosen
 * by MOX_BACKEND (exit 77 = skip when it is unavailable), buffers from host
 * arrays, running an op and reading a buffer back. */
#ifndef MOX_LANG_SUPPORT_H
#define MOX_LANG_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "lang.h" /* generated bindings of tests/language/kernels */

#define LANG_SKIP 77

/* Opens the device of this run, or exits 77 when the backend is unavailable. */
mox_device *lang_open(void);
/* A buffer of `n` elements of `type` copied from `data` (zeros when NULL). */
mox_buffer *lang_buffer(mox_device *dev, const mox_type *type, size_t n, const void *data);
/* Reads all elements of `b` into `out` (length * element size bytes). */
void lang_read(mox_buffer *b, void *out);
/* Waits for `op`, drops it and returns its status; prints the error when it failed. */
mox_status lang_run(mox_op *op);
/* 1-D config of ceil(n / 64) blocks of 64 threads. */
mox_launch_config lang_cfg(uint32_t n);
/* Waits for `op`, expects it to fail with `code` and a message containing
 * `text`, and drops it. */
void lang_expect_error(mox_op *op, mox_status code, const char *text);

/* cmocka group setup/teardown: *state is the device. */
int lang_setup(void **state);
int lang_teardown(void **state);

#endif
