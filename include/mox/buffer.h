/* mox/buffer.h - device buffers: typed, refcounted, zero-initialised.
 *
 * Host access (read, write, readback ops) is ordered after all pending
 * device work that touches the buffer, even work whose op was dropped.
 */
#ifndef MOX_BUFFER_H
#define MOX_BUFFER_H

#include <mox/device.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_buffer mox_buffer;
typedef struct mox_op mox_op;

/* A zeroed buffer of `length` elements of `type` (length 0 is allowed).
 * Checks overflow and the device limit before allocating.
 * Codes: MOX_ERR_INVALID_ARGUMENT, MOX_ERR_LENGTH_OVERFLOW,
 * MOX_ERR_BUFFER_TOO_LARGE, MOX_ERR_ALLOCATION_FAILED, MOX_ERR_OUT_OF_MEMORY. */
MOX_API mox_status mox_buffer_create(mox_device *device, const mox_type *type, size_t length,
                                     mox_buffer **out);
/* A buffer initialised from `length` elements at `data` (size*length bytes). */
MOX_API mox_status mox_buffer_create_from(mox_device *device, const mox_type *type, size_t length,
                                          const void *data, mox_buffer **out);
MOX_API mox_buffer *mox_buffer_retain(mox_buffer *buffer);
/* Never blocks; pending work keeps its own reference. release(NULL) is a
 * no-op; releasing a reference twice is undefined (a debug build aborts). */
MOX_API void mox_buffer_release(mox_buffer *buffer);

/* Getters, setting no error: on NULL they return 0, NULL, NULL. */
MOX_API size_t mox_buffer_length(const mox_buffer *buffer);
MOX_API const mox_type *mox_buffer_type(const mox_buffer *buffer);
MOX_API mox_device *mox_buffer_device(const mox_buffer *buffer); /* borrowed */

/* Blocking host copies of elements [first, first+count). They wait for pending
 * writers (read) or pending readers and writers (write) first.
 * Codes: MOX_ERR_OUT_OF_RANGE, MOX_ERR_INVALID_ARGUMENT, MOX_ERR_BACKEND, MOX_ERR_DEVICE_LOST. */
MOX_API mox_status mox_buffer_read(mox_buffer *buffer, size_t first, size_t count, void *dst);
MOX_API mox_status mox_buffer_write(mox_buffer *buffer, size_t first, size_t count, const void *src);

/* Lazy async readback of the whole buffer (A4): an op whose result holds a
 * copy of the bytes (mox_result_bytes), ordered after the buffer's writers. */
MOX_API mox_op *mox_buffer_readback(mox_buffer *buffer);

/* Lazy copy of elements src[src_first, +count) into dst[dst_first, +count)
 * (docs/multi-device.md): an op like a launch (A1: nothing happens before
 * the first poll), whose result yields {src, dst} back (A4). It reads src
 * and writes dst: ordered after src's pending writers and dst's pending
 * readers and writers, and before later work on either (A6), on whatever
 * devices they are. Between devices of one backend it is device work on
 * the destination's device (a peer copy where the devices can reach each
 * other) and is gated like a dispatch (A9): a copy of the output of an
 * unfinished writer that fails resolves MOX_ERR_GATED with that failure as
 * cause, copies nothing, and gates what reads dst after it. Between
 * backends it is staged through host memory (a readback of src, then a
 * write of dst, both ordered at submission) and, like host access, never
 * gated. count 0 resolves OK at once when the element types agree and
 * both ranges start inside their buffers (src_first <= src length,
 * dst_first <= dst length; past the end is MOX_ERR_OUT_OF_RANGE, as for
 * any count). Errors (a resolved op):
 * MOX_ERR_INVALID_ARGUMENT (NULL buffer, element types differ, overlapping
 * ranges of one buffer), MOX_ERR_OUT_OF_RANGE, checked in this order: a
 * NULL buffer, the element types (also for count 0), the source's range,
 * the destination's, the overlap; at submission
 * MOX_ERR_DEVICE_LOST (either device lost), MOX_ERR_OUT_OF_MEMORY.
 * A copy within one device, not polled yet, can be pushed into a batch
 * (mox_batch_push), as fills and uploads can. */
MOX_API mox_op *mox_buffer_copy(mox_buffer *src, size_t src_first, mox_buffer *dst,
                                size_t dst_first, size_t count);

/* Lazy write of elements [first, first+count) from `src` (docs/async.md,
 * "Filling and uploading"): the bytes are copied now - src may be reused
 * or freed as soon as this returns - and written when the op is submitted
 * (A1: its first poll or wait), ordered like mox_buffer_write: after the
 * buffer's pending readers and writers, before later work on it (A6). A
 * host transfer, never gated (A9), like mox_buffer_write. Its result
 * yields {buffer} (A4). count 0 resolves OK at once (first <= length; src
 * may be NULL then). Errors (a resolved op): MOX_ERR_INVALID_ARGUMENT
 * (NULL buffer, NULL src with count > 0), MOX_ERR_OUT_OF_RANGE,
 * MOX_ERR_OUT_OF_MEMORY (no memory for the copy); at submission
 * MOX_ERR_DEVICE_LOST, MOX_ERR_BACKEND. Not polled yet, it can be pushed
 * into a batch of its device instead (mox_batch_push). */
MOX_API mox_op *mox_buffer_upload(mox_buffer *buffer, size_t first, size_t count, const void *src);

/* Lazy fill: sets elements [first, first+count) to the one element at
 * `value` (the buffer type's size in bytes, copied now), on the device,
 * when the op is submitted (A1). Ordered like a dispatch that writes the
 * buffer (A6) and, like a copy, device work that is gated (A9): a fill
 * behind an unfinished writer of the buffer that fails resolves
 * MOX_ERR_GATED with that failure as cause, writes nothing, and gates
 * what reads the buffer after it. Its result yields {buffer} (A4). count
 * 0 resolves OK at once (first <= length; value may be NULL then).
 * Errors (a resolved op, checked in this order): MOX_ERR_INVALID_ARGUMENT
 * (NULL buffer, NULL value with count > 0), MOX_ERR_OUT_OF_RANGE, then,
 * count > 0 only, MOX_ERR_INVALID_ARGUMENT for an element type of more
 * than 128 bytes; MOX_ERR_GATED; at submission MOX_ERR_DEVICE_LOST,
 * MOX_ERR_OUT_OF_MEMORY, MOX_ERR_BACKEND. Not polled yet, it can be pushed
 * into a batch of its device instead (mox_batch_push): a clear and the
 * kernels that use the buffer then make one submission. */
MOX_API mox_op *mox_buffer_fill(mox_buffer *buffer, size_t first, size_t count, const void *value);

#ifdef __cplusplus
}
#endif
#endif
