/* batch.c - recording several launches into one submission (A5): the
 * explicit begin/push/end form and mox_sequence on top of it. Any error
 * while recording poisons the batch: it is discarded whole, nothing runs
 * and outputs keep their values. */
#include <mox/sequence.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "op.h"
#include "record_memo.h"

struct mox_batch {
    mox_device *device;        /* retained (borrowed by a sequence's batch) */
    mox__sub *sub;
    mox_error *poison;         /* first recording error */
    bool on_stack;             /* mox_sequence's: not allocated, device borrowed */
    uint32_t magic;            /* MOX__MAGIC_BATCH while live (debug_check.h) */
};

mox_status mox_batch_begin(mox_device *device, mox_batch **out)
{
    MOX__CHECK(device, DEVICE);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_batch_begin: out is NULL");
    *out = NULL;
    if (!device)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_batch_begin: device is NULL");
    mox_batch *b = mox__calloc(1, sizeof *b);
    mox__sub *sub = b ? mox__sub_create(device) : NULL;
    if (!sub) {
        mox__free(b);
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory beginning a batch");
    }
    b->device = mox__device_ref(device);
    b->sub = sub;
    b->magic = MOX__MAGIC_BATCH;
    *out = b;
    return MOX_OK;
}

static mox_status poison(mox_batch *b, mox_error *e)
{
    if (!b->poison)
        b->poison = mox__error_ref(e);
    return mox__set_last(e);
}

mox_status mox_batch_push(mox_batch *b, mox_op *launch)
{
    MOX__CHECK(b, BATCH);
    MOX__CHECK(launch, OP);
    if (!b) {
        mox_op_drop(launch);
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_batch_push: batch is NULL");
    }
    if (b->poison) {
        mox_op_drop(launch);
        return poison(b, mox__error_create(MOX_ERR_STATE, NULL, 0, b->poison,
                                           "mox_batch_push: the batch is poisoned by an earlier "
                                           "recording error"));
    }
    if (!launch)
        return poison(b, mox__error_new(MOX_ERR_INVALID_ARGUMENT, "mox_batch_push: launch is NULL"));
    /* Only a resolved op has a result (an unpushed launch has none). */
    const mox_result *r = launch->stage == MOX__STAGE_RESOLVED ? mox_op_result(launch) : NULL;
    if (r && mox_result_status(r) != MOX_OK) {
        /* A launch that failed construction: its error poisons the batch. */
        mox_error *e = mox__error_ref(mox_result_error(r));
        mox_op_drop(launch);
        return poison(b, e);
    }
    if (launch->device && launch->device != b->device) {
        mox_op_drop(launch);
        return poison(b, mox__error_new(MOX_ERR_DEVICE_MISMATCH,
                                        "mox_batch_push: the op belongs to another device "
                                        "context than the batch"));
    }
    if (r && launch->empty_command) {
        mox_op_drop(launch); /* a fill, upload or copy of 0 elements: runs nothing */
        return MOX_OK;
    }
    bool empty = false;
    mox_op *op = launch;
    mox__dispatch *d = mox__op_take_launch(op, &empty);
    if (!d && !empty && !(d = mox__op_take_command(op))) {
        mox_op_drop(launch);
        return poison(b, mox__error_new(MOX_ERR_INVALID_ARGUMENT,
                                        "mox_batch_push: not an op a batch takes (a launch, or a "
                                        "fill, upload or copy within one device, none of them "
                                        "polled yet)"));
    }
    if (empty)
        return MOX_OK; /* validated, runs nothing */
    mox_status st = mox__sub_record(b->sub, d);
    if (st != MOX_OK)
        return poison(b, mox_error_last());
    return MOX_OK;
}

static void batch_free(mox_batch *b)
{
    mox__sub_unref(b->sub); /* frees the dispatches: nothing runs */
    mox_error_release(b->poison);
    MOX__KILL(b);
    if (b->on_stack)
        return;
    mox__device_unref(b->device);
    mox__free(b);
}

/* mox_sequence's batch is ended by mox_sequence when record() returns; a
 * record function that ends or discards it itself would free what the
 * sequence still uses. Refused, and the batch is poisoned (nothing runs). */
static mox_status refuse_sequence_batch(mox_batch *b, const char *call)
{
    return poison(b, mox__error_new(MOX_ERR_INVALID_ARGUMENT,
                                    "%s: this batch belongs to mox_sequence, which ends it when the "
                                    "record function returns; return an error from the record "
                                    "function to discard it",
                                    call));
}

void mox_batch_discard(mox_batch *b)
{
    MOX__CHECK(b, BATCH);
    if (!b)
        return;
    if (b->on_stack) {
        refuse_sequence_batch(b, "mox_batch_discard");
        return;
    }
    batch_free(b);
}

static mox_status batch_end(mox_batch *b, mox_op **out)
{
    /* Its tables complete before anything reads them (record_memo.c). */
    if (!b->poison && mox__sub_seal(b->sub) != MOX_OK)
        poison(b, mox_error_last());
    if (b->poison) {
        mox_error *e = mox__error_ref(b->poison);
        batch_free(b);
        return mox__set_last(e);
    }
    mox_op *op;
    if (b->sub->count == 0) {
        /* Nothing to run: resolves at once, submits nothing. */
        op = mox__op_ready(mox__result_ok_shared());
        mox__sub_unref(b->sub);
    } else {
        op = mox__op_submit(b->device, b->sub);
    }
    b->sub = NULL;
    batch_free(b);
    *out = op;
    return MOX_OK;
}

mox_status mox_batch_end(mox_batch *b, mox_op **out)
{
    MOX__CHECK(b, BATCH);
    if (out)
        *out = NULL;
    if (b && b->on_stack)
        return refuse_sequence_batch(b, "mox_batch_end");
    /* Bad input consumes nothing (docs/errors.md): with no `out` the batch
     * stays open, to be ended again or discarded. */
    if (!b || !out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_batch_end: %s is NULL", b ? "out" : "batch");
    return batch_end(b, out);
}

mox_op *mox_sequence(mox_device *device, mox_record_fn record, void *ctx)
{
    MOX__CHECK(device, DEVICE);
    if (!device || !record)
        return mox__op_failed(mox__error_new(MOX_ERR_INVALID_ARGUMENT, "mox_sequence: %s is NULL",
                                             device ? "record" : "device"));
    /* The batch lives only while record() runs, so it sits on the stack
     * and borrows the caller's device reference: one allocation and a
     * reference count pair less per sequence. */
    mox_batch stack = {device, mox__sub_create(device), NULL, true, MOX__MAGIC_BATCH};
    if (!stack.sub)
        return mox__op_failed(mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory beginning a batch"));
    mox_batch *b = &stack;
    mox_status st = record(ctx, b);
    if (st != MOX_OK || b->poison) {
        mox_error *e;
        if (b->poison && (st == MOX_OK || st == mox_error_code(b->poison)))
            e = mox__error_ref(b->poison);
        else
            e = mox__error_create(st, NULL, 0, b->poison,
                                  "the sequence's record function failed with %s; the batch was "
                                  "discarded",
                                  mox_status_name(st));
        batch_free(b);
        return mox__op_failed(e);
    }
    mox_op *op = NULL;
    if (batch_end(b, &op) != MOX_OK)
        return mox__op_failed(mox_error_last());
    return op;
}
