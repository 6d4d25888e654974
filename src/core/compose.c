/* compose.c - composition (rule A7): map, share/clone (then: then.c).
 *
 * then/map forward the caller's waker to the op they wait on and run the
 * user's function inside poll/wait, on the polling thread, never on a
 * runtime thread. An error skips every later stage: the chain resolves to
 * the very result that failed. A shared op is driven by whichever clone
 * polls (one at a time); its inner op's waker wakes every clone, and every
 * clone resolves to the same mox_result pointer. */
#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "op.h"

struct mox__shared {
    mox__mutex lock;
    unsigned clones;
    mox_op *inner;             /* until it resolves */
    const mox_result *result;
    bool polling;              /* a clone is inside mox_op_poll(inner) */
    mox__wait_list waiters;    /* clones' cells */
};

bool mox__clone_pending(mox_op *op, bool (*take)(mox_op *submit, void *out), void *out)
{
    mox__shared *sh = op->u.clone.shared;
    bool taken = false;
    mox__lock(&sh->lock);
    mox_op *inner = sh->polling ? NULL : sh->inner; /* another clone drives it */
    if (inner && inner->kind == MOX__OP_SUBMIT)
        taken = take(inner, out);
    mox__unlock(&sh->lock);
    return taken;
}

const mox_result *mox__callback_error(const char *what, mox_status code)
{
    if ((unsigned)code >= (unsigned)MOX_STATUS_COUNT_) /* not a mox_status: its value, not lost */
        return mox__result_error(mox__error_new(
            MOX_ERR_CALLBACK, "%s callback failed with %d (not a mox_status value)", what, (int)code));
    return mox__result_error(
        mox__error_new(MOX_ERR_CALLBACK, "%s callback failed with %s", what, mox_status_name(code)));
}

/* ---- map ---- */

mox_status mox_op_map(mox_op *op, mox_map_fn fn, void *ctx, mox_op **out)
{
    MOX__CHECK(op, OP);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_map: out is NULL");
    *out = NULL;
    if (!op || !fn)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_map: %s is NULL", op ? "fn" : "op");
    mox_op *m = mox__op_alloc(MOX__OP_MAP, NULL);
    if (!m)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory in mox_op_map");
    m->u.map.inner = op;
    m->u.map.fn = fn;
    m->u.map.ctx = ctx;
    *out = m;
    return MOX_OK;
}

mox_poll_state mox__map_poll(mox_op *op, mox_waker waker)
{
    mox_op *inner = op->u.map.inner;
    if (mox_op_poll(inner, waker) == MOX_PENDING)
        return MOX_PENDING;
    const mox_result *in = mox_op_result(inner);
    if (mox_result_status(in) != MOX_OK) {
        op->result = mox_result_retain(in);
    } else {
        void *value = NULL;
        void (*destroy)(void *) = NULL;
        mox_status st = op->u.map.fn(op->u.map.ctx, in, &value, &destroy);
        if (st != MOX_OK) {
            if (destroy)
                destroy(value);
            op->result = mox__callback_error("map", st);
        } else {
            const mox_result *r = mox__result_ok();
            if (r == mox__result_oom()) {
                if (destroy)
                    destroy(value);
            } else {
                mox_result *w = (mox_result *)r;
                w->value = value;
                w->destroy = destroy;
            }
            op->result = r;
        }
    }
    op->stage = MOX__STAGE_RESOLVED;
    mox_op_drop(inner);
    op->u.map.inner = NULL;
    return MOX_READY;
}

void mox__map_drop(mox_op *op) { mox_op_drop(op->u.map.inner); }

/* ---- share / clone ---- */

static void shared_wake(void *ctx)
{
    mox__shared *sh = ctx;
    mox__lock(&sh->lock);
    mox__wait_list_wake_all(&sh->waiters, &sh->lock);
    mox__unlock(&sh->lock);
}

static mox_op *new_clone(mox__shared *sh)
{
    mox_op *c = mox__op_alloc(MOX__OP_CLONE, NULL);
    if (c)
        c->u.clone.shared = sh;
    return c;
}

mox_status mox_op_share(mox_op *op, mox_op **out)
{
    MOX__CHECK(op, OP);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_share: out is NULL");
    *out = NULL;
    if (!op)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_share: op is NULL");
    mox__shared *sh = mox__calloc(1, sizeof *sh);
    mox_op *c = sh ? new_clone(sh) : NULL;
    if (!c) {
        mox__free(sh);
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory in mox_op_share");
    }
    mox__mutex_init(&sh->lock);
    sh->clones = 1;
    sh->inner = op;
    *out = c;
    return MOX_OK;
}

mox_status mox_op_clone(mox_op *shared, mox_op **out)
{
    MOX__CHECK(shared, OP);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_clone: out is NULL");
    *out = NULL;
    if (!shared)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_clone: shared is NULL");
    if (shared->immortal || shared->kind != MOX__OP_CLONE)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT,
                         "mox_op_clone: not a shared op (make one with mox_op_share)");
    mox__shared *sh = shared->u.clone.shared;
    mox_op *c = new_clone(sh);
    if (!c)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory in mox_op_clone");
    mox__lock(&sh->lock);
    sh->clones++;
    mox__unlock(&sh->lock);
    *out = c;
    return MOX_OK;
}

static mox_poll_state clone_resolved(mox_op *op, const mox_result *r)
{
    mox__shared *sh = op->u.clone.shared;
    mox__wait_list_remove(&op->cell); /* sh->lock held */
    mox__unlock(&sh->lock);
    mox__cell_quiesce(&op->cell);
    op->result = mox_result_retain(r);
    op->stage = MOX__STAGE_RESOLVED;
    return MOX_READY;
}

mox_poll_state mox__clone_poll(mox_op *op, mox_waker waker)
{
    mox__shared *sh = op->u.clone.shared;
    mox__cell_arm(&op->cell, waker);
    mox__lock(&sh->lock);
    if (sh->result)
        return clone_resolved(op, sh->result);
    mox__wait_list_add(&sh->waiters, &op->cell);
    if (sh->polling) {
        /* Another clone is driving: it (or the inner op's waker) wakes us. */
        mox__unlock(&sh->lock);
        return MOX_PENDING;
    }
    sh->polling = true;
    mox_op *inner = sh->inner;
    mox__unlock(&sh->lock);

    mox_waker w = {shared_wake, sh};
    mox_poll_state st = mox_op_poll(inner, w);

    mox__lock(&sh->lock);
    sh->polling = false;
    if (st == MOX_PENDING) {
        mox__unlock(&sh->lock);
        return MOX_PENDING;
    }
    sh->result = mox_result_retain(mox_op_result(inner));
    sh->inner = NULL;
    mox__wait_list_remove(&op->cell);
    /* Every other clone now sees the result. */
    mox__wait_list_wake_all(&sh->waiters, &sh->lock);
    mox__unlock(&sh->lock);
    mox_op_drop(inner); /* resolved: its result lives on in sh->result */
    mox__cell_quiesce(&op->cell);
    op->result = mox_result_retain(sh->result);
    op->stage = MOX__STAGE_RESOLVED;
    return MOX_READY;
}

void mox__clone_drop(mox_op *op)
{
    mox__shared *sh = op->u.clone.shared;
    mox__lock(&sh->lock);
    mox__wait_list_remove(&op->cell);
    bool last = --sh->clones == 0;
    mox__unlock(&sh->lock);
    mox__cell_quiesce(&op->cell);
    if (!last)
        return;
    /* No clone left: stop driving. Dropping the inner op does not cancel
     * submitted work (A8). */
    mox_op_drop(sh->inner);
    mox_result_release(sh->result);
    mox__mutex_destroy(&sh->lock);
    mox__free(sh);
}
