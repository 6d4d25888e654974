/* example.c - the shared plumbing of the example host programs (see
 * example.h): one copy of what every host.c used to define for itself. */
#include "example.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program_name = "example";
static int failure_count;

void ex_init(const char *program)
{
    program_name = program;
}

const char *ex_program(void)
{
    return program_name;
}

void ex_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAILED: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failure_count++;
}

int ex_failures(void)
{
    return failure_count;
}

int ex_finish(void)
{
    if (failure_count) {
        printf("%s: %d check(s) FAILED\n", program_name, failure_count);
        return 1;
    }
    printf("%s: all checks passed\n", program_name);
    return 0;
}

uint32_t ex_max_size(int argc, char **argv, uint32_t smallest, uint32_t largest)
{
    if (argc == 1)
        return largest;
    const char *value = NULL;
    if (argc == 3 && strcmp(argv[1], "--max-size") == 0)
        value = argv[2];
    else if (argc == 2 && strncmp(argv[1], "--max-size=", 11) == 0)
        value = argv[1] + 11;
    char *end = NULL;
    unsigned long n = value ? strtoul(value, &end, 10) : 0;
    if (!end || end == value || *end || n < smallest || n > largest) {
        fprintf(stderr, "usage: %s [--max-size N], %u <= N <= %u\n", argv[0], smallest, largest);
        exit(2); /* a usage error, not a failed check (exit 1) */
    }
    return (uint32_t)n;
}

void ex_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* Whatever the example printed so far belongs before the reason. */
    fflush(stdout);
    fprintf(stderr, "%s: ", program_name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

void *ex_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        ex_die("out of memory");
    return p;
}

void *ex_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        ex_die("out of memory");
    return p;
}

void ex_check(mox_status st, const char *what)
{
    if (st != MOX_OK)
        ex_die("%s: %s: %s", what, mox_status_name(st), mox_error_last_message());
}

mox_device *ex_open_device(void)
{
    mox_device *dev = NULL;
    mox_status st = mox_device_open(&dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skipped: %s\n", mox_error_last_message());
        exit(77);
    }
    ex_check(st, "cannot open a device");
    return dev;
}

const char *ex_op_message(const mox_op *op)
{
    const mox_result *r = mox_op_result(op);
    const mox_error *e = r ? mox_result_error(r) : NULL;
    return e ? mox_error_message(e) : "";
}

int ex_wait_op(mox_op *op, const char *what)
{
    mox_status st = mox_op_wait(op);
    if (st != MOX_OK)
        ex_fail("%s: %s: %s", what, mox_status_name(st), ex_op_message(op));
    mox_op_drop(op);
    return st == MOX_OK;
}

int ex_expect_rejected(mox_op *op, mox_status want, const char *what)
{
    mox_status st = mox_op_wait(op);
    const char *msg = ex_op_message(op);
    if (st != want) {
        ex_fail("%s: got %s (%s), expected %s", what, mox_status_name(st), msg,
                mox_status_name(want));
        return 0;
    }
    if (!*msg) {
        ex_fail("%s: %s without a message", what, mox_status_name(st));
        return 0;
    }
    return 1;
}

mox_buffer *ex_buffer_from(mox_device *device, const mox_type *type, size_t n, const void *data)
{
    mox_buffer *b = NULL;
    mox_status st = mox_buffer_create_from(device, type, n, data, &b);
    if (st != MOX_OK)
        ex_die("buffer of %zu %s: %s: %s", n, type->name, mox_status_name(st),
               mox_error_last_message());
    return b;
}

mox_buffer *ex_buffer_new(mox_device *device, const mox_type *type, size_t n)
{
    mox_buffer *b = NULL;
    mox_status st = mox_buffer_create(device, type, n, &b);
    if (st != MOX_OK)
        ex_die("buffer of %zu %s: %s: %s", n, type->name, mox_status_name(st),
               mox_error_last_message());
    return b;
}

mox_buffer *ex_buffer_filled(mox_device *device, const mox_type *type, size_t n,
                             const void *value)
{
    unsigned char *init = ex_xmalloc(n * type->size);
    for (size_t i = 0; i < n; i++)
        memcpy(init + i * type->size, value, type->size);
    mox_buffer *b = ex_buffer_from(device, type, n, init);
    free(init);
    return b;
}

void *ex_read(mox_buffer *buffer, size_t n)
{
    void *data = ex_xmalloc(n * mox_buffer_type(buffer)->size);
    ex_check(mox_buffer_read(buffer, 0, n, data), "reading a buffer");
    return data;
}

mox_launch_config ex_launch_config(uint32_t block, uint32_t n)
{
    mox_launch_config cfg;
    mox_status st = mox_launch_config_for_elements(block, n, &cfg);
    if (st != MOX_OK)
        ex_die("no launch config for %u elements in blocks of %u: %s: %s", n, block,
               mox_status_name(st), mox_error_last_message());
    return cfg;
}

int ex_check_f32(mox_buffer *buffer, const float *expect, size_t n, size_t len, float sentinel,
                 const char *what)
{
    float *got = ex_xmalloc(len * sizeof *got);
    int ok = mox_buffer_read(buffer, 0, len, got) == MOX_OK;
    if (!ok)
        ex_fail("%s: reading the output: %s", what, mox_error_last_message());
    for (size_t i = 0; ok && i < len; i++) {
        /* Bits, not values: -0.0f and NaN payloads must match too. */
        const float *want = i < n ? &expect[i] : &sentinel;
        if (memcmp(&got[i], want, sizeof *want) != 0) {
            ex_fail("%s: element %zu is %.9g, expected %.9g%s", what, i, (double)got[i],
                    (double)*want, i < n ? "" : " (sentinel past n)");
            ok = 0;
        }
    }
    free(got);
    return ok;
}
