/* op.h - the op object's internals: kinds, stages, results. */
#ifndef MOX_CORE_OP_H
#define MOX_CORE_OP_H

#include <mox/op.h>

#include "debug_check.h"
#include "submission.h"
#include "sync.h"
#include "trace.h"

struct mox_result {
    _Atomic unsigned refs;
    bool immortal;
    mox_status status;
    mox_error *error;
    size_t buffer_count;
    mox_buffer **buffers;      /* retained; NULL entries for value arguments */
    void *bytes;               /* readback */
    size_t size;
    void *value;               /* map */
    void (*destroy)(void *value);
    mox_buffer *inline_buffers[]; /* storage for `buffers` */
};

/* Results. All return a result with refcount 1 (never NULL: on out of
 * memory, the immortal out-of-memory result). */
const mox_result *mox__result_error(mox_error *error); /* takes over error */
const mox_result *mox__result_ok(void);
/* The one immortal OK result without a value (batches): no allocation per
 * batch. Never mutate it; mox__result_ok gives a fresh one that may be. */
const mox_result *mox__result_ok_shared(void);
const mox_result *mox__result_oom(void);
/* OK, yielding `count` buffers; takes over the references in `buffers`. */
const mox_result *mox__result_args(mox_buffer **buffers, size_t count);
/* OK with readback bytes (taken over, freed with mox__free). */
const mox_result *mox__result_bytes(void *bytes, size_t size);

typedef enum mox__op_kind {
    MOX__OP_READY,   /* resolved at construction (errors, empty work) */
    MOX__OP_LAUNCH,  /* one kernel dispatch, not yet driven */
    MOX__OP_SUBMIT,  /* a submission: batch, driven launch, transfer */
    MOX__OP_THEN,
    MOX__OP_MAP,
    MOX__OP_CLONE
} mox__op_kind;

typedef enum mox__op_stage {
    MOX__STAGE_RECORDED,   /* nothing done yet */
    MOX__STAGE_CAPACITY,   /* in the device's admission queue: for a slot, or for a
                              module being prepared (modules_pending) */
    MOX__STAGE_SUBMITTED,  /* in flight */
    MOX__STAGE_RESOLVED
} mox__op_stage;

typedef struct mox__shared mox__shared;
/* One callback of a then op, and the ones after its first (then.c). */
typedef struct mox__then_stage {
    mox_then_fn fn;
    void *ctx;
} mox__then_stage;
typedef struct mox__then_list mox__then_list;

struct mox_op {
    uint32_t magic;            /* MOX__MAGIC_OP while live (debug_check.h) */
    mox__op_kind kind;
    mox__op_stage stage;
    bool immortal;
    bool in_dispatch_block;    /* a launch's: the head of its dispatch's block */
    bool in_sub_block;         /* a batch's: in its batch's block (mox__op_submit) */
    bool empty_command;        /* a fill, upload or copy of 0 elements (resolved at
                                  construction): mox_batch_push takes it as nothing */
    const mox_result *result;  /* once resolved */
    mox_device *device;        /* retained (launch, submit) */
    mox__waker_cell cell;
    union {
        struct {
            mox__dispatch *d;
            bool empty;        /* empty grid: resolves OK without running */
        } launch;
        struct {
            mox__sub *sub;
            void *readback;    /* readback bytes owned until submitted */
            size_t readback_size;
            bool readback_result;
        } submit;
        struct {
            mox_op *current;          /* the op it waits on */
            mox__then_stage head;     /* the next callback to run (fn NULL: none) */
            mox__then_list *more;     /* the callbacks after it, or NULL */
        } then;
        struct {
            mox_op *inner;
            mox_map_fn fn;
            void *ctx;
        } map;
        struct {
            mox__shared *shared;
        } clone;
    } u;
};

/* The layout of a launch's block: a kernel dispatch of `arg_count` args and
 * `value_bytes` of value copies with room for its launch op in front, so
 * that a launch makes one allocation. */
static inline void mox__launch_layout(const mox_device *device, uint32_t arg_count,
                                      size_t value_bytes, mox__dispatch_layout *l)
{
    mox__dispatch_layout_of(device, arg_count, value_bytes, sizeof(mox_op), l);
}
/* A kernel dispatch of a launch layout: the caller fills every
 * parts->params[i] (a buffer's pointing at its parts->addr[i]). NULL on
 * out of memory. */
static inline mox__dispatch *mox__launch_alloc(const mox__dispatch_layout *l,
                                               mox__dispatch_parts *parts)
{
    mox__dispatch *d = mox__dispatch_alloc_laid(l, parts);
    if (d) {
        d->kind = MOX__CMD_KERNEL;
        d->param_count = l->arg_count;
        d->params = parts->params;
    }
    return d;
}
/* The launch op of a dispatch from mox__launch_alloc, filled in; its
 * block goes once both the op and the dispatch are gone (a launch pushed
 * into a batch leaves its dispatch there). Never NULL. */
static inline mox_op *mox__launch_op(mox__dispatch *d, mox_device *device, bool empty)
{
    mox_op *op = mox__dispatch_head(d); /* zeroed: its cell is initialised */
    op->magic = MOX__MAGIC_OP;
    op->kind = MOX__OP_LAUNCH;
    op->stage = MOX__STAGE_RECORDED;
    op->in_dispatch_block = true;
    op->device = mox__device_ref(device);
    op->u.launch.d = d;
    op->u.launch.empty = empty;
    if (mox__trace_on())
        mox__trace_op_new(op);
    return op;
}
/* Frees a dispatch from mox__launch_alloc that never got its op. */
void mox__launch_discard(mox__dispatch *d);
/* Allocates an op of `kind` (cell initialised). NULL on out of memory. */
mox_op *mox__op_alloc(mox__op_kind kind, mox_device *device);
/* A resolved op holding `result` (taken over). Never NULL. */
mox_op *mox__op_ready(const mox_result *result);
/* A resolved op failing with `error` (taken over). Never NULL. */
mox_op *mox__op_failed(mox_error *error);
/* A submission op over a recorded submission (taken over). Never NULL. */
mox_op *mox__op_submit(mox_device *device, mox__sub *sub);

void mox__op_free_shell(mox_op *op);
/* mox__op_free_shell of a launch op at the head of its dispatch's block
 * (inline: every launch pushed into a batch ends so). */
static inline void mox__launch_shell_free(mox_op *op)
{
    if (mox__trace_on())
        mox__trace_op_end(op);
    mox__device_unref(op->device);
    MOX__KILL(op);
    /* Its dispatch lives on in the block: a use of the dead op is still
     * reported. */
    MOX__POISON(op, sizeof *op);
    mox__dispatch_head_free(op);
}
/* Used by batch.c: takes the dispatch out of an undriven launch op and frees
 * the op. Returns NULL (op untouched) when op is not such a launch; sets
 * *empty for empty-grid launches (whose dispatch is freed). */
static inline mox__dispatch *mox__op_take_launch(mox_op *op, bool *empty)
{
    if (!op || op->immortal || op->kind != MOX__OP_LAUNCH)
        return NULL;
    mox__dispatch *d = op->u.launch.d;
    *empty = op->u.launch.empty;
    if (*empty) {
        mox__dispatch_free(d);
        d = NULL;
    }
    op->u.launch.d = NULL;
    if (op->in_dispatch_block)
        mox__launch_shell_free(op);
    else
        mox__op_free_shell(op);
    return d;
}

/* The command of an unpolled fill, upload or copy within one device (a
 * one-command submission yielding its buffers: buffer_ops.c, copy.c),
 * taken out for a batch (mox_batch_push); the op is consumed. NULL, the op
 * untouched, for any other op. */
mox__dispatch *mox__op_take_command(mox_op *op);

/* Composition internals (then.c, compose.c). */
mox_poll_state mox__then_poll(mox_op *op, mox_waker waker);
mox_poll_state mox__map_poll(mox_op *op, mox_waker waker);
/* The result of a then or map callback that returned `code`. */
const mox_result *mox__callback_error(const char *what, mox_status code);
mox_poll_state mox__clone_poll(mox_op *op, mox_waker waker);
void mox__then_drop(mox_op *op);
/* Calls take(inner, out) under the share's lock when the shared op is a
 * submitted batch that no clone polls right now; returns what take
 * returned, false otherwise. take must reference what it keeps. */
bool mox__clone_pending(mox_op *op, bool (*take)(mox_op *submit, void *out), void *out);
void mox__map_drop(mox_op *op);
void mox__clone_drop(mox_op *op);

#endif
