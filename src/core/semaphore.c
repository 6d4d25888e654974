/* semaphore.c - timeline semaphores of the HAL (src/hal/hal.h): a value
 * that only grows, a failure set once, and host waiters run when their
 * point is reached. One per queue of each device; the core signals them
 * when an execution completes. */
#include "semaphore.h"

#include "error.h"

void mox__semaphore_init(mox__semaphore *sem, mox__backend *owner, uint32_t queue)
{
    atomic_init(&sem->value, 0);
    atomic_init(&sem->issued, 0);
    atomic_init(&sem->failure, NULL);
    sem->owner = owner;
    sem->queue = queue;
    sem->be = NULL;
    pthread_mutex_init(&sem->lock, NULL);
    sem->waiters = NULL;
}

void mox__semaphore_fini(mox__semaphore *sem)
{
    mox_error_release(atomic_load(&sem->failure));
    pthread_mutex_destroy(&sem->lock);
}

bool mox__semaphore_wait_async(mox__semaphore *sem, mox__sem_waiter *w)
{
    if (mox__semaphore_reached(sem, w->value) || mox__semaphore_failure(sem))
        return false;
    pthread_mutex_lock(&sem->lock);
    /* Checked again under the lock: signal and fail change state before
     * they take it to collect waiters. */
    bool wait = !mox__semaphore_reached(sem, w->value) && !mox__semaphore_failure(sem);
    if (wait) {
        w->next = sem->waiters;
        sem->waiters = w;
    }
    pthread_mutex_unlock(&sem->lock);
    return wait;
}

/* Takes the waiters whose point is reached (all of them when `all`). */
static mox__sem_waiter *take_ready(mox__semaphore *sem, uint64_t value, bool all)
{
    mox__sem_waiter *ready = NULL;
    pthread_mutex_lock(&sem->lock);
    for (mox__sem_waiter **p = &sem->waiters; *p;) {
        mox__sem_waiter *w = *p;
        if (all || w->value <= value) {
            *p = w->next;
            w->next = ready;
            ready = w;
        } else {
            p = &w->next;
        }
    }
    pthread_mutex_unlock(&sem->lock);
    return ready;
}

static void run_waiters(mox__sem_waiter *w)
{
    while (w) {
        mox__sem_waiter *next = w->next; /* fn may reuse w */
        w->fn(w->ctx);
        w = next;
    }
}

void mox__semaphore_signal(mox__semaphore *sem, uint64_t value)
{
    uint64_t cur = atomic_load_explicit(&sem->value, memory_order_relaxed);
    while (cur < value &&
           !atomic_compare_exchange_weak_explicit(&sem->value, &cur, value, memory_order_release,
                                                  memory_order_relaxed)) {
    }
    run_waiters(take_ready(sem, value, false));
}

void mox__semaphore_fail(mox__semaphore *sem, mox_error *error)
{
    mox_error *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&sem->failure, &expected, error,
                                                 memory_order_acq_rel, memory_order_acquire))
        mox_error_release(error);
    run_waiters(take_ready(sem, 0, true));
}
