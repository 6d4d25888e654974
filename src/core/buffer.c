/* buffer.c - device buffers: creation with overflow and limit checks
 * before any memory is touched, refcounting, and host access ordered
 * through the trackers like any other work (A4, A6): blocking read/write
 * and the lazy readback op are transfer submissions, so they wait for the
 * pending writers (and, for writes, readers), even those of dropped ops. */
#include "buffer.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "op.h"
#include "type_check.h"

/* A descriptor whose size contradicts its signature would match the ABI
 * (types compare by signature) and then be sized wrongly: refused here,
 * saying what is wrong (type_check.h). */
static mox_status check_type(const mox_type *type, const char *fn)
{
    if (!type || !type->signature || !type->name)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "%s: invalid element type", fn);
    char why[400];
    if (!mox__type_check(type, why, sizeof why))
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "%s: element type '%s': %s", fn, type->name, why);
    return MOX_OK;
}

mox_status mox_buffer_create(mox_device *device, const mox_type *type, size_t length,
                             mox_buffer **out)
{
    MOX__CHECK(device, DEVICE);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_buffer_create: out is NULL");
    *out = NULL;
    if (!device)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_buffer_create: device is NULL");
    mox_status st = check_type(type, "mox_buffer_create");
    if (st != MOX_OK)
        return st;
    if (length > (size_t)PTRDIFF_MAX / type->size)
        return mox__raise(MOX_ERR_LENGTH_OVERFLOW,
                         "buffer length overflows the host address range (%zu elements of %s, "
                         "%u bytes each)",
                         length, type->name, type->size);
    uint64_t bytes = (uint64_t)length * type->size;
    /* A zero-length buffer still owns one element, so it has an address. */
    uint64_t alloc = bytes ? bytes : type->size;
    if (alloc > device->info.max_buffer_bytes)
        return mox__raise(MOX_ERR_BUFFER_TOO_LARGE,
                         "buffer size %llu bytes exceeds the device limit of %llu bytes",
                         (unsigned long long)alloc,
                         (unsigned long long)device->info.max_buffer_bytes);
    if (atomic_load(&device->health) != MOX_OK)
        return mox__raise(MOX_ERR_DEVICE_LOST, "the device was lost; reopen it");
    mox_buffer *b = mox__calloc(1, sizeof *b);
    if (!b)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory creating a buffer");
    mox_error *err = device->backend->vt->buffer_alloc(device->backend, alloc, &b->handle, &b->address);
    if (err) {
        mox__free(b);
        return mox__set_last(err);
    }
    atomic_init(&b->refs, 1);
    b->magic = MOX__MAGIC_BUFFER;
    b->device = mox__device_ref(device);
    b->type = type;
    b->length = length;
    b->bytes = bytes;
    mox__tracker_init(&b->tracker);
    *out = b;
    return MOX_OK;
}

mox_status mox_buffer_create_from(mox_device *device, const mox_type *type, size_t length,
                                  const void *data, mox_buffer **out)
{
    if (out)
        *out = NULL;
    if (length && !data)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_buffer_create_from: data is NULL");
    mox_buffer *b;
    mox_status st = mox_buffer_create(device, type, length, &b);
    if (st != MOX_OK)
        return st;
    if (b->bytes) {
        mox_error *err = device->backend->vt->buffer_upload(device->backend, b->handle, 0, data, b->bytes);
        if (err) {
            mox_buffer_release(b);
            return mox__set_last(err);
        }
    }
    *out = b;
    return MOX_OK;
}

mox_buffer *mox_buffer_retain(mox_buffer *buffer)
{
    MOX__CHECK(buffer, BUFFER);
    if (buffer)
        atomic_fetch_add_explicit(&buffer->refs, 1, memory_order_relaxed);
    return buffer;
}

void mox_buffer_release(mox_buffer *b)
{
    mox__buffer_unref(b); /* checked as mox_buffer_release */
}

void mox__buffer_destroy(mox_buffer *b)
{
    MOX__KILL(b);
    /* No submission holds it, so no device work touches it any more and
     * nobody else can reach its tracker. */
    mox__tracker_clear(&b->tracker);
    mox_device *dev = b->device;
    dev->backend->vt->buffer_free(dev->backend, b->handle);
    mox__free(b);
    mox__device_unref(dev);
}

size_t mox_buffer_length(const mox_buffer *b)
{
    return MOX__CHECK(b, BUFFER), b ? b->length : 0;
}
const mox_type *mox_buffer_type(const mox_buffer *b)
{
    return MOX__CHECK(b, BUFFER), b ? b->type : NULL;
}
mox_device *mox_buffer_device(const mox_buffer *b)
{
    return MOX__CHECK(b, BUFFER), b ? b->device : NULL;
}

/* A transfer op over [first, first+count) elements. NULL on out of memory. */
static mox_op *transfer_op(mox_buffer *b, mox__cmd_kind kind, size_t first, size_t count,
                           void *host)
{
    uint64_t off = (uint64_t)first * b->type->size;
    uint64_t bytes = (uint64_t)count * b->type->size;
    mox__sub *sub = mox__sub_create(b->device);
    if (!sub)
        return NULL;
    mox__dispatch *d = mox__transfer_alloc(b->device, kind, b, off, bytes, host);
    if (!d || mox__sub_push(sub, d) != MOX_OK) {
        mox__sub_unref(sub);
        return NULL;
    }
    mox_op *op = mox__op_alloc(MOX__OP_SUBMIT, b->device);
    if (!op) {
        mox__sub_unref(sub);
        return NULL;
    }
    op->u.submit.sub = sub;
    return op;
}

static mox_status host_copy(mox_buffer *b, size_t first, size_t count, void *host,
                            mox__cmd_kind kind, const char *fn)
{
    if (!b || (count && !host))
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, b ? "data" : "buffer");
    if (first > b->length || count > b->length - first)
        return mox__raise(MOX_ERR_OUT_OF_RANGE,
                         "%s: elements [%zu, %zu+%zu) are outside the buffer of %zu elements", fn,
                         first, first, count, b->length);
    if (count == 0)
        return MOX_OK;
    mox_op *op = transfer_op(b, kind, first, count, host);
    if (!op)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory in %s", fn);
    mox_status st = mox_op_wait(op);
    if (st != MOX_OK)
        mox__set_last(mox__error_ref(mox_result_error(mox_op_result(op))));
    mox_op_drop(op);
    return st;
}

mox_status mox_buffer_read(mox_buffer *b, size_t first, size_t count, void *dst)
{
    MOX__CHECK(b, BUFFER);
    return host_copy(b, first, count, dst, MOX__CMD_DOWNLOAD, "mox_buffer_read");
}

mox_status mox_buffer_write(mox_buffer *b, size_t first, size_t count, const void *src)
{
    MOX__CHECK(b, BUFFER);
    return host_copy(b, first, count, (void *)src, MOX__CMD_UPLOAD, "mox_buffer_write");
}

mox_op *mox_buffer_readback(mox_buffer *b)
{
    MOX__CHECK(b, BUFFER);
    if (!b)
        return mox__op_failed(mox__error_new(MOX_ERR_INVALID_ARGUMENT,
                                             "mox_buffer_readback: buffer is NULL"));
    if (b->bytes == 0)
        return mox__op_ready(mox__result_bytes(mox__malloc(1), 0));
    /* The bytes are allocated at the first poll, not now (A1). */
    mox_op *op = transfer_op(b, MOX__CMD_DOWNLOAD, 0, b->length, NULL);
    if (!op)
        return mox__op_failed(mox__error_oom());
    op->u.submit.sub->yields_bytes = true;
    op->u.submit.sub->owned_size = (size_t)b->bytes;
    return op;
}
