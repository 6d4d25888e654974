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
    mox__mutex_init(&sem->lock);
    sem->waiters = NULL;
}

void mox__semaphore_fini(mox__semaphore *sem)
{
    mox_error_release(atomic_load(&sem->failure));
    mox__mutex_destroy(&sem->lock);
}

/* The host waiters form a ring in ascending order of value: `waiters`
 * points at the last (highest) one, whose `next` is the first (lowest).
 * Waiters mostly come in ascending order (the CPU backend waits for the
 * previous value of each execution's own queue) and a signal releases the
 * lowest ones: both ends are reached in one step, where a list scanned
 * whole cost a step per pending waiter on every signal.
 *
 * `waiters` is written under the lock but read without it by a signal
 * that finds nobody waiting (the common case: the core signals every
 * execution's semaphore, few have host waiters), so every access to it is
 * atomic, sequentially consistent where the signal's value and the ring
 * meet (mox__semaphore_signal). */
static mox__sem_waiter *ring_last(mox__semaphore *sem)
{
    return __atomic_load_n(&sem->waiters, __ATOMIC_SEQ_CST);
}

static void set_ring_last(mox__semaphore *sem, mox__sem_waiter *last)
{
    __atomic_store_n(&sem->waiters, last, __ATOMIC_SEQ_CST);
}

/* Inserts w after the waiters of the same or a lower value. Lock held. */
static void ring_insert(mox__semaphore *sem, mox__sem_waiter *w)
{
    mox__sem_waiter *last = ring_last(sem);
    if (!last) {
        w->next = w;
        set_ring_last(sem, w);
        return;
    }
    if (w->value >= last->value) {
        w->next = last->next;
        last->next = w;
        set_ring_last(sem, w);
        return;
    }
    mox__sem_waiter *prev = last;
    while (prev->next->value <= w->value)
        prev = prev->next;
    w->next = prev->next;
    prev->next = w;
}

/* Takes w (listed) out of the ring. Lock held. */
static void ring_remove(mox__semaphore *sem, mox__sem_waiter *w)
{
    mox__sem_waiter *last = ring_last(sem), *prev = last;
    while (prev->next != w)
        prev = prev->next;
    if (prev == w) { /* the only one */
        set_ring_last(sem, NULL);
        return;
    }
    prev->next = w->next;
    if (w == last)
        set_ring_last(sem, prev);
}

static bool point_passed(mox__semaphore *sem, uint64_t value)
{
    return atomic_load(&sem->value) >= value || mox__semaphore_failure(sem);
}

bool mox__semaphore_wait_async(mox__semaphore *sem, mox__sem_waiter *w)
{
    if (point_passed(sem, w->value))
        return false;
    mox__lock(&sem->lock);
    ring_insert(sem, w);
    /* Checked again once listed: a signal that stored its value before
     * the waiter was listed may not have seen it (it skips the lock when
     * the ring looks empty), and then the waiter leaves again. */
    bool wait = !point_passed(sem, w->value);
    if (!wait)
        ring_remove(sem, w);
    mox__unlock(&sem->lock);
    return wait;
}

/* Takes the waiters whose point is reached (all of them when `all`), in
 * ascending order of value, as a NULL-terminated list. */
static mox__sem_waiter *take_ready(mox__semaphore *sem, uint64_t value, bool all)
{
    mox__sem_waiter *ready = NULL;
    mox__lock(&sem->lock);
    mox__sem_waiter *last = ring_last(sem);
    if (last && (all || last->value <= value)) {
        ready = last->next;
        last->next = NULL;
        set_ring_last(sem, NULL);
    } else if (last && last->next->value <= value) {
        ready = last->next;
        mox__sem_waiter *end = ready;
        while (end->next->value <= value)
            end = end->next;
        last->next = end->next;
        end->next = NULL;
    }
    mox__unlock(&sem->lock);
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
           !atomic_compare_exchange_weak_explicit(&sem->value, &cur, value, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
    }
    /* The value is stored before the ring is read (both sequentially
     * consistent), and a waiter is listed before it reads the value: one
     * of the two sees the other, so an empty ring means no waiter missed
     * this value. */
    if (ring_last(sem))
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
