/* mox/sequence.h - batches: several launches recorded into one command buffer (A5, A6).
 *
 * Launches pushed into a batch are ordered by their buffer accesses: a launch
 * that reads or writes what an earlier one wrote, or writes what it read,
 * runs after it; independent launches may run concurrently. Recording
 * happens at construction; submission happens on the first poll/wait of the
 * batch's op. An error while recording discards the whole batch.
 */
#ifndef MOX_SEQUENCE_H
#define MOX_SEQUENCE_H

#include <mox/op.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_batch mox_batch;

/* Records launches by calling record(ctx, batch) once, now. If record returns
 * an error (or a push failed), the batch is discarded: nothing will run and
 * the returned op resolves to that error. The op's result has no value.
 * The batch belongs to mox_sequence, which ends it when record returns:
 * record must only push into it. mox_batch_end / mox_batch_discard on it
 * are refused with MOX_ERR_INVALID_ARGUMENT and poison it (the sequence
 * then resolves to that error and nothing runs). */
typedef mox_status (*mox_record_fn)(void *ctx, mox_batch *batch);
MOX_API mox_op *mox_sequence(mox_device *device, mox_record_fn record, void *ctx);

/* Explicit form. begin -> push... -> end (or discard). */
MOX_API mox_status mox_batch_begin(mox_device *device, mox_batch **out);
/* Consumes `launch`, always, even on failure: an unsubmitted launch op of
 * the batch's device, or an unpolled mox_buffer_fill, mox_buffer_upload or
 * mox_buffer_copy within that device (docs/async.md, "Filling and
 * uploading"; one of 0 elements adds nothing). A failed push, whatever its code, poisons the batch:
 * later pushes fail with MOX_ERR_STATE (their launches consumed too) and
 * mox_batch_end returns the first error, so nothing of it runs. An op
 * that carries a construction error (a launch, fill, upload or copy) fails
 * the push with that error; then an op of another device (a copy's: its
 * destination's) fails with MOX_ERR_DEVICE_MISMATCH; then an op the batch
 * does not take with MOX_ERR_INVALID_ARGUMENT. An op of 0 elements (or a
 * launch of an empty grid) goes through the same checks but for "already
 * polled" - it resolved when it was made - and then adds nothing.
 * Codes: the launch's own error, MOX_ERR_DEVICE_MISMATCH, MOX_ERR_INVALID_ARGUMENT
 * (launch NULL, batch NULL - that one poisons nothing -, an op a batch does
 * not take, or one already polled), MOX_ERR_OUT_OF_MEMORY, MOX_ERR_STATE (batch poisoned).
 * Using a batch after mox_batch_end freed it is undefined. */
MOX_API mox_status mox_batch_push(mox_batch *batch, mox_op *launch);
/* Ends recording; *out is the batch op. If the batch was poisoned, returns
 * the first recording error and sets *out to NULL (nothing will run). Frees
 * the batch either way - except a mox_sequence batch, which is refused
 * (MOX_ERR_INVALID_ARGUMENT; see mox_sequence), and a NULL `out`
 * (MOX_ERR_INVALID_ARGUMENT), which leaves the batch open: end it again or
 * discard it. */
MOX_API mox_status mox_batch_end(mox_batch *batch, mox_op **out);
/* Throws the recording away; nothing runs. discard(NULL) is a no-op. On a
 * mox_sequence batch it poisons the batch instead (the sequence resolves to
 * MOX_ERR_INVALID_ARGUMENT, nothing runs; see mox_sequence). */
MOX_API void mox_batch_discard(mox_batch *batch);

#ifdef __cplusplus
}
#endif
#endif
