/* src/cuda/cuda_complete.c - the completion thread.
 *
 * One runtime thread per device watches the events of launches in flight.
 * It spins (cuEventQuery on each, oldest first) for a short window after
 * work arrives or completes, because most launches finish within
 * microseconds and a blocking wait costs 20-30 us of wake-up. Past the
 * window it sleeps: when every launch in flight is on one stream, in
 * cuEventSynchronize on the oldest one's blocking-sync event (the driver
 * wakes it when that launch is done, and on that stream it is done first);
 * otherwise in a timed condition wait with growing timeouts, which a new
 * launch also ends. With nothing in flight it looks for new work a little
 * longer (IDLE_SPIN_US), then waits on the condition variable and uses no
 * CPU. While a user thread spins in mox_op_wait on the device (vtable
 * watch), it sleeps neither on an event nor on the condition variable: it
 * queries what it must complete at poll pace and spins for new launches.
 * Launches a waiting user thread watches (mox__cuda_complete_inline,
 * cuda_watch.c) are left to it; while waiting threads complete the launches, new ones are
 * looked for every QUIET_POLL_US instead of signalled. Never
 * cuLaunchHostFunc: host functions may not call CUDA and add 20-40 us.
 * Completions go to the core from here, with no backend lock held.
 */
#include "cuda/cuda_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAPSHOT 64
/* How long the thread keeps looking for new work after its last completion
 * before it sleeps on the condition variable (at most; bounded by the spin
 * window too): an idle device uses no CPU once this passes. */
#define IDLE_SPIN_US 50u
/* After a waiting thread completed a launch, for QUIET_WINDOW_US: new
 * launches do not signal the completion thread, which looks for them every
 * QUIET_POLL_US (a launch + wait loop then costs no futex wake per launch;
 * a launch nobody watches is seen at most QUIET_POLL_US late). */
#define QUIET_WINDOW_US 2000u
#define QUIET_POLL_US 50u

void mox__cuda_completion_push(mox__cuda_dev *dev, mox__cuda_group *g)
{
    mox__cuda_sem_register(dev, g); /* other devices may wait for it from now */
    g->linked = true;
    g->prev = dev->inflight_tail;
    g->next = NULL;
    if (dev->inflight_tail)
        dev->inflight_tail->next = g;
    else
        dev->inflight_head = g;
    dev->inflight_tail = g;
    dev->inflight++;
    atomic_fetch_add_explicit(&dev->pushes, 1, memory_order_relaxed);
    if (dev->waiting && !dev->quiet)
        mox__cond_signal(&dev->work_cv);
}

void mox__cuda_inflight_retire(mox__cuda_dev *dev, mox__cuda_group *g)
{
    if (g->prev)
        g->prev->next = g->next;
    else
        dev->inflight_head = g->next;
    if (g->next)
        g->next->prev = g->prev;
    else
        dev->inflight_tail = g->prev;
    g->next = g->prev = NULL;
    g->linked = false;
    dev->inflight--;
    g->finishing = true;
    g->fin_prev = NULL;
    g->fin_next = dev->finishing;
    if (dev->finishing)
        dev->finishing->fin_prev = g;
    dev->finishing = g;
}

/* A waiting thread completed a launch (cuda_watch.c), seen done at `now`:
 * for QUIET_WINDOW_US new launches do not signal this thread. dev->lock
 * held. */
void mox__cuda_quiet_after_inline(mox__cuda_dev *dev, uint64_t now)
{
    dev->quiet_until_ns = now + 1000ull * QUIET_WINDOW_US;
}

/* Whether a user thread spins in mox_op_wait on this device (vtable
 * watch): then this thread does not sleep either, so a launch the waiter
 * cannot complete itself (one shared with other executions) is seen done
 * within poll_ns and handed over at once, not after a wake-up of this
 * thread (20-40 us). It costs a second core for as long as the waiter
 * spins (MOX_WAIT_SPIN_US at most). */
static bool watched_from_outside(mox__cuda_dev *dev)
{
    return atomic_load_explicit(&dev->watchers, memory_order_relaxed) != 0;
}

/* A wait on work_cv of at most `us` (dev->lock held); true when signalled.
 * `quiet`: new launches do not signal it. */
static bool timed_wait(mox__cuda_dev *dev, uint32_t us, bool quiet)
{
    dev->waiting = true;
    dev->quiet = quiet;
    if (quiet)
        atomic_fetch_add_explicit(&dev->stats.quiet_waits, 1, memory_order_relaxed);
    bool signalled = mox__cond_wait(&dev->work_cv, &dev->lock, us ? us : 1);
    dev->waiting = false;
    dev->quiet = false;
    return signalled;
}

/* Whether something in flight is not watched by a waiting thread;
 * dev->lock held. */
static bool any_unwatched(const mox__cuda_dev *dev)
{
    for (const mox__cuda_group *g = dev->inflight_head; g; g = g->next)
        if (!g->claimed)
            return true;
    return false;
}

/* The completion thread's state between rounds, and one round's snapshot
 * of the in-flight list. */
typedef struct completion_loop {
    mox__cuda_group *snap[SNAPSHOT];
    CUresult res[SNAPSHOT];
    uint32_t npreds[SNAPSHOT];
    bool watched[SNAPSHOT];
    uint32_t n, unwatched;
    bool one_stream;
    uint64_t spin_start, idle_spin_ns;
    uint32_t backoff_us;
} completion_loop;

/* Nothing in flight (dev->lock held, and held again on return): spins a
 * while, polls while waiting threads complete the launches, or sleeps on
 * the condition variable. False when the device is stopping. */
static bool idle_round(mox__cuda_dev *dev, completion_loop *c)
{
    /* Nothing in flight: launches record spin events again. */
    atomic_store_explicit(&dev->sleepy, false, memory_order_relaxed);
    if (dev->stopping)
        return false;
    if (mox__cuda_now_ns() - c->spin_start < c->idle_spin_ns || watched_from_outside(dev)) {
        /* Just completed something, or a thread waits on this
         * device: a launch + wait loop submits again within
         * microseconds, and a waiter's merged launch is seen at
         * once. Spinning here means that
         * launch needs no condition signal (a futex syscall on the
         * submitting thread) and no wake-up of this thread before
         * its first query: most of the round trip over a raw spin
         * wait. The lock stays free meanwhile (new work shows as a
         * change of `pushes`). */
        uint32_t seen = atomic_load_explicit(&dev->pushes, memory_order_relaxed);
        mox__unlock(&dev->lock);
        while (atomic_load_explicit(&dev->pushes, memory_order_relaxed) == seen &&
               (mox__cuda_now_ns() - c->spin_start < c->idle_spin_ns || watched_from_outside(dev)))
            mox__cuda_cpu_relax();
        mox__lock(&dev->lock);
        return true;
    }
    if (mox__cuda_now_ns() < dev->quiet_until_ns) {
        /* Waiting threads complete the launches: look again soon. */
        if (timed_wait(dev, QUIET_POLL_US, true) || dev->inflight_head)
            c->spin_start = mox__cuda_now_ns(); /* signalled, or launches came: spin on them */
        return true;
    }
    dev->waiting = true;
    mox__cond_wait(&dev->work_cv, &dev->lock, 0);
    dev->waiting = false;
    c->spin_start = mox__cuda_now_ns();
    c->backoff_us = 20;
    return true;
}

/* Reaps, then snapshots the in-flight list (dev->lock held). Groups leave
 * the list here or in mox__cuda_complete_inline. One a waiting thread
 * finished while it was in a snapshot (snapped) is freed only here, with
 * no snapshot held, so the snapshot's pointers stay valid after the lock
 * is dropped; any other the waiting thread frees itself (its block cache
 * serves its next launch). Whether a group is still to be finished is
 * decided under the lock. */
static void take_snapshot(mox__cuda_dev *dev, completion_loop *c)
{
    mox__cuda_groups_reap(dev);
    c->n = c->unwatched = 0;
    c->one_stream = true;
    for (mox__cuda_group *g = dev->inflight_head; g && c->n < SNAPSHOT; g = g->next) {
        /* Waiting for another device's point counts as a predecessor.
         * A group a waiting user thread watches is its to complete
         * (mox__cuda_complete_inline): not queried here, so the two
         * threads do not contend for the driver's locks. */
        c->npreds[c->n] = g->npred + !mox__cuda_foreign_ready(g);
        c->watched[c->n] = g->claimed;
        c->unwatched += !g->claimed;
        g->snapped = !g->claimed; /* it may use g after the lock: g is not freed elsewhere */
        c->snap[c->n++] = g;
        if (g->stream != dev->inflight_head->stream)
            c->one_stream = false;
    }
}

/* Queries and finishes the snapshot's groups that ended (no lock held);
 * returns how many it finished. */
static uint32_t finish_snapped(mox__cuda_dev *dev, completion_loop *c)
{
    uint32_t finished = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        /* npred drops as predecessors finish (here, or on a thread
         * waiting for one); a group's predecessors come before it in the
         * list, so one pass sees those it finishes itself first.
         * The snapshot's count serves until something finished in this
         * pass: taking the lock per group per round (every microsecond
         * while spinning) made the submitting thread, which needs the
         * same lock, collide with it and sleep in the kernel. */
        /* A group watched at the snapshot may be finished and freed by
         * its waiter any time now: not touched. */
        if (c->watched[i])
            continue;
        mox__cuda_group *g = c->snap[i];
        uint32_t npred = c->npreds[i];
        if (npred && finished) {
            mox__lock(&dev->lock);
            npred = g->npred + !mox__cuda_foreign_ready(g);
            mox__unlock(&dev->lock);
        }
        if (npred)
            continue;
        c->res[i] = g->launched ? dev->api->cuEventQuery(g->event) : CUDA_SUCCESS;
        if (c->res[i] == CUDA_ERROR_NOT_READY)
            continue;
        mox__lock(&dev->lock);
        bool ours = g->linked && !g->claimed;
        if (ours)
            mox__cuda_inflight_retire(dev, g);
        mox__unlock(&dev->lock);
        if (!ours)
            continue; /* a waiting thread is completing it, or did */
        mox__cuda_group_finish(dev, g, c->res[i], NULL);
        c->snap[i] = NULL; /* freed */
        finished++;
    }
    return finished;
}

/* After a round that finished nothing (no lock held): spins a poll period
 * while within the spin window, or sleeps on the first launch's event.
 * True when it slept. */
static bool pace_round(mox__cuda_dev *dev, completion_loop *c)
{
    if (c->unwatched &&
        (mox__cuda_now_ns() - c->spin_start < (uint64_t)dev->spin_us * 1000u || watched_from_outside(dev))) {
        /* At most one query round per poll_ns (default 1 us): each
         * query takes driver locks that the submitting threads need
         * too; a shorter pace answers a lone waiter sooner. */
        uint64_t until = mox__cuda_now_ns() + dev->poll_ns;
        while (mox__cuda_now_ns() < until)
            mox__cuda_cpu_relax();
        return false;
    }
    if (c->unwatched && c->one_stream && !c->watched[0] && c->snap[0] && c->snap[0]->launched &&
        c->npreds[0] == 0) {
        /* From now on launches can be slept on until their own end. */
        atomic_store_explicit(&dev->sleepy, true, memory_order_relaxed);
        CUresult woke; /* the next round queries it: then it is finished here */
        if (mox__cuda_event_sleep(dev, c->snap[0], &woke)) {
            /* Errors come back from the query that follows. */
            atomic_fetch_add_explicit(&dev->stats.event_sleeps, 1, memory_order_relaxed);
            c->spin_start = mox__cuda_now_ns();
            return true;
        }
    }
    return false;
}

/* The round's end (takes dev->lock and keeps it): releases the snapshot,
 * and waits when nothing moved and nothing is to be queried soon. */
static void end_round(mox__cuda_dev *dev, completion_loop *c, uint32_t finished, bool slept)
{
    mox__lock(&dev->lock);
    for (uint32_t i = 0; i < c->n; i++)
        if (c->snap[i] && !c->watched[i])
            c->snap[i]->snapped = false; /* a waiter that finishes it may free it now */
    if (!c->unwatched && any_unwatched(dev))
        c->unwatched = 1; /* given back since the snapshot: query it now */
    if (finished || slept || !dev->inflight_head)
        return;
    if (c->unwatched &&
        (mox__cuda_now_ns() - c->spin_start < (uint64_t)dev->spin_us * 1000u || watched_from_outside(dev)))
        return;
    /* Everything watched: a waiter gives a launch back with a
     * signal; new launches are looked for every QUIET_POLL_US. */
    bool quiet = !c->unwatched;
    if (!quiet) /* sleeping on launches nobody watches: let later ones be slept on */
        atomic_store_explicit(&dev->sleepy, true, memory_order_relaxed);
    if (timed_wait(dev, quiet ? QUIET_POLL_US : c->backoff_us, quiet) || (quiet && any_unwatched(dev)))
        c->spin_start = mox__cuda_now_ns(); /* new work: spin again */
    else if (!quiet && c->backoff_us < 1000)
        c->backoff_us *= 2;
}

static void *completion_main(void *arg)
{
    mox__cuda_dev *dev = arg;
    mox__thread_mark_runtime("mox-cuda-done");
    dev->api->cuCtxSetCurrent(dev->ctx);
    completion_loop c;
    c.spin_start = mox__cuda_now_ns();
    c.backoff_us = 20;
    c.idle_spin_ns = 1000ull * (dev->spin_us < IDLE_SPIN_US ? dev->spin_us : IDLE_SPIN_US);

    mox__lock(&dev->lock);
    for (;;) {
        if (!dev->inflight_head) {
            if (!idle_round(dev, &c))
                break;
            continue;
        }
        take_snapshot(dev, &c);
        mox__unlock(&dev->lock);
        uint32_t finished = finish_snapped(dev, &c);
        bool slept = false;
        if (finished) {
            c.spin_start = mox__cuda_now_ns();
            c.backoff_us = 20;
        } else {
            slept = pace_round(dev, &c);
        }
        end_round(dev, &c, finished, slept);
    }
    mox__unlock(&dev->lock);
    return NULL;
}

mox_status mox__cuda_completion_start(mox__cuda_dev *dev)
{
    int rc = pthread_create(&dev->thread, NULL, completion_main, dev);
    if (rc != 0)
        return mox__cuda_error(MOX_ERR_BACKEND, "cannot start the CUDA completion thread: %s",
                               strerror(rc));
    dev->thread_started = true;
    return MOX_OK;
}

void mox__cuda_completion_stop(mox__cuda_dev *dev)
{
    if (!dev->thread_started)
        return;
    /* The thread drains what is in flight before it exits, so no waiter is
     * left without an answer. */
    mox__lock(&dev->lock);
    dev->stopping = true;
    mox__cond_signal(&dev->work_cv);
    mox__unlock(&dev->lock);
    pthread_join(dev->thread, NULL);
    dev->thread_started = false;
    mox__lock(&dev->lock);
    mox__cuda_groups_reap(dev);
    mox__unlock(&dev->lock);
}
