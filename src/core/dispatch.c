/* dispatch.c - dispatch storage: a kernel dispatch, a transfer, a copy or a fill
 * in one zeroed block with its arguments, parameters, value copies and the
 * backend's scratch; a launch's op may share the block (op.c). */
#include "submission.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

void mox__dispatch_layout_of(const mox_device *device, uint32_t arg_count, size_t value_bytes,
                             size_t head, mox__dispatch_layout *l)
{
    size_t off_d = head ? MOX__SHARE_ROOM + align_up(head, 16) : 0;
    size_t off_args = off_d + align_up(sizeof(mox__dispatch), 16);
    size_t off_params = align_up(off_args + arg_count * sizeof(mox__karg), 16);
    size_t off_addr = off_params + arg_count * sizeof(void *);
    size_t off_values = align_up(off_addr + arg_count * sizeof(void *), 16);
    size_t off_be = align_up(off_values + value_bytes, 16);
    /* The backend's scratch area is aligned to 64 inside the block. */
    size_t be_size = device->info.dispatch_state_size;
    *l = (mox__dispatch_layout){
        .total = (uint32_t)(off_be + (be_size ? be_size + 63 : 0)),
        .arg_count = arg_count,
        .head = head != 0,
        .has_be = be_size != 0,
        .off_d = (uint32_t)off_d,
        .off_args = (uint32_t)off_args,
        .off_params = (uint32_t)off_params,
        .off_values = (uint32_t)off_values,
        .off_be = (uint32_t)off_be,
    };
}

/* A dispatch of `arg_count` arguments and no head; *parts says where its
 * parameters, their address slots and its value copies lie. */
static mox__dispatch *dispatch_alloc_raw(mox_device *device, uint32_t arg_count,
                                         size_t value_bytes, mox__dispatch_parts *parts)
{
    mox__dispatch_layout l;
    mox__dispatch_layout_of(device, arg_count, value_bytes, 0, &l);
    return mox__dispatch_alloc_laid(&l, parts);
}

mox__dispatch *mox__dispatch_alloc(mox_device *device, uint32_t arg_count, size_t value_bytes,
                                   unsigned char **values)
{
    mox__dispatch_parts parts;
    mox__dispatch *d = dispatch_alloc_raw(device, arg_count, value_bytes, &parts);
    if (!d)
        return NULL;
    d->kind = MOX__CMD_KERNEL;
    d->param_count = arg_count;
    d->params = parts.params;
    if (values)
        *values = parts.values;
    /* Params of buffers point at their address slot: the caller fills the
     * slot (and value params). */
    for (uint32_t i = 0; i < arg_count; i++)
        parts.params[i] = &parts.addr[i];
    return d;
}


/* A transfer of `value_bytes` of operand storage (*parts) on `buffer`
 * (retained). */
static mox__dispatch *transfer_alloc_with(mox_device *device, mox__cmd_kind kind, mox_buffer *buffer,
                                          uint64_t offset, uint64_t bytes, void *host,
                                          size_t value_bytes, mox__dispatch_parts *parts)
{
    mox__dispatch *d = dispatch_alloc_raw(device, 1, value_bytes, parts);
    if (!d)
        return NULL;
    d->kind = kind;
    d->kernel_name = kind == MOX__CMD_DOWNLOAD ? "(download)" : "(upload)";
    d->buffer = buffer->handle;
    d->address = buffer->address;
    d->offset = offset;
    d->bytes = bytes;
    d->host = host;
    d->args[0].buffer = mox_buffer_retain(buffer);
    d->args[0].access = kind == MOX__CMD_DOWNLOAD ? MOX_ACCESS_READ : MOX_ACCESS_WRITE;
    return d;
}

mox__dispatch *mox__transfer_alloc(mox_device *device, mox__cmd_kind kind, mox_buffer *buffer,
                                   uint64_t offset, uint64_t bytes, void *host)
{
    mox__dispatch_parts parts;
    return transfer_alloc_with(device, kind, buffer, offset, bytes, host, 0, &parts);
}

mox__dispatch *mox__upload_alloc(mox_device *device, mox_buffer *buffer, uint64_t offset,
                                 uint64_t bytes)
{
    mox__backend *be = device->backend;
    uint64_t device_address = 0;
    void *host = be->vt->host_alloc ? be->vt->host_alloc(be, (size_t)bytes, &device_address) : NULL;
    bool lent = host != NULL;
    if (!lent && !(host = mox__malloc((size_t)bytes)))
        return NULL;
    mox__dispatch_parts parts;
    mox__dispatch *d = transfer_alloc_with(device, MOX__CMD_UPLOAD, buffer, offset, bytes, host,
                                           lent ? sizeof(mox__copy_operands) : 0, &parts);
    if (!d) {
        if (lent)
            be->vt->host_free(be, host);
        else
            mox__free(host);
        return NULL;
    }
    d->owned_host = host; /* the dispatch's: it may move into a batch (mox_batch_push) */
    if (lent) {
        d->owned_host_be = be;
        d->src_address = (void *)(uintptr_t)device_address;
        mox__copy_operands_set(d, (mox__copy_operands *)(void *)parts.values);
    }
    return d;
}

void mox__dispatch_host_release(mox__dispatch *d)
{
    mox__backend *be = d->owned_host_be;
    if (be)
        be->vt->host_free(be, d->owned_host);
    else
        mox__free(d->owned_host);
    d->owned_host = NULL;
    d->owned_host_be = NULL;
}

mox__dispatch *mox__copy_alloc(mox_device *device, mox_buffer *src, uint64_t src_offset,
                               mox_buffer *dst, uint64_t dst_offset, uint64_t bytes)
{
    mox__dispatch_parts parts;
    mox__dispatch *d = dispatch_alloc_raw(device, 2, sizeof(mox__copy_operands), &parts);
    if (!d)
        return NULL;
    d->kind = MOX__CMD_COPY;
    d->kernel_name = "(copy)";
    d->buffer = dst->handle;
    d->address = dst->address;
    d->offset = dst_offset;
    d->bytes = bytes;
    d->src_device = src->device->backend;
    d->src_buffer = src->handle;
    d->src_address = src->address;
    d->src_offset = src_offset;
    mox__copy_operands_set(d, (mox__copy_operands *)(void *)parts.values);
    d->args[0].buffer = mox_buffer_retain(src);
    d->args[0].access = MOX_ACCESS_READ;
    d->args[1].buffer = mox_buffer_retain(dst);
    d->args[1].access = MOX_ACCESS_WRITE;
    return d;
}

mox__dispatch *mox__fill_alloc(mox_device *device, mox_buffer *dst, uint64_t dst_offset,
                               uint64_t bytes, const void *pattern, uint32_t pattern_size)
{
    mox__dispatch_parts parts;
    mox__dispatch *d = dispatch_alloc_raw(device, 1, sizeof(mox__fill_operands), &parts);
    if (!d)
        return NULL;
    d->kind = MOX__CMD_FILL;
    d->kernel_name = "(fill)";
    d->buffer = dst->handle;
    d->address = dst->address;
    d->offset = dst_offset;
    d->bytes = bytes;
    mox__fill_operands_set(d, (mox__fill_operands *)(void *)parts.values, pattern, pattern_size);
    d->args[0].buffer = mox_buffer_retain(dst);
    d->args[0].access = MOX_ACCESS_WRITE;
    return d;
}

void mox__dispatch_free(mox__dispatch *d)
{
    if (!d)
        return;
    /* before the buffers: the last one may take the device, and the
     * backend that lent the memory, with it */
    if (d->owned_host)
        mox__dispatch_host_release(d);
    for (uint32_t i = 0; i < d->arg_count; i++)
        mox__buffer_unref(d->args[i].buffer);
    mox__dispatch_free_released(d);
}

void mox__dispatch_release_errors(mox__dispatch *d)
{
    mox_error_release(d->error);
    mox_error_release(atomic_load(&d->cause));
}

