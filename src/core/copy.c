/* copy.c - mox_buffer_copy (docs/multi-device.md): a lazy op that reads
 * one buffer and writes another, on one device or two. Between devices of
 * one backend it is one COPY command executed by the destination's device
 * (the source is another context: its lock joins the destination's at
 * preparation, prepare.c); between backends it is staged through host
 * memory: a download on the source's device into a stage, then an upload
 * on the destination's device that waits for it, both prepared together so
 * that the copy takes its place in both devices' orders at submission. */
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "op.h"

static mox_op *copy_failed(mox_status code, const char *fmt, const char *a, const char *b)
{
    return mox__op_failed(mox__error_new(code, fmt, a, b));
}

/* NULL when the arguments make a copy, else the resolved op saying why. */
static mox_op *check_args(mox_buffer *src, size_t src_first, mox_buffer *dst, size_t dst_first,
                          size_t count)
{
    if (!src || !dst)
        return copy_failed(MOX_ERR_INVALID_ARGUMENT, "mox_buffer_copy: %s is NULL%s",
                           src ? "dst" : "src", "");
    if (!mox_type_equal(src->type, dst->type))
        return copy_failed(MOX_ERR_INVALID_ARGUMENT,
                           "mox_buffer_copy: the element types differ (src %s, dst %s)",
                           src->type->name, dst->type->name);
    const struct {
        const mox_buffer *b;
        size_t first;
        const char *which;
    } sides[2] = {{src, src_first, "source"}, {dst, dst_first, "destination"}};
    for (int i = 0; i < 2; i++) {
        if (sides[i].first > sides[i].b->length || count > sides[i].b->length - sides[i].first)
            return mox__op_failed(mox__error_new(
                MOX_ERR_OUT_OF_RANGE,
                "mox_buffer_copy: %s elements [%zu, %zu+%zu) are outside the buffer of %zu "
                "elements",
                sides[i].which, sides[i].first, sides[i].first, count, sides[i].b->length));
    }
    if (src == dst && count && src_first < dst_first + count && dst_first < src_first + count)
        return mox__op_failed(mox__error_new(
            MOX_ERR_INVALID_ARGUMENT,
            "mox_buffer_copy: elements [%zu, %zu+%zu) and [%zu, %zu+%zu) of one buffer overlap",
            src_first, src_first, count, dst_first, dst_first, count));
    return NULL;
}

/* One COPY command on the destination's device. */
static mox__sub *direct_copy(mox_buffer *src, uint64_t src_off, mox_buffer *dst, uint64_t dst_off,
                             uint64_t bytes)
{
    mox__sub *sub = mox__sub_create(dst->device);
    if (!sub)
        return NULL;
    mox__dispatch *d = mox__copy_alloc(dst->device, src, src_off, dst, dst_off, bytes);
    if (!d || mox__sub_push(sub, d) != MOX_OK) {
        mox__sub_unref(sub);
        return NULL;
    }
    return sub;
}

/* A download on the source's device (into a stage allocated when the copy
 * is prepared) and the upload on the destination's device that waits for
 * it. Host transfers: never gated, like mox_buffer_read and _write. */
static mox__sub *staged_copy(mox_buffer *src, uint64_t src_off, mox_buffer *dst, uint64_t dst_off,
                             uint64_t bytes)
{
    mox__sub *down = mox__sub_create(src->device);
    mox__sub *up = mox__sub_create(dst->device);
    mox__dispatch *dd = down ? mox__transfer_alloc(src->device, MOX__CMD_DOWNLOAD, src, src_off,
                                                   bytes, NULL)
                             : NULL;
    if (!down || !up || !dd || mox__sub_push(down, dd) != MOX_OK) {
        if (!down || !up)
            mox__dispatch_free(dd);
        mox__sub_unref(down);
        mox__sub_unref(up);
        return NULL;
    }
    mox__dispatch *du = mox__transfer_alloc(dst->device, MOX__CMD_UPLOAD, dst, dst_off, bytes, NULL);
    if (!du || mox__sub_push(up, du) != MOX_OK) {
        mox__sub_unref(down);
        mox__sub_unref(up);
        return NULL;
    }
    down->detached = true; /* nobody takes its result */
    down->owned_size = (size_t)bytes;
    up->staged = down;
    return up;
}

mox_op *mox_buffer_copy(mox_buffer *src, size_t src_first, mox_buffer *dst, size_t dst_first,
                        size_t count)
{
    mox_op *refused = check_args(src, src_first, dst, dst_first, count);
    if (refused)
        return refused;
    if (count == 0) {
        mox_buffer *bufs[2] = {mox_buffer_retain(src), mox_buffer_retain(dst)};
        mox_op *op = mox__op_ready(mox__result_args(bufs, 2));
        /* mox_batch_push checks its device (the destination's), as with
         * any count; then it takes one within one device (and adds
         * nothing) and refuses one across devices. */
        if (!op->immortal) {
            op->empty_command = src->device == dst->device;
            op->device = mox__device_ref(dst->device);
        }
        return op;
    }
    uint64_t size = src->type->size;
    uint64_t bytes = (uint64_t)count * size;
    mox__sub *sub = src->device->kind == dst->device->kind
                        ? direct_copy(src, src_first * size, dst, dst_first * size, bytes)
                        : staged_copy(src, src_first * size, dst, dst_first * size, bytes);
    if (!sub)
        return mox__op_failed(mox__error_oom());
    if (src->device != dst->device)
        sub->other = mox__device_ref(src->device);
    sub->yield_count = 2;
    sub->yield_bufs[0] = mox_buffer_retain(src);
    sub->yield_bufs[1] = mox_buffer_retain(dst);
    return mox__op_submit(dst->device, sub);
}
