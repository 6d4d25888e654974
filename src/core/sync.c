/* sync.c - waker cells, wait lists and parkers (see sync.h for why). */
#include "sync.h"
#include "trace.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

void mox__mutex_init(mox__mutex *mutex) { atomic_init(&mutex->state, 0); }
void mox__mutex_destroy(mox__mutex *mutex) { (void)mutex; }

static void futex_wait(_Atomic int *word, int value);
static void futex_wake_one(_Atomic int *word);

/* mox__lock's contended case: a short spin (the holder's sections are
 * short), then the futex: the word is set to 2 before each sleep, so the
 * unlock that ends the holder's section knows to wake a sleeper. */
void mox__lock_contended(mox__mutex *mutex)
{
    enum { SPINS = 64 };
    for (int i = 0; i < SPINS; i++) {
        mox__cpu_relax();
        int free = 0;
        if (atomic_load_explicit(&mutex->state, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&mutex->state, &free, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return;
    }
    while (atomic_exchange_explicit(&mutex->state, 2, memory_order_acquire) != 0)
        futex_wait(&mutex->state, 2);
}

void mox__unlock_wake(mox__mutex *mutex) { futex_wake_one(&mutex->state); }

bool mox__cond_wait(mox__cond *cond, mox__mutex *mutex, uint64_t timeout_us)
{
    int seq = atomic_load_explicit(&cond->seq, memory_order_relaxed);
    mox__unlock(mutex);
    struct timespec rel = {(time_t)(timeout_us / 1000000u), (long)(timeout_us % 1000000u) * 1000L};
    long rc = syscall(SYS_futex, (int *)&cond->seq, FUTEX_WAIT_PRIVATE, seq, timeout_us ? &rel : NULL,
                      NULL, 0);
    bool timed_out = rc != 0 && errno == ETIMEDOUT;
    mox__lock(mutex);
    return !timed_out;
}

void mox__cond_signal(mox__cond *cond)
{
    atomic_fetch_add_explicit(&cond->seq, 1, memory_order_relaxed);
    futex_wake_one(&cond->seq);
}

void mox__cond_broadcast(mox__cond *cond)
{
    atomic_fetch_add_explicit(&cond->seq, 1, memory_order_relaxed);
    syscall(SYS_futex, (int *)&cond->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void mox__spin_contended(mox__spin *spin)
{
    enum { SPINS_BEFORE_YIELD = 64 };
    for (uint32_t i = 1;; i++) {
        if (atomic_load_explicit(&spin->held, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(&spin->held, 1, memory_order_acquire) == 0)
            return;
        if (i % SPINS_BEFORE_YIELD == 0)
            sched_yield();
        else
            mox__cpu_relax();
    }
}

void mox__cell_init(mox__waker_cell *cell)
{
    mox__spin_init(&cell->lock);
    cell->waker.wake = NULL;
    cell->waker.ctx = NULL;
    cell->armed = false;
    atomic_init(&cell->pins, 0);
    cell->link.prev = cell->link.next = NULL;
    cell->link.list = NULL;
}

void mox__cell_arm(mox__waker_cell *cell, mox_waker waker)
{
    mox__spin_lock(&cell->lock);
    cell->waker = waker;
    cell->armed = waker.wake != NULL;
    mox__spin_unlock(&cell->lock);
}

void mox__cell_wake(mox__waker_cell *cell)
{
    mox__spin_lock(&cell->lock);
    mox_waker w = cell->waker;
    bool armed = cell->armed;
    cell->armed = false;
    mox__spin_unlock(&cell->lock);
    if (armed && w.wake) {
        if (mox__trace_on() && !cell->untraced)
            mox__trace_wake(cell);
        w.wake(w.ctx);
    }
}

void mox__cell_quiesce(mox__waker_cell *cell)
{
    mox__spin_lock(&cell->lock);
    cell->armed = false;
    mox__spin_unlock(&cell->lock);
    /* A registry that pinned the cell before it was removed may still be
     * calling it; such a call is short (wakers must be cheap). */
    while (atomic_load_explicit(&cell->pins, memory_order_acquire) != 0)
        sched_yield();
}

void mox__wait_list_add(mox__wait_list *list, mox__waker_cell *cell)
{
    if (cell->link.list == list)
        return;
    /* A cell is on one list at a time. It may still be on another one -
     * another module's waiters, or the snapshot a wake_all is working
     * through - and linking it here without unlinking it there corrupted
     * both lists: the snapshot's head kept pointing at a cell that was no
     * longer on it, and its waker spun on that cell forever. Every list a
     * cell can be on is guarded by the lock the caller holds. */
    mox__wait_list_remove(cell);
    cell->link.list = list;
    cell->link.prev = NULL;
    cell->link.next = list->head;
    if (list->head)
        list->head->link.prev = cell;
    list->head = cell;
}

void mox__wait_list_remove(mox__waker_cell *cell)
{
    mox__wait_list *list = cell->link.list;
    if (!list)
        return;
    if (cell->link.prev)
        cell->link.prev->link.next = cell->link.next;
    else
        list->head = cell->link.next;
    if (cell->link.next)
        cell->link.next->link.prev = cell->link.prev;
    cell->link.prev = cell->link.next = NULL;
    cell->link.list = NULL;
}

void mox__wait_list_wake_all(mox__wait_list *list, mox__mutex *lock)
{
    enum { BATCH = 32 };
    mox__waker_cell *cells[BATCH];
    /* Only the cells listed now: an op woken here may re-register at once,
     * and must not be woken again by this call. Cells stay removable (by a
     * dropping op, under `lock`) while they wait in `snapshot`. */
    mox__wait_list snapshot = {list->head};
    list->head = NULL;
    for (mox__waker_cell *c = snapshot.head; c; c = c->link.next)
        c->link.list = &snapshot;
    while (snapshot.head) {
        int n = 0;
        while (snapshot.head && n < BATCH) {
            mox__waker_cell *c = snapshot.head;
            mox__wait_list_remove(c);
            mox__cell_pin(c);
            cells[n++] = c;
        }
        mox__unlock(lock);
        for (int i = 0; i < n; i++) {
            mox__cell_wake(cells[i]);
            mox__cell_unpin(cells[i]);
        }
        mox__lock(lock);
    }
}

void mox__parker_init(mox__parker *parker) { atomic_init(&parker->state, 0); }

void mox__parker_destroy(mox__parker *parker) { (void)parker; }

/* Sleeps while *word == value (or until a spurious wake-up). */
static void futex_wait(_Atomic int *word, int value)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake_one(_Atomic int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

uint64_t mox__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mox__parker_park(mox__parker *parker)
{
    /* Spin for a fixed time, not a fixed count: a pause lasts ~140 cycles
     * on recent Intel cores but only a few on others, where 1000 of them
     * were ~3 us - less than a GPU launch + completion round trip, so the
     * waiter slept and paid a futex wake-up (several us) every time. 30 us
     * covers a round trip; the clock is read every 64 pauses only. */
    enum { SPIN_NS = 30000, CHECK_EVERY = 64 };
    uint64_t start = 0;
    for (uint32_t i = 1;; i++) {
        if (atomic_load_explicit(&parker->state, memory_order_relaxed) == 1 &&
            atomic_exchange_explicit(&parker->state, 0, memory_order_acquire) == 1)
            return;
        mox__cpu_relax();
        if (i % CHECK_EVERY == 0) {
            uint64_t t = mox__now_ns();
            if (!start)
                start = t;
            else if (t - start >= SPIN_NS)
                break;
        }
    }
    int expected = 0;
    if (atomic_compare_exchange_strong(&parker->state, &expected, 2)) {
        while (atomic_load(&parker->state) == 2)
            futex_wait(&parker->state, 2);
    }
    atomic_store(&parker->state, 0); /* consume the notification */
}

bool mox__parker_nap(mox__parker *parker, uint64_t until_ns)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&parker->state, &expected, 2))
        return true; /* notified already */
    for (uint64_t t = mox__now_ns(); t < until_ns && atomic_load(&parker->state) == 2;
         t = mox__now_ns()) {
        struct timespec left = {(time_t)((until_ns - t) / 1000000000u),
                                (long)((until_ns - t) % 1000000000u)};
        syscall(SYS_futex, (int *)&parker->state, FUTEX_WAIT_PRIVATE, 2, &left, NULL, 0);
    }
    expected = 2;
    /* Failing means an unpark came (state 1): it stays for the next park. */
    return !atomic_compare_exchange_strong(&parker->state, &expected, 0);
}

void mox__parker_unpark(void *p)
{
    mox__parker *parker = p;
    if (atomic_exchange(&parker->state, 1) == 2)
        futex_wake_one(&parker->state); /* it sleeps, or is about to: the futex checks the word */
}
