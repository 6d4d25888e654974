/* dispatch.c - dispatch storage: a kernel dispatch, a transfer or a copy
 * in one zeroed block with its arguments, parameters, value copies and the
 * backend's scratch; a launch's op may share the block (op.c). */
#include "submission.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* What precedes a dispatch whose block also holds a head (a launch op,
 * op.c): how many of the two still use the block, and its size. The
 * dispatch and the head end independently (a driven launch's op may
 * outlive its dispatch, or the other way round, on different threads):
 * the last one frees the block. */
typedef struct block_share {
    _Atomic uint32_t users;
    uint32_t size;
} block_share;

enum { SHARE_ROOM = 16 }; /* keeps what follows 16-aligned */
_Static_assert(sizeof(block_share) <= SHARE_ROOM, "block_share outgrew its room");

static void share_release(block_share *share)
{
    if (mox__block_last_user(&share->users))
        mox__block_free(share, share->size);
}

static mox__dispatch *dispatch_alloc_raw(mox_device *device, uint32_t arg_count, size_t value_bytes,
                                         size_t head, void ***params_out, void ***addr_out,
                                         unsigned char **values)
{
    size_t off_d = head ? SHARE_ROOM + align_up(head, 16) : 0;
    size_t off_args = off_d + align_up(sizeof(mox__dispatch), 16);
    size_t off_params = align_up(off_args + arg_count * sizeof(mox__karg), 16);
    size_t off_addr = off_params + arg_count * sizeof(void *);
    size_t off_values = align_up(off_addr + arg_count * sizeof(void *), 16);
    size_t off_be = align_up(off_values + value_bytes, 16);
    /* A zeroed block (cheaper than an aligned allocation); the backend's
     * scratch area is aligned to 64 inside it. */
    size_t be_size = device->info.dispatch_state_size;
    size_t total = off_be + (be_size ? be_size + 63 : 0);
    unsigned char *p = mox__block_alloc(total);
    if (!p)
        return NULL;
    memset(p, 0, total);
    if (head) {
        block_share *share = (block_share *)p;
        atomic_init(&share->users, 2);
        share->size = (uint32_t)total;
    }
    mox__dispatch *d = (mox__dispatch *)(p + off_d);
    d->args = (mox__karg *)(p + off_args);
    d->arg_count = arg_count;
    *params_out = (void **)(p + off_params);
    *addr_out = (void **)(p + off_addr);
    if (values)
        *values = p + off_values;
    d->be = be_size ? (void *)(((uintptr_t)(p + off_be) + 63u) & ~(uintptr_t)63u) : NULL;
    d->storage = p;
    d->storage_size = total;
    return d;
}

mox__dispatch *mox__dispatch_alloc(mox_device *device, uint32_t arg_count, size_t value_bytes,
                                   unsigned char **values)
{
    return mox__dispatch_alloc_headed(device, arg_count, value_bytes, values, 0);
}

mox__dispatch *mox__dispatch_alloc_headed(mox_device *device, uint32_t arg_count,
                                          size_t value_bytes, unsigned char **values, size_t head)
{
    void **params, **addr;
    mox__dispatch *d =
        dispatch_alloc_raw(device, arg_count, value_bytes, head, &params, &addr, values);
    if (!d)
        return NULL;
    d->kind = MOX__CMD_KERNEL;
    d->param_count = arg_count;
    d->params = params;
    /* Params of buffers point at their address slot: launch.c fills the
     * slot (and value params) as it copies arguments. */
    for (uint32_t i = 0; i < arg_count; i++)
        params[i] = &addr[i];
    return d;
}

void *mox__dispatch_head(mox__dispatch *d) { return (unsigned char *)d->storage + SHARE_ROOM; }

void mox__dispatch_head_free(void *head)
{
    share_release((block_share *)((unsigned char *)head - SHARE_ROOM));
}

mox__dispatch *mox__transfer_alloc(mox_device *device, mox__cmd_kind kind, mox_buffer *buffer,
                                   uint64_t offset, uint64_t bytes, void *host)
{
    void **params, **addr;
    mox__dispatch *d = dispatch_alloc_raw(device, 1, 0, 0, &params, &addr, NULL);
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

mox__dispatch *mox__copy_alloc(mox_device *device, mox_buffer *src, uint64_t src_offset,
                               mox_buffer *dst, uint64_t dst_offset, uint64_t bytes)
{
    void **params, **addr;
    mox__dispatch *d = dispatch_alloc_raw(device, 2, 0, 0, &params, &addr, NULL);
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
    d->args[0].buffer = mox_buffer_retain(src);
    d->args[0].access = MOX_ACCESS_READ;
    d->args[1].buffer = mox_buffer_retain(dst);
    d->args[1].access = MOX_ACCESS_WRITE;
    return d;
}

void mox__dispatch_free(mox__dispatch *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->arg_count; i++)
        mox_buffer_release(d->args[i].buffer);
    mox__dispatch_free_released(d);
}

void mox__dispatch_free_released(mox__dispatch *d)
{
    mox_error_release(d->error);
    mox_error_release(atomic_load(&d->cause));
    if (d->storage != (void *)d)
        share_release(d->storage); /* a head precedes it */
    else
        mox__block_free(d->storage, d->storage_size);
}

