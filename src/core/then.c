/* then.c - mox_op_then (rule A7).
 *
 * A then op waits on one op (`current`) and holds the callbacks still to
 * run, in order: each gets the result the op waited on and returns the op
 * to wait on next; after the last, the then op resolves to the result of
 * the op it waits on (the same mox_result). An error skips every later
 * callback: the op resolves to the very result that failed.
 *
 * Then ops never nest. mox_op_then on a then op that has not resolved
 * takes over its op and callbacks and appends the new callback; a
 * callback that returns an unresolved then op hands over that op's op and
 * callbacks, which run before the remaining ones. So a chain built up
 * front (op = then(op, fn), N times) and an asynchronous loop (a callback
 * returning a new then op, step after step) both poll one op deep: no
 * recursion, and the same cost per step whatever the length. The waker
 * goes to the op waited on; callbacks run on the polling thread.
 *
 * The callbacks: `head`, the next to run (inline: most then ops have one),
 * then `more`, a growing array of the rest, s[at, count). */
#include <string.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "op.h"

struct mox__then_list {
    uint32_t at, count, cap;
    mox__then_stage s[];
};

static uint32_t more_count(const mox__then_list *l)
{
    return l ? l->count - l->at : 0;
}

/* A list holding room for `cap` callbacks, with l's remaining ones (l may
 * be NULL) first; NULL on out of memory. l is not freed. */
static mox__then_list *list_with_room(const mox__then_list *l, uint32_t cap)
{
    uint32_t n = more_count(l);
    if (cap < n || cap > (UINT32_MAX - sizeof(mox__then_list)) / sizeof(mox__then_stage) / 2)
        return NULL;
    mox__then_list *out = mox__malloc(sizeof *out + (size_t)cap * sizeof(mox__then_stage));
    if (!out)
        return NULL;
    out->at = 0;
    out->count = n;
    out->cap = cap;
    if (n)
        memcpy(out->s, l->s + l->at, n * sizeof *out->s);
    return out;
}

/* Appends one callback to t's. false on out of memory, nothing changed. */
static bool append(mox_op *t, mox__then_stage stage)
{
    if (!t->u.then.head.fn) {
        t->u.then.head = stage;
        return true;
    }
    mox__then_list *l = t->u.then.more;
    if (!l || l->count == l->cap) {
        uint32_t n = more_count(l);
        mox__then_list *grown = list_with_room(l, n < 2 ? 4 : 2 * n);
        if (!grown)
            return false;
        mox__free(l);
        t->u.then.more = l = grown;
    }
    l->s[l->count++] = stage;
    return true;
}

/* The next callback to run, taken off t's (one must be there). */
static mox__then_stage pop(mox_op *t)
{
    mox__then_stage s = t->u.then.head;
    mox__then_list *l = t->u.then.more;
    if (more_count(l)) {
        t->u.then.head = l->s[l->at++];
    } else {
        t->u.then.head = (mox__then_stage){NULL, NULL};
        mox__free(l);
        t->u.then.more = NULL;
    }
    return s;
}

/* t's callbacks become from's, then t's own; from's list may be taken
 * (the caller frees what from keeps). false on out of memory, nothing
 * changed. */
static bool put_before(mox_op *t, mox_op *from)
{
    if (!from->u.then.head.fn)
        return true;
    if (!t->u.then.head.fn) { /* the common case: t has none left */
        t->u.then.head = from->u.then.head;
        t->u.then.more = from->u.then.more;
        from->u.then.more = NULL;
        return true;
    }
    uint32_t mine = 1 + more_count(t->u.then.more), n = more_count(from->u.then.more) + mine;
    mox__then_list *l = list_with_room(from->u.then.more, 2 * n);
    if (!l)
        return false;
    l->s[l->count++] = t->u.then.head;
    if (mine > 1)
        memcpy(l->s + l->count, t->u.then.more->s + t->u.then.more->at, (mine - 1) * sizeof *l->s);
    l->count += mine - 1;
    mox__free(t->u.then.more);
    t->u.then.head = from->u.then.head;
    t->u.then.more = l;
    return true;
}

/* Frees a then op's shell whose op and callbacks were taken. */
static void free_taken(mox_op *from)
{
    from->u.then.current = NULL;
    from->u.then.head = (mox__then_stage){NULL, NULL};
    from->u.then.more = NULL;
    mox__op_free_shell(from);
}

mox_status mox_op_then(mox_op *op, mox_then_fn fn, void *ctx, mox_op **out)
{
    MOX__CHECK(op, OP);
    if (!out)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_then: out is NULL");
    *out = NULL;
    if (!op || !fn)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_then: %s is NULL", op ? "fn" : "op");
    mox__then_stage stage = {fn, ctx};
    bool merge = op->kind == MOX__OP_THEN && op->stage != MOX__STAGE_RESOLVED;
    mox_op *t = mox__op_alloc(MOX__OP_THEN, NULL);
    if (!t || (merge && !append(op, stage))) {
        if (t)
            mox__op_free_shell(t);
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory in mox_op_then");
    }
    if (merge) { /* op's op and callbacks, the new one last */
        t->u.then.current = op->u.then.current;
        t->u.then.head = op->u.then.head;
        t->u.then.more = op->u.then.more;
        free_taken(op);
    } else {
        t->u.then.current = op;
        t->u.then.head = stage;
        t->u.then.more = NULL;
    }
    *out = t;
    return MOX_OK;
}

static void clear(mox_op *t)
{
    mox_op_drop(t->u.then.current);
    t->u.then.current = NULL;
    mox__free(t->u.then.more);
    t->u.then.more = NULL;
    t->u.then.head = (mox__then_stage){NULL, NULL};
}

static mox_poll_state resolve(mox_op *t, const mox_result *r)
{
    t->result = r;
    t->stage = MOX__STAGE_RESOLVED;
    clear(t);
    return MOX_READY;
}

/* t waits on `next` (its own now). An unresolved then op hands over its
 * op and callbacks instead, which run before t's remaining ones (out of
 * memory: it is waited on as it is, which is correct too). */
static void continue_with(mox_op *t, mox_op *next)
{
    if (next->kind == MOX__OP_THEN && next->stage != MOX__STAGE_RESOLVED && put_before(t, next)) {
        t->u.then.current = next->u.then.current;
        mox__free(next->u.then.more);
        free_taken(next);
        return;
    }
    t->u.then.current = next;
}

mox_poll_state mox__then_poll(mox_op *t, mox_waker waker)
{
    for (;;) {
        mox_op *current = t->u.then.current;
        if (mox_op_poll(current, waker) == MOX_PENDING)
            return MOX_PENDING;
        const mox_result *in = mox_op_result(current);
        if (mox_result_status(in) != MOX_OK || !t->u.then.head.fn)
            return resolve(t, mox_result_retain(in));
        mox__then_stage s = pop(t);
        mox_op *next = NULL;
        mox_status st = s.fn(s.ctx, in, &next);
        mox_op_drop(current);
        t->u.then.current = NULL;
        if (st != MOX_OK || !next) {
            mox_op_drop(next); /* an op set with an error code is dropped */
            return resolve(t, st != MOX_OK ? mox__callback_error("then", st)
                                           : mox__result_error(mox__error_new(
                                                 MOX_ERR_CALLBACK, "then callback returned no op")));
        }
        continue_with(t, next);
    }
}

/* Dropping the op waited on before it resolved means no later callback
 * runs: no later stage starts (A8). */
void mox__then_drop(mox_op *t) { clear(t); }
