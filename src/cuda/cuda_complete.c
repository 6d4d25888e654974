/* src/cuda/cuda_complete.c - the completion thread.
 *
 * One runtime thread per device watches the completion events of in-flight
 * submissions. It spins (cuEventQuery on each, oldest first) for a short
 * window after work arrives or completes, because most batches finish in
 * microseconds and a blocking wait costs 20-30 us of wake-up. Past the
 * window it sleeps: when every in-flight submission is on one stream, in
 * cuEventSynchronize on the oldest one's blocking-sync event (the driver
 * wakes it); otherwise in a timed condition wait with growing timeouts,
 * which a new submission also ends. With nothing in flight it sleeps on the
 * condition variable and costs no CPU. Never cuLaunchHostFunc: host
 * functions may not call CUDA and add 20-40 us.
 *
 * A waiter may also take a completion itself (mox__cuda_sub_spin): whoever
 * claims the submission first processes it, exactly once.
 */
#include "cuda/cuda_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SNAPSHOT 64

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void mox__cuda_completion_push(mox__cuda_dev *dev, mox__cuda_sub *sub)
{
    sub->prev = dev->inflight_tail;
    sub->next = NULL;
    if (dev->inflight_tail)
        dev->inflight_tail->next = sub;
    else
        dev->inflight_head = sub;
    dev->inflight_tail = sub;
    dev->inflight++;
    if (dev->waiting)
        pthread_cond_signal(&dev->work_cv);
}

static void unlink_sub(mox__cuda_dev *dev, mox__cuda_sub *sub)
{
    if (sub->prev)
        sub->prev->next = sub->next;
    else
        dev->inflight_head = sub->next;
    if (sub->next)
        sub->next->prev = sub->prev;
    else
        dev->inflight_tail = sub->prev;
    sub->next = sub->prev = NULL;
    dev->inflight--;
}

static bool claim(mox__cuda_sub *sub)
{
    return !atomic_exchange(&sub->claimed, true);
}

/* Claims and finishes `sub` after its event reported `r`. */
static void complete(mox__cuda_dev *dev, mox__cuda_sub *sub, CUresult r)
{
    if (!claim(sub))
        return;
    pthread_mutex_lock(&dev->lock);
    unlink_sub(dev, sub);
    pthread_mutex_unlock(&dev->lock);
    if (r == CUDA_SUCCESS) {
        mox__cuda_sub_finish(dev, sub, MOX_OK, NULL);
        return;
    }
    mox_status st = mox__cuda_fail(dev->api, r, "cuEventQuery", "(waiting for a batch)");
    if (st == MOX_ERR_DEVICE_LOST) {
        mox__cuda_dev_lost(dev, mox__cuda_last_message());
        mox__cuda_sub_finish(dev, sub, st, dev->lost_message);
    } else {
        mox__cuda_sub_finish(dev, sub, st, mox__cuda_last_message());
    }
}

bool mox__cuda_sub_spin(mox__cuda_dev *dev, mox__cuda_sub *sub, uint32_t spin_us)
{
    if (atomic_load(&sub->claimed))
        return true;
    if (dev->api->cuCtxSetCurrent(dev->ctx) != CUDA_SUCCESS)
        return false;
    uint64_t end = now_ns() + (uint64_t)spin_us * 1000u;
    for (;;) {
        CUresult r = dev->api->cuEventQuery(sub->event);
        if (r != CUDA_ERROR_NOT_READY) {
            complete(dev, sub, r);
            return true;
        }
        if (atomic_load(&sub->claimed))
            return true;
        if (now_ns() >= end)
            return false;
        cpu_relax();
    }
}

static void *completion_main(void *arg)
{
    mox__cuda_dev *dev = arg;
    const mox__cuda_api *api = dev->api;
    api->cuCtxSetCurrent(dev->ctx);
    mox__cuda_sub *snap[SNAPSHOT];
    CUresult res[SNAPSHOT];
    uint64_t spin_start = now_ns();
    uint32_t backoff_us = 20;

    pthread_mutex_lock(&dev->lock);
    for (;;) {
        if (!dev->inflight_head) {
            if (dev->stopping)
                break;
            dev->waiting = true;
            pthread_cond_wait(&dev->work_cv, &dev->lock);
            dev->waiting = false;
            spin_start = now_ns();
            backoff_us = 20;
            continue;
        }
        uint32_t n = 0;
        bool one_stream = true;
        for (mox__cuda_sub *s = dev->inflight_head; s && n < SNAPSHOT; s = s->next) {
            snap[n++] = mox__cuda_sub_retain(s);
            if (s->stream != dev->inflight_head->stream)
                one_stream = false;
        }
        pthread_mutex_unlock(&dev->lock);

        uint32_t finished = 0;
        for (uint32_t i = 0; i < n; i++) {
            res[i] = atomic_load(&snap[i]->claimed) ? CUDA_SUCCESS : api->cuEventQuery(snap[i]->event);
            if (res[i] != CUDA_ERROR_NOT_READY) {
                complete(dev, snap[i], res[i]);
                finished++;
            }
        }
        bool sleep_on_oldest = false;
        if (finished) {
            spin_start = now_ns();
            backoff_us = 20;
        } else if (now_ns() - spin_start < (uint64_t)dev->spin_us * 1000u) {
            cpu_relax();
        } else if (one_stream) {
            sleep_on_oldest = true;
        }
        if (sleep_on_oldest) {
            /* The oldest submission on the only busy stream finishes first;
             * the driver wakes us (blocking-sync event). The query that
             * follows reports the result, errors included. */
            api->cuEventSynchronize(snap[0]->event);
            spin_start = now_ns();
        }
        for (uint32_t i = 0; i < n; i++)
            mox__cuda_sub_release(snap[i]);

        pthread_mutex_lock(&dev->lock);
        if (!finished && !sleep_on_oldest && !one_stream &&
            now_ns() - spin_start >= (uint64_t)dev->spin_us * 1000u && dev->inflight_head) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)backoff_us * 1000u;
            ts.tv_sec += (time_t)(ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            dev->waiting = true;
            int rc = pthread_cond_timedwait(&dev->work_cv, &dev->lock, &ts);
            dev->waiting = false;
            if (rc != ETIMEDOUT)
                spin_start = now_ns(); /* new work: spin again */
            else if (backoff_us < 1000)
                backoff_us *= 2;
        }
    }
    pthread_mutex_unlock(&dev->lock);
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
    pthread_mutex_lock(&dev->lock);
    dev->stopping = true;
    pthread_cond_signal(&dev->work_cv);
    pthread_mutex_unlock(&dev->lock);
    pthread_join(dev->thread, NULL);
    dev->thread_started = false;
}
