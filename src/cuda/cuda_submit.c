/* src/cuda/cuda_submit.c - from the HAL's executions to launches (the
 * launches themselves are cuda_launch.c).
 *
 * Queues are streams: the core picks the queue (the stream of the latest
 * unfinished execution it waits on, else round robin) and names, in the
 * wait list, the points of other queues it needs. A point becomes
 * cuStreamWaitEvent on the event of the launch that signals it: the device
 * waits, no host thread decides.
 *
 * Coalescing: while a stream already has `defer_depth` launches queued
 * (default 2: one running, one waiting behind it, so the GPU never idles on
 * the completion thread), new submissions for it wait in a pending list;
 * when one of the stream's launches completes, or the list reaches
 * MOX__CUDA_MERGE_SUBS, the list goes out as ONE launch: one graph holding
 * every submission's dispatches, with edges for the waits between them, one
 * event. Back-to-back submissions thus cost one graph launch, not one each;
 * a submission to an idle stream goes out at once.
 *
 * An execution that waits on a failed semaphore runs nothing and completes
 * with that failure. The core's flush (a thread about to block on an
 * execution held back here) sends that stream's list out at once.
 */
#include "cuda/cuda_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void fail_waiter(mox__cuda_dev *dev, mox__submission *pub, uint32_t stream, mox_error *why);

/* A semaphore `pub` waits on failed (borrowed), or NULL. */
static mox_error *failed_wait(const mox__submission *pub)
{
    for (uint32_t i = 0; i < pub->wait_count; i++) {
        mox_error *why = mox__semaphore_failure(pub->waits[i].sem);
        if (why)
            return why;
    }
    return NULL;
}

/* Launches the pending executions of `stream` older than serial `limit`,
 * up to one blocked on another device's point, in launches of at most
 * MERGE_SUBS / MERGE_NODES; one whose wait failed meanwhile completes
 * alone with that failure. The launcher, dev->lock held. */
static void launch_run(mox__cuda_dev *dev, uint32_t stream, uint64_t limit)
{
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    mox__submission *chunk[MOX__CUDA_MERGE_SUBS];
    uint32_t n = 0, nodes = 0;
    while (ss->pending_head && !ss->pending_head->blocked && ss->pending_head->pub->serial < limit) {
        mox__cuda_sub *s = ss->pending_head;
        mox_error *why = failed_wait(s->pub);
        if (n > 0 &&
            (why || n == MOX__CUDA_MERGE_SUBS || nodes + s->pub->count > MOX__CUDA_MERGE_NODES)) {
            mox__cuda_launch_group(dev, chunk, n, stream);
            n = nodes = 0;
        }
        ss->pending_head = s->next_pending;
        if (!ss->pending_head)
            ss->pending_tail = NULL;
        s->next_pending = NULL;
        ss->pending_count--;
        if (why) {
            atomic_store_explicit(&s->pending, false, memory_order_relaxed);
            fail_waiter(dev, s->pub, stream, why);
            continue;
        }
        nodes += s->pub->count;
        chunk[n++] = s->pub;
    }
    if (n > 0)
        mox__cuda_launch_group(dev, chunk, n, stream);
}

void mox__cuda_flush_stream(mox__cuda_dev *dev, uint32_t stream)
{
    launch_run(dev, stream, UINT64_MAX);
}

static bool covers(const mox__cuda_group *g, const mox__sem_point *pt)
{
    return g->stream == pt->sem->queue && g->first_value <= pt->value && pt->value <= g->last_value;
}

mox__cuda_group *mox__cuda_group_of_point(mox__cuda_dev *dev, const mox__sem_point *pt)
{
    if (mox__semaphore_reached(pt->sem, pt->value))
        return NULL;
    for (mox__cuda_group *g = dev->inflight_head; g; g = g->next)
        if (covers(g, pt))
            return g;
    /* Finished on the device, its executions still completing: a launch
     * waiting for it needs no event, but it completes after it. */
    for (mox__cuda_group *g = dev->finishing; g; g = g->fin_next)
        if (covers(g, pt))
            return g;
    return NULL; /* the core has signalled it since the check above */
}


static bool ss_flush_needed(mox__cuda_dev *dev, uint32_t q)
{
    return dev->stream_state[q].pending_head != NULL && !mox__cuda_held(dev);
}

bool mox__cuda_pending_covers(const mox__cuda_dev *dev, uint32_t q, uint64_t value)
{
    const mox__cuda_sub *h = dev->stream_state[q].pending_head;
    return h && h->pub->signal.value <= value;
}

/* An execution that waited on a failed semaphore runs nothing and
 * completes with that failure (through the completion thread, in order). */
static void fail_waiter(mox__cuda_dev *dev, mox__submission *pub, uint32_t stream, mox_error *why)
{
    mox__cuda_group *g = mox__cuda_group_new(1);
    if (!g)
        abort(); /* a few bytes */
    mox__cuda_sub *me = mox__cuda_sub_of(pub);
    g->subs[0] = pub;
    g->nsubs = 1;
    g->count = pub->count;
    g->stream = stream;
    g->first_value = g->last_value = pub->signal.value;
    mox__cuda_foreign_collect(dev, g);
    g->status = mox_error_code(why);
    g->error = mox_error_retain(why);
    me->group = g;
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    if (ss->last && !mox__cuda_add_succ(ss->last, g)) {
        mox_error_release(g->error);
        g->status = MOX_ERR_OUT_OF_MEMORY;
        g->error = mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory completing a batch");
    }
    ss->last = g;
    mox__cuda_completion_push(dev, g);
}

/* Releasing a hold launches everything held in submission order: each
 * step takes, from the stream whose oldest pending submission is the
 * oldest overall, the run of submissions older than every other stream's
 * oldest, so whatever a launch waits for on another stream already has its
 * event. It stops at an execution still blocked on another device. */
static void flush_all_ordered(mox__cuda_dev *dev)
{
    for (;;) {
        uint32_t best = MOX__CUDA_STREAMS;
        uint64_t best_serial = UINT64_MAX, next_serial = UINT64_MAX;
        for (uint32_t s = 0; s < MOX__CUDA_STREAMS; s++) {
            mox__cuda_sub *h = dev->stream_state[s].pending_head;
            if (!h)
                continue;
            if (h->pub->serial < best_serial) {
                next_serial = best_serial;
                best_serial = h->pub->serial;
                best = s;
            } else if (h->pub->serial < next_serial) {
                next_serial = h->pub->serial;
            }
        }
        if (best == MOX__CUDA_STREAMS || dev->stream_state[best].pending_head->blocked)
            return;
        launch_run(dev, best, next_serial);
    }
}

/* Marks `me` held back in its stream's pending list (the launcher,
 * dev->lock held); `awaited_seen`: pub->awaited as process_execute read it.
 *
 * mox__cuda_flush reads `pending` with no lock, and must never miss a
 * flush: a thread about to block on the execution stores pub->awaited
 * (core, release), then, in mox__cuda_flush, a seq_cst fence and a load
 * of `pending`; here, the store of `pending`, a seq_cst fence and a load of
 * `awaited`. The two fences are ordered one way or the other (C11 7.17.3):
 * if the flusher's comes first, the load below sees `awaited`; if this
 * one comes first, the flusher's load sees `pending` set (or cleared again
 * by the launch that took it out of the list: nothing left to flush). So
 * when the flusher skips, this launcher sees `awaited` and asks the flush
 * itself, under the lock the flusher would have taken: the same request
 * (flush_mask) its launcher loop runs next. When the first load already
 * saw `awaited` the core's flush came first, and found nothing pending
 * under the lock too. Both may ask: a flush of an empty list does nothing. */
static void mark_pending(mox__cuda_dev *dev, mox__cuda_sub *me, bool awaited_seen)
{
    atomic_store_explicit(&me->pending, true, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!awaited_seen && atomic_load_explicit(&me->pub->awaited, memory_order_relaxed))
        dev->flush_mask |= 1u << me->stream;
}

/* Holds `me` back at the tail of its stream's pending list (mark_pending). */
static void append_pending(mox__cuda_dev *dev, mox__cuda_stream_state *ss, mox__cuda_sub *me, bool awaited_seen)
{
    mark_pending(dev, me, awaited_seen);
    if (ss->pending_tail)
        ss->pending_tail->next_pending = me;
    else
        ss->pending_head = me;
    ss->pending_tail = me;
    ss->pending_count++;
}

/* An execution, by the launcher: held back to merge, or launched. */
static void process_execute(mox__cuda_dev *dev, mox__submission *pub)
{
    mox__cuda_sub *me = mox__cuda_sub_of(pub);
    uint32_t stream = me->stream;
    for (uint32_t i = 0; i < pub->wait_count; i++) {
        mox_error *why = mox__semaphore_failure(pub->waits[i].sem);
        if (why) {
            if (ss_flush_needed(dev, stream))
                mox__cuda_flush_stream(dev, stream); /* keep the stream's order */
            fail_waiter(dev, pub, stream, why);
            return;
        }
    }
    /* A point held back on another stream must be launched to have an
     * event: that stream goes out now. */
    for (uint32_t i = 0; !mox__cuda_held(dev) && i < pub->wait_count; i++) {
        uint32_t q = pub->waits[i].sem->queue;
        if (pub->waits[i].sem->owner == &dev->base && q != stream &&
            mox__cuda_pending_covers(dev, q, pub->waits[i].value))
            mox__cuda_flush_stream(dev, q);
    }
    /* A point of another device that no device can wait for yet holds this
     * execution, and what follows it (cuda_foreign.c). */
    bool blocked = pub->wait_count && mox__cuda_foreign_block(dev, me);
    /* Everything held back before it is older, so it may go now: it must,
     * since the point this execution waits for may itself wait for it on
     * the other device (a copy there of what this device wrote earlier),
     * and from now on the device is held until that point is reached. */
    if (blocked && !dev->hold)
        flush_all_ordered(dev);
    mox__cuda_stream_state *ss = &dev->stream_state[stream];
    bool transfer = pub->transfer_count != 0;
    /* Someone already blocks on it (the core's flush came first): it is not
     * held back. */
    bool awaited = atomic_load_explicit(&pub->awaited, memory_order_acquire);
    bool defer = mox__cuda_held(dev) || blocked || (dev->coalesce && !transfer && !awaited &&
                               (ss->pending_count > 0 || ss->depth >= dev->defer_depth));
    if (defer) {
        append_pending(dev, ss, me, awaited);
        if (!mox__cuda_held(dev) && ss->pending_count >= MOX__CUDA_MERGE_SUBS)
            mox__cuda_flush_stream(dev, stream);
    } else {
        if (ss->pending_head)
            mox__cuda_flush_stream(dev, stream); /* keep submission order */
        mox__submission *one = pub;
        mox__cuda_launch_group(dev, &one, 1, stream);
    }
}

/* ---- the launcher ----
 * Everything that launches - executions, flushes of held-back work (a
 * thread blocking on it, a stream that drains), the test hold - is a
 * request under dev->lock; whoever finds the launcher idle becomes it and
 * runs every request until none is left. So one thread at a time launches,
 * the submission-side state (plans, pending lists, scratch) is the
 * launcher's alone, and launches release dev->lock around driver calls
 * (cuda_launch.c). No caller ever waits for another: a request made while
 * someone launches is that thread's work. */

void mox__cuda_launcher_enter(mox__cuda_dev *dev)
{
    if (dev->launching)
        return;
    dev->launching = true;
    for (;;) {
        if (dev->hold_asked || dev->release_asked) {
            dev->hold_asked = dev->release_asked = false;
            dev->hold = dev->hold_wanted;
            /* Executions blocked on other devices' points stop it at the
             * first of them: what is older goes (it may be what another
             * device waits for before it can unblock them). */
            if (!dev->hold)
                flush_all_ordered(dev);
            continue;
        }
        if (dev->exec_head) {
            mox__cuda_sub *me = dev->exec_head;
            dev->exec_head = me->next_exec;
            if (!dev->exec_head)
                dev->exec_tail = NULL;
            me->next_exec = NULL;
            process_execute(dev, me->pub);
            continue;
        }
        if (dev->flush_mask && !dev->hold && dev->blocked) {
            dev->flush_mask = 0; /* in serial order, up to the first blocked */
            flush_all_ordered(dev);
            continue;
        }
        if (dev->flush_mask && !mox__cuda_held(dev)) {
            uint32_t q = (uint32_t)__builtin_ctz(dev->flush_mask);
            dev->flush_mask &= ~(1u << q);
            mox__cuda_flush_stream(dev, q);
            continue;
        }
        break;
    }
    dev->flush_mask = 0; /* held: the release flushes everything */
    dev->launching = false;
}

void mox__cuda_release_held(mox__cuda_dev *dev)
{
    dev->release_asked = true;
    mox__cuda_launcher_enter(dev);
}

/* process_execute's common case, with nobody launching: an execution that
 * waits for nothing and holds no transfer, to a stream already
 * `defer_depth` deep (or holding others back), held back short of a full
 * list. Done here without the launcher's queue and loop, exactly as the
 * launcher would with it as its only request (a flush mark_pending asks
 * is run by the launcher, as there). False, having done nothing, for any
 * other execution. dev->lock held. */
static bool hold_back_at_once(mox__cuda_dev *dev, mox__cuda_sub *me)
{
    const mox__submission *pub = me->pub;
    if (dev->launching || dev->exec_head || dev->hold_asked || dev->release_asked || dev->flush_mask ||
        mox__cuda_held(dev) || !dev->coalesce || pub->wait_count || pub->transfer_count)
        return false;
    mox__cuda_stream_state *ss = &dev->stream_state[me->stream];
    if ((ss->pending_count == 0 && ss->depth < dev->defer_depth) || ss->pending_count + 1 >= MOX__CUDA_MERGE_SUBS ||
        atomic_load_explicit(&pub->awaited, memory_order_acquire))
        return false;
    append_pending(dev, ss, me, false);
    if (dev->flush_mask)
        mox__cuda_launcher_enter(dev);
    return true;
}

void mox__cuda_submit(mox__cuda_dev *dev, mox__submission *pub)
{
    mox__cuda_sub *me = mox__cuda_sub_of(pub);
    /* Points of other CUDA devices that their owners hold back go out
     * first, so that they have events (their launchers, not this one). */
    if (pub->wait_count)
        mox__cuda_foreign_flush(dev, pub);
    mox__lock(&dev->lock); /* a flush of it may read `me` concurrently */
    mox__zero_fixed(me, offsetof(mox__cuda_sub, pending)); /* `pending` is atomic: */
    atomic_store_explicit(&me->pending, false, memory_order_relaxed);
    me->pub = pub;
    me->stream = pub->queue;
    if (!hold_back_at_once(dev, me)) {
        if (dev->exec_tail)
            dev->exec_tail->next_exec = me;
        else
            dev->exec_head = me;
        dev->exec_tail = me;
        mox__cuda_launcher_enter(dev);
    }
    mox__unlock(&dev->lock);
}

/* The core set pub->awaited before this call. Nothing held back: no lock
 * taken, as under it a clear `pending` asks nothing and the launcher loop
 * would find no request (each is run by whoever makes it). The fence pairs
 * with mark_pending's: a launcher that holds `pub` back after this load
 * saw it clear sees `awaited` and asks the flush itself. */
void mox__cuda_flush(mox__cuda_dev *dev, mox__submission *pub)
{
    mox__cuda_sub *me = mox__cuda_sub_of(pub);
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&me->pending, memory_order_relaxed))
        return;
    mox__lock(&dev->lock);
    if (atomic_load_explicit(&me->pending, memory_order_relaxed))
        dev->flush_mask |= 1u << me->stream;
    mox__cuda_launcher_enter(dev);
    mox__unlock(&dev->lock);
}

void mox__cuda_set_hold(mox__cuda_dev *dev, bool hold)
{
    mox__lock(&dev->lock);
    dev->hold_asked = true;
    dev->hold_wanted = hold;
    mox__cuda_launcher_enter(dev);
    mox__unlock(&dev->lock);
}
