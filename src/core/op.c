/* op.c - the op state machine (rules A1-A3, A8): construction submits
 * nothing; the first poll of a launch or batch moves it through the
 * admission queue (PENDING while a module of the batch is being
 * prepared or command capacity is exhausted; it keeps its place in the
 * order) and submission (PENDING while the device executes);
 * dropping at any stage releases what the op holds without blocking on
 * device work. Composition (then/map/share) is in compose.c. */
#include "op.h"

#include <string.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "trace.h"

/* Returned when there is no memory for an op: resolved, out of memory. */
static mox_op oom_op = {.magic = MOX__MAGIC_OP, .kind = MOX__OP_READY,
                        .stage = MOX__STAGE_RESOLVED, .immortal = true};

mox_op *mox__op_alloc(mox__op_kind kind, mox_device *device)
{
    mox_op *op = mox__block_alloc(sizeof *op);
    if (!op)
        return NULL;
    mox__zero_fixed(op, sizeof *op); /* its cell is initialised (mox__cell_init's state) */
    op->magic = MOX__MAGIC_OP;
    op->kind = kind;
    op->stage = MOX__STAGE_RECORDED;
    op->device = device ? mox__device_ref(device) : NULL;
    if (mox__trace_on())
        mox__trace_op_new(op);
    return op;
}

void mox__launch_discard(mox__dispatch *d)
{
    void *head = mox__dispatch_head(d);
    mox__dispatch_free(d);
    mox__dispatch_head_free(head);
}

void mox__op_free_shell(mox_op *op)
{
    if (mox__trace_on())
        mox__trace_op_end(op);
    mox__cell_destroy(&op->cell);
    mox__device_unref(op->device);
    MOX__KILL(op);
    if (op->in_sub_block) {
        /* Its batch may live on in the block (trackers, the backend). */
        MOX__POISON(op, sizeof *op);
        mox__sub_block_release(mox__sub_of_op_room(op));
        return;
    }
    if (!op->in_dispatch_block) {
        mox__block_free(op, sizeof *op);
        return;
    }
    /* Its dispatch may live on in the block (pushed into a batch): a use
     * of the dead op is still reported. */
    MOX__POISON(op, sizeof *op);
    mox__dispatch_head_free(op);
}

mox_op *mox__op_ready(const mox_result *result)
{
    mox_op *op = mox__op_alloc(MOX__OP_READY, NULL);
    if (!op) {
        mox_result_release(result);
        return &oom_op;
    }
    op->result = result;
    op->stage = MOX__STAGE_RESOLVED;
    if (mox__trace_on())
        mox__trace_op_resolved(op);
    return op;
}

mox_op *mox__op_failed(mox_error *error) { return mox__op_ready(mox__result_error(error)); }

_Static_assert(sizeof(mox_op) <= MOX__SUB_OP_ROOM, "mox_op outgrew its room in a batch's block");

mox_op *mox__op_submit(mox_device *device, mox__sub *sub)
{
    /* In the room of the batch's block: a batch has one op, made here once
     * (a single launch's batch keeps its launch op, and leaves the room). */
    mox_op *op = mox__sub_op_room(sub);
    mox__zero_fixed(op, sizeof *op); /* its cell is initialised (mox__cell_init's state) */
    op->magic = MOX__MAGIC_OP;
    op->kind = MOX__OP_SUBMIT;
    op->stage = MOX__STAGE_RECORDED;
    op->in_sub_block = true;
    op->device = device ? mox__device_ref(device) : NULL;
    sub->op_in_block = true;
    atomic_store_explicit(&sub->block_users, 2, memory_order_relaxed); /* not shared yet */
    if (mox__trace_on())
        mox__trace_op_new(op);
    op->u.submit.sub = sub;
    return op;
}

static void resolve(mox_op *op, const mox_result *result)
{
    op->result = result;
    op->stage = MOX__STAGE_RESOLVED;
}

static mox_poll_state fail_unsubmitted(mox_op *op, const mox_result *result)
{
    mox__cell_quiesce(&op->cell);
    mox__sub_unref(op->u.submit.sub); /* never submitted: nothing runs */
    op->u.submit.sub = NULL;
    resolve(op, result);
    return MOX_READY;
}

/* Looks at the modules of the batch's kernels at its first poll: loaded
 * ones go into their dispatches; one still to load is requested and marks
 * the batch `modules_pending`, so that it waits in the admission queue,
 * which keeps its place in the order (A6), until the preparation worker
 * has it (admission.c). False, with *failed, when a module failed; a
 * preparation that failed for lack of memory is retried. */
static bool modules_check(mox_op *op, mox__sub *sub, const mox_result **failed)
{
    mox_device *dev = op->device;
    if (!sub->unloaded)
        return true; /* every kernel's module was loaded at its launch */
    for (uint32_t i = 0; i < sub->count; i++) {
        mox__dispatch *d = sub->d[i];
        if (d->kind != MOX__CMD_KERNEL || d->module)
            continue;
        mox__devmod *dm = d->devmod;
        int st = atomic_load_explicit(&dm->state, memory_order_acquire);
        if (st != MOX__MOD_READY) {
            mox__lock(&dev->lock);
            mox__devmod_retry_locked(dm);
            st = atomic_load_explicit(&dm->state, memory_order_acquire);
            if (st == MOX__MOD_NONE)
                mox__devmod_request(dev, dm);
            mox__unlock(&dev->lock);
        }
        if (st == MOX__MOD_FAILED) {
            *failed = mox__result_error(mox__devmod_error(dev, dm));
            return false;
        }
        if (st == MOX__MOD_READY)
            d->module = dm->handle;
        else
            sub->modules_pending = true;
    }
    return true;
}

static mox_poll_state poll_submit(mox_op *op, mox_waker waker)
{
    mox__sub *sub = op->u.submit.sub;
    /* A batch that is done resolves below without the waker: the common
     * case of a pipeline's later wait. */
    bool done = op->stage >= MOX__STAGE_CAPACITY &&
                atomic_load_explicit(&sub->done, memory_order_acquire);
    if (!done)
        mox__cell_arm(&op->cell, waker);
    switch (op->stage) {
    case MOX__STAGE_RECORDED: {
        const mox_result *failed = NULL;
        if (!modules_check(op, sub, &failed))
            return fail_unsubmitted(op, failed);
        if (sub->yields_bytes && !sub->owned_host) {
            sub->owned_host = mox__malloc(sub->owned_size ? sub->owned_size : 1);
            if (!sub->owned_host)
                return fail_unsubmitted(op, mox__result_error(mox__error_new(
                                                MOX_ERR_OUT_OF_MEMORY,
                                                "out of memory allocating %zu readback bytes",
                                                sub->owned_size)));
            sub->d[0]->host = sub->owned_host;
        }
        mox_error *err = NULL;
        if (mox__trace_on())
            mox__trace_op_submit(op, sub);
        /* Read before submitting: once queued, the batch is the device's
         * (admission clears the flag under the device lock). */
        bool for_module = sub->modules_pending;
        if (mox__sub_submit(op->device, sub, &op->cell, &err) == MOX__SUBMIT_QUEUED) {
            if (mox__trace_on())
                mox__trace_op_pending(op, for_module ? "module preparation (queued for admission)"
                                                     : "command capacity (queued for admission)");
            op->stage = MOX__STAGE_CAPACITY;
            return MOX_PENDING;
        }
        if (err)
            return fail_unsubmitted(op, mox__result_error(err));
        op->stage = MOX__STAGE_SUBMITTED;
        /* Submitting made the cell the batch's waiter: while the batch is
         * not done there is nothing to take and nothing to register. */
        if (!atomic_load_explicit(&sub->done, memory_order_acquire))
            return MOX_PENDING;
    }
        /* fall through */
    case MOX__STAGE_CAPACITY:   /* queued: it resolves like a submitted batch */
    case MOX__STAGE_SUBMITTED: {
        const mox_result *r = mox__sub_take_result(sub, &op->cell);
        if (!r)
            return MOX_PENDING;
        mox__cell_quiesce(&op->cell);
        mox__sub_unref(sub);
        op->u.submit.sub = NULL;
        resolve(op, r);
        return MOX_READY;
    }
    case MOX__STAGE_RESOLVED:
        break;
    }
    return MOX_READY;
}

static mox_poll_state poll_launch(mox_op *op, mox_waker waker)
{
    mox__dispatch *d = op->u.launch.d;
    if (op->u.launch.empty) {
        /* An empty grid runs nothing and needs no module: it resolves at
         * once with its arguments. */
        mox_buffer *bufs[MOX_MAX_PARAMS];
        for (uint32_t a = 0; a < d->arg_count; a++) {
            bufs[a] = d->args[a].buffer;
            d->args[a].buffer = NULL;
        }
        const mox_result *r = mox__result_args(bufs, d->arg_count);
        mox__dispatch_free(d);
        op->u.launch.d = NULL;
        resolve(op, r);
        return MOX_READY;
    }
    mox__sub *sub = mox__sub_create(op->device);
    if (!sub) {
        resolve(op, mox__result_error(mox__error_new(MOX_ERR_OUT_OF_MEMORY,
                                                     "out of memory submitting a launch")));
        mox__dispatch_free(d);
        op->u.launch.d = NULL;
        return MOX_READY;
    }
    op->u.launch.d = NULL;
    if (mox__sub_push(sub, d) != MOX_OK) {
        mox__sub_unref(sub);
        resolve(op, mox__result_error(mox_error_last()));
        return MOX_READY;
    }
    sub->yields_args = true;
    op->kind = MOX__OP_SUBMIT;
    op->u.submit.sub = sub;
    return poll_submit(op, waker);
}

static mox_poll_state poll_kind(mox_op *op, mox_waker waker)
{
    switch (op->kind) {
    case MOX__OP_LAUNCH:
        return poll_launch(op, waker);
    case MOX__OP_SUBMIT:
        return poll_submit(op, waker);
    case MOX__OP_THEN:
        return mox__then_poll(op, waker);
    case MOX__OP_MAP:
        return mox__map_poll(op, waker);
    case MOX__OP_CLONE:
        return mox__clone_poll(op, waker);
    case MOX__OP_READY:
        break;
    }
    return MOX_READY;
}

mox_poll_state mox_op_poll(mox_op *op, mox_waker waker)
{
    MOX__CHECK(op, OP);
    if (__builtin_expect(!op, 0)) {
        /* READY so that a polling loop ends; its result is NULL. */
        mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_poll: op is NULL");
        return MOX_READY;
    }
    if (op->stage == MOX__STAGE_RESOLVED)
        return MOX_READY;
    mox_poll_state st = poll_kind(op, waker);
    if (st == MOX_READY && mox__trace_on())
        mox__trace_op_resolved(op);
    return st;
}

const mox_result *mox_op_result(const mox_op *op)
{
    MOX__CHECK(op, OP);
    if (!op || op->stage != MOX__STAGE_RESOLVED)
        return NULL;
    return op->immortal ? mox__result_oom() : op->result;
}

mox__dispatch *mox__op_take_command(mox_op *op)
{
    if (!op || op->immortal || op->kind != MOX__OP_SUBMIT || op->stage != MOX__STAGE_RECORDED)
        return NULL;
    mox__sub *sub = op->u.submit.sub;
    /* yield_count: made by mox_buffer_fill, _upload or _copy, not a batch */
    if (!sub || sub->count != 1 || sub->yield_count == 0 || sub->other || sub->staged ||
        sub->detached || sub->yields_bytes || sub->yields_args)
        return NULL;
    mox__dispatch *d = sub->d[0];
    if (d->kind != MOX__CMD_FILL && d->kind != MOX__CMD_UPLOAD && d->kind != MOX__CMD_COPY)
        return NULL;
    sub->count = 0; /* the dispatch (its buffers, an upload's bytes) leaves with the caller */
    sub->pub.count = 0;
    sub->pub.transfer_count = 0;
    mox_op_drop(op);
    return d;
}

void mox_op_drop(mox_op *op)
{
    MOX__CHECK(op, OP);
    if (!op || op->immortal)
        return;
    switch (op->kind) {
    case MOX__OP_LAUNCH:
        mox__dispatch_free(op->u.launch.d);
        break;
    case MOX__OP_SUBMIT:
        if (op->u.submit.sub) {
            mox__sub *sub = op->u.submit.sub;
            /* Queued (for a slot or a module): leaving the queue submits
             * nothing (A8); if it was submitted meanwhile, it is in flight. */
            if (op->stage == MOX__STAGE_SUBMITTED ||
                     (op->stage == MOX__STAGE_CAPACITY && !mox__sub_dequeue(op->device, sub)))
                mox__sub_detach(sub);
            mox__cell_quiesce(&op->cell);
            /* Unsubmitted: this frees the dispatches and their buffer
             * references - nothing runs. Submitted: the backend's and the
             * trackers' references keep it alive until it completes. */
            mox__sub_unref(sub);
        }
        break;
    case MOX__OP_THEN:
        mox__then_drop(op);
        break;
    case MOX__OP_MAP:
        mox__map_drop(op);
        break;
    case MOX__OP_CLONE:
        mox__clone_drop(op);
        break;
    case MOX__OP_READY:
        break;
    }
    mox_result_release(op->result);
    mox__op_free_shell(op);
}
