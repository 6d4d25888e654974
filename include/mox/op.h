/* mox/op.h - operations: lazy, single-consumer futures (rules A1-A9).
 *
 * An op is created by a generated launch, mox_sequence, mox_buffer_readback,
 * mox_op_then/map/share. Creating one submits nothing (A1). It is driven by
 * mox_op_wait (blocking) or mox_op_poll (non-blocking, with a waker, A2).
 * Once resolved it holds a mox_result. An op must be dropped with
 * mox_op_drop exactly once, unless a function consumed it (then, map, share,
 * mox_batch_push): a consumed op must not be touched again.
 * One op is driven by one thread at a time; different ops may be driven
 * from different threads concurrently.
 */
#ifndef MOX_OP_H
#define MOX_OP_H

#include <mox/buffer.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_result mox_result;

typedef enum mox_poll_state { MOX_PENDING = 0, MOX_READY = 1 } mox_poll_state;

/* Called once, from a runtime thread or the polling thread, when progress is
 * possible after a PENDING poll. It must be cheap and thread-safe (unpark a
 * thread, write an eventfd, queue a task). It must not poll or drop ops. */
typedef struct mox_waker {
    void (*wake)(void *ctx);
    void *ctx;
} mox_waker;

/* Advances the op without blocking. READY: mox_op_result() is available.
 * PENDING: the waker will be called later (the latest waker given wins).
 * then/map callbacks run inside poll/wait, on the calling thread only.
 * A NULL op is READY (so a polling loop ends), its result NULL, and sets
 * the thread's last error to MOX_ERR_INVALID_ARGUMENT "mox_op_poll: op is
 * NULL". */
MOX_API mox_poll_state mox_op_poll(mox_op *op, mox_waker waker);
/* Blocks until the op resolves; returns its status (the result's code). */
MOX_API mox_status mox_op_wait(mox_op *op);
/* The result once READY, else NULL. Borrowed: valid until the op is dropped;
 * retain it to keep it longer. */
MOX_API const mox_result *mox_op_result(const mox_op *op);
/* Releases the op (A8). Before submission - never polled, or polled but
 * still PENDING in the admission queue (its module loading, or no command
 * slot free): submits nothing, ever, and frees its reservations; what was
 * enqueued after it no longer waits for it. So polling then dropping is not
 * fire-and-forget: wait for work that must run. After submission: does not
 * block, does not cancel; the work completes with its resources retained.
 * drop(NULL) is a no-op. */
MOX_API void mox_op_drop(mox_op *op);

/* ---- results: immutable, refcounted ---- */
MOX_API const mox_result *mox_result_retain(const mox_result *result);
MOX_API void mox_result_release(const mox_result *result);
MOX_API mox_status mox_result_status(const mox_result *result);
/* NULL on success. Borrowed from the result. */
MOX_API const mox_error *mox_result_error(const mox_result *result);
/* A successful launch's result yields its arguments back (A4): the same
 * buffer handles, in parameter order (value arguments give NULL). A failed
 * launch's result holds none (count 0): its error says what happened. */
MOX_API size_t mox_result_buffer_count(const mox_result *result);
MOX_API mox_buffer *mox_result_buffer(const mox_result *result, size_t index); /* borrowed */
/* A readback's bytes (size in *size); NULL for other results. */
MOX_API const void *mox_result_bytes(const mox_result *result, size_t *size);
/* A map's value (whatever the map function produced); NULL otherwise. */
MOX_API void *mox_result_value(const mox_result *result);

/* ---- composition (A7) ---- */

/* Runs after `in` succeeded, on the polling thread. Returns MOX_OK and sets
 * *next to the op to continue with, or returns an error code (the chain then
 * fails with MOX_ERR_CALLBACK naming that code; an op set in *next anyway
 * is dropped). *next may be another then op with this callback (an
 * asynchronous loop): then ops never nest, so each step costs the same
 * however many ran, as for a chain built with then of then (docs/async.md,
 * A7). */
typedef mox_status (*mox_then_fn)(void *ctx, const mox_result *in, mox_op **next);
/* A CPU transform: returns MOX_OK and sets *value (and optionally *destroy,
 * called when the result is freed), or an error code as above (a *destroy
 * set anyway is called on *value). */
typedef mox_status (*mox_map_fn)(void *ctx, const mox_result *in, void **value,
                                 void (**destroy)(void *value));

/* Each consumes `op` on success and sets *out. On failure nothing is consumed.
 * ctx is borrowed: keep it alive until the new op resolves or is dropped.
 * When `op` fails, fn is not called and *out resolves to that very result
 * (the same mox_result and mox_error, not wrapped; docs/async.md A7).
 * Codes: MOX_ERR_INVALID_ARGUMENT, MOX_ERR_OUT_OF_MEMORY. */
MOX_API mox_status mox_op_then(mox_op *op, mox_then_fn fn, void *ctx, mox_op **out);
MOX_API mox_status mox_op_map(mox_op *op, mox_map_fn fn, void *ctx, mox_op **out);
/* Makes `op` shareable: *out is the first consumer; mox_op_clone adds more.
 * Every clone resolves to the same mox_result pointer. Dropping every clone
 * stops driving the op; submitted work still completes. */
MOX_API mox_status mox_op_share(mox_op *op, mox_op **out);
MOX_API mox_status mox_op_clone(mox_op *shared, mox_op **out);

#ifdef __cplusplus
}
#endif
#endif
