/* buffer_ops.c - the lazy buffer ops that write a range of one buffer
 * (docs/async.md, "Filling and uploading"): mox_buffer_upload, a host
 * write whose bytes are copied when the op is made and written when it is
 * submitted, and mox_buffer_fill, device work that repeats one element.
 * Each is one command in a submission of its own, ordered through the
 * buffer's tracker like any batch (A6); the op yields {buffer} (A4). */
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "op.h"

/* NULL when [first, first+count) lies in `b` and the data pointer is
 * there, else the resolved op saying why. */
static mox_op *check_range(const mox_buffer *b, size_t first, size_t count, const void *data,
                           const char *fn, const char *what)
{
    if (!b || (count && !data))
        return mox__op_failed(mox__error_new(MOX_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                                             b ? what : "buffer"));
    if (first > b->length || count > b->length - first)
        return mox__op_failed(mox__error_new(
            MOX_ERR_OUT_OF_RANGE, "%s: elements [%zu, %zu+%zu) are outside the buffer of %zu elements",
            fn, first, first, count, b->length));
    return NULL;
}

static mox_op *yields_buffer_now(mox_buffer *b)
{
    mox_buffer *bufs[1] = {mox_buffer_retain(b)};
    mox_op *op = mox__op_ready(mox__result_args(bufs, 1));
    if (!op->immortal) { /* not the out-of-memory op */
        op->empty_command = true;
        op->device = mox__device_ref(b->device); /* mox_batch_push checks it */
    }
    return op;
}

/* The op of a one-command submission on b's device that yields {b}; takes
 * `d` (NULL: out of memory). */
static mox_op *single_command(mox_buffer *b, mox__dispatch *d)
{
    mox__sub *sub = d ? mox__sub_create(b->device) : NULL;
    if (!sub || mox__sub_push(sub, d) != MOX_OK) {
        if (!sub)
            mox__dispatch_free(d);
        mox__sub_unref(sub);
        return mox__op_failed(mox__error_oom());
    }
    sub->yield_count = 1;
    sub->yield_bufs[0] = mox_buffer_retain(b);
    return mox__op_submit(b->device, sub);
}

mox_op *mox_buffer_upload(mox_buffer *b, size_t first, size_t count, const void *src)
{
    MOX__CHECK(b, BUFFER);
    mox_op *refused = check_range(b, first, count, src, "mox_buffer_upload", "src");
    if (refused)
        return refused;
    if (count == 0)
        return yields_buffer_now(b);
    uint64_t size = b->type->size;
    size_t bytes = (size_t)(count * size);
    /* the copy goes where the device can read it in place, if it has such
     * memory (the CUDA backend's pinned staging) */
    mox__dispatch *d = mox__upload_alloc(b->device, b, first * size, bytes);
    if (!d)
        return mox__op_failed(mox__error_new(MOX_ERR_OUT_OF_MEMORY,
                                             "mox_buffer_upload: out of memory copying %zu bytes",
                                             bytes));
    memcpy(d->host, src, bytes);
    return single_command(b, d);
}

mox_op *mox_buffer_fill(mox_buffer *b, size_t first, size_t count, const void *value)
{
    MOX__CHECK(b, BUFFER);
    mox_op *refused = check_range(b, first, count, value, "mox_buffer_fill", "value");
    if (refused)
        return refused;
    if (count == 0)
        return yields_buffer_now(b);
    uint32_t size = b->type->size;
    if (size > MOX__FILL_MAX_PATTERN)
        return mox__op_failed(mox__error_new(
            MOX_ERR_INVALID_ARGUMENT,
            "mox_buffer_fill: elements of type '%s' are %u bytes; a fill repeats elements of at "
            "most %u bytes (write a kernel for larger ones)",
            b->type->name, size, MOX__FILL_MAX_PATTERN));
    mox__dispatch *d = mox__fill_alloc(b->device, b, (uint64_t)first * size, (uint64_t)count * size,
                                       value, size);
    return single_command(b, d);
}
