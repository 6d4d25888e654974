/* example.h - the plumbing the example host programs share, so that each
 * host.c holds only its own example: failure counting and the closing
 * summary, allocation and mox calls that end the program when they fail,
 * opening the device (exit 77 when the forced backend is unavailable),
 * buffers, readbacks and checks of float outputs with a sentinel tail.
 * Messages are prefixed with the program name given to ex_init.
 *
 * Not part of mox. The failure count is plain state of the calling thread's
 * program: call ex_fail from the thread that runs main (every example does;
 * event-loop's callbacks run on it too). */
#ifndef MOX_EXAMPLE_COMMON_H
#define MOX_EXAMPLE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <mox/mox.h>

#if defined(__GNUC__) || defined(__clang__)
#define EX_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define EX_NORETURN __attribute__((noreturn))
#else
#define EX_PRINTF(fmt, args)
#define EX_NORETURN
#endif

/* The program's only optional argument, `--max-size N`: the largest
 * problem size in place of `largest` (sanitizer builds run the examples
 * smaller; the code paths stay the same); `--max-size=N` too. With no
 * arguments, `largest`; a bad argument, or N outside [smallest, largest],
 * ends the program with a usage message and exit 2. */
uint32_t ex_max_size(int argc, char **argv, uint32_t smallest, uint32_t largest);

/* Names the program in messages ("matmul: out of memory"). Call first. */
void ex_init(const char *program);
const char *ex_program(void);

/* Prints "FAILED: <message>" on stdout and counts one failed check. */
void ex_fail(const char *fmt, ...) EX_PRINTF(1, 2);
int ex_failures(void);

/* Prints "<program>: N check(s) FAILED" or "<program>: all checks passed"
 * and returns main's exit status: 1 after any failure, else 0. */
int ex_finish(void);

/* Prints "<program>: <message>" on stderr and exits 1: for setup that the
 * example cannot go on without. */
EX_NORETURN void ex_die(const char *fmt, ...) EX_PRINTF(1, 2);

/* Never NULL; a size of 0 still gives a distinct block. */
void *ex_xmalloc(size_t size);
void *ex_xcalloc(size_t count, size_t size);

/* Exits 1 with "<program>: <what>: <status>: <last error>" unless st is OK. */
void ex_check(mox_status st, const char *what);

/* Opens the default device. MOX_ERR_DEVICE_UNAVAILABLE prints
 * "skipped: <why>" and exits 77 (ctest's SKIP_RETURN_CODE); any other
 * failure exits 1. */
mox_device *ex_open_device(void);

/* The error message of a finished op's result, "" when there is none. */
const char *ex_op_message(const mox_op *op);

/* Waits for `op` and drops it; a failure is counted (ex_fail) with `what`.
 * Returns 1 when the op succeeded. */
int ex_wait_op(mox_op *op, const char *what);

/* Waits for an op that must fail with `want` and a non-empty message;
 * anything else is counted as a failure. The op is not dropped, so that the
 * caller can still print ex_op_message. Returns 1 when it was refused as
 * expected. */
int ex_expect_rejected(mox_op *op, mox_status want, const char *what);

/* Buffers of n elements of `type`; they exit 1 when creation fails. */
mox_buffer *ex_buffer_from(mox_device *device, const mox_type *type, size_t n, const void *data);
mox_buffer *ex_buffer_new(mox_device *device, const mox_type *type, size_t n);
/* Every element a copy of the type->size bytes at `value` (a sentinel). */
mox_buffer *ex_buffer_filled(mox_device *device, const mox_type *type, size_t n,
                             const void *value);

/* The first n elements of `buffer` in a new ex_xmalloc block (the caller
 * frees it); exits 1 when the read fails. */
void *ex_read(mox_buffer *buffer, size_t n);

/* A 1-D launch config for n elements in blocks of `block`; exits 1 when
 * there is none. */
mox_launch_config ex_launch_config(uint32_t block, uint32_t n);

/* Reads `len` floats of `buffer`: the first n must equal `expect` bit for
 * bit, the rest `sentinel`. The first difference is counted as a failure.
 * Returns 1 when all match. */
int ex_check_f32(mox_buffer *buffer, const float *expect, size_t n, size_t len, float sentinel,
                 const char *what);

#endif
