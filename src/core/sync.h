/* sync.h - the runtime's synchronisation vocabulary: a mutex wrapper, a
 * spin lock for a few fields, the waker cell every pending op parks its
 * waker in, and a parker for the blocking waits.
 *
 * Waker cells solve one problem: a runtime thread must be able to call an
 * op's waker without holding any lock (the waker may take user locks), yet
 * once mox_op_drop returns the op's waker must never run again (its ctx may
 * be gone). Registries (a submission's waiter slot, a module's waiter list,
 * the capacity list) pin a cell while holding their own lock, release the
 * lock, call the cell, unpin it. An op leaving a registry removes its cell
 * under the registry lock, then waits for pins to drain (a waker call in
 * progress is short by contract) before the cell may die.
 */
#ifndef MOX_CORE_SYNC_H
#define MOX_CORE_SYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mox/op.h>

/* A mutex of one futex word (0 free, 1 held, 2 held and a thread may
 * sleep on it): uncontended, a lock is one compare-and-swap and an unlock
 * one exchange, where a pthread mutex cost about 55 instructions per pair
 * (the device lock is taken on every submission). A contended locker spins
 * a little, then sleeps on the word; an unlock that finds 2 wakes one.
 * Zeroed memory is an unlocked mutex; nothing to destroy. Its condition
 * is mox__cond (below), not pthread's: a lock a pthread condition waits on
 * stays a pthread mutex (the worker's, device.h). */
typedef struct mox__mutex {
    _Atomic int state;
} mox__mutex;

void mox__mutex_init(mox__mutex *mutex);
void mox__mutex_destroy(mox__mutex *mutex);
void mox__lock_contended(mox__mutex *mutex);
void mox__unlock_wake(mox__mutex *mutex);
static inline void mox__lock(mox__mutex *mutex)
{
    int free = 0;
    if (!atomic_compare_exchange_strong_explicit(&mutex->state, &free, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        mox__lock_contended(mutex);
}
static inline void mox__unlock(mox__mutex *mutex)
{
    if (atomic_exchange_explicit(&mutex->state, 0, memory_order_release) == 2)
        mox__unlock_wake(mutex);
}

/* A condition variable for a mox__mutex: a futex sequence word. A wait
 * reads the word under the mutex, releases it, sleeps while the word is
 * unchanged, and locks again; a signal (made under the mutex, so that no
 * waiter between its read and its sleep misses it) advances the word and
 * wakes one sleeper. Waits may end spuriously; callers look again. */
typedef struct mox__cond {
    _Atomic int seq;
} mox__cond;

static inline void mox__cond_init(mox__cond *cond) { atomic_init(&cond->seq, 0); }
/* Waits on `cond` with `mutex` held, at most `timeout_us` microseconds (0:
 * no limit). False when the time ran out, true otherwise (signalled, or
 * spuriously). */
bool mox__cond_wait(mox__cond *cond, mox__mutex *mutex, uint64_t timeout_us);
void mox__cond_signal(mox__cond *cond);
void mox__cond_broadcast(mox__cond *cond);

/* A lock for critical sections of a few loads and stores that never call
 * out or take another lock: a waker cell's waker, a submission's result
 * slot. Every op and every submission has one, so it must cost nothing to
 * create (zeroed memory is an unlocked spin lock; nothing to destroy) and
 * little to take: one atomic exchange and one store uncontended, where a
 * pthread mutex cost about 40 instructions per lock/unlock pair plus its
 * init and destroy on every op. A contended waiter spins a little, then
 * yields, so a preempted holder delays it but cannot starve it forever. */
typedef struct mox__spin {
    atomic_uint held;
} mox__spin;

static inline void mox__spin_init(mox__spin *spin) { atomic_init(&spin->held, 0); }
void mox__spin_contended(mox__spin *spin);
static inline void mox__spin_lock(mox__spin *spin)
{
    if (atomic_exchange_explicit(&spin->held, 1, memory_order_acquire))
        mox__spin_contended(spin);
}
static inline void mox__spin_unlock(mox__spin *spin)
{
    atomic_store_explicit(&spin->held, 0, memory_order_release);
}

typedef struct mox__waker_cell mox__waker_cell;

/* Intrusive membership of a cell in a registry's list. */
typedef struct mox__wait_link {
    mox__waker_cell *prev, *next;
    struct mox__wait_list *list; /* NULL when not listed; guarded by the list's lock */
} mox__wait_link;

struct mox__waker_cell {
    mox__spin lock;      /* guards waker/armed; never held while calling out */
    mox_waker waker;
    bool armed;
    bool untraced;       /* not an op's (the trace's wake events name the op) */
    _Atomic int pins;
    mox__wait_link link;
};

/* Zeroed memory is an initialised cell (what this makes). */
void mox__cell_init(mox__waker_cell *cell);
/* Nothing to free (the spin lock needs no destruction); kept so that a
 * cell's owner says where its life ends. */
static inline void mox__cell_destroy(mox__waker_cell *cell) { (void)cell; }
/* Stores the waker to call on the next wake (the latest waker wins). */
void mox__cell_arm(mox__waker_cell *cell, mox_waker waker);
/* Calls the armed waker once (if armed), without holding any lock. The caller
 * guarantees the cell is alive (it pinned it, or it owns it). */
void mox__cell_wake(mox__waker_cell *cell);
static inline void mox__cell_pin(mox__waker_cell *cell)
{
    atomic_fetch_add_explicit(&cell->pins, 1, memory_order_relaxed);
}
static inline void mox__cell_unpin(mox__waker_cell *cell)
{
    atomic_fetch_sub_explicit(&cell->pins, 1, memory_order_release);
}
/* Disarms and waits until no registry is calling the cell. The caller must
 * already have removed the cell from every registry. */
void mox__cell_quiesce(mox__waker_cell *cell);

/* A list of waiting cells guarded by an external lock (the registry's). */
typedef struct mox__wait_list {
    mox__waker_cell *head;
} mox__wait_list;

/* Both require the list's lock. All the lists one cell can be on (and the
 * snapshots of mox__wait_list_wake_all) must be guarded by that same lock:
 * adding first unlinks the cell from the list it is on. */
void mox__wait_list_add(mox__wait_list *list, mox__waker_cell *cell);
void mox__wait_list_remove(mox__waker_cell *cell); /* no-op if not listed */

/* Wakes every cell of `list` and empties it. `lock` guards the list and is
 * held on entry and on return, but released while wakers run. */
void mox__wait_list_wake_all(mox__wait_list *list, mox__mutex *lock);

/* Blocking waits: a parker whose waker unparks it. It spins briefly before
 * sleeping (a completion that arrives within a few microseconds costs no
 * futex round trip), sleeps on a futex of its state word, and unpark only
 * makes a system call when the parker really sleeps. One word, nothing to
 * create or destroy: a wait costs no mutex and condition variable set-up. */
typedef struct mox__parker {
    _Atomic int state; /* 0 empty, 1 notified, 2 sleeping */
} mox__parker;

void mox__parker_init(mox__parker *parker);
void mox__parker_destroy(mox__parker *parker);
void mox__parker_park(mox__parker *parker);
void mox__parker_unpark(void *parker); /* a mox_waker.wake */
/* Sleeps, without spinning first, until `until_ns` (mox__now_ns clock) or
 * an unpark, whichever comes first; the unpark is left for the next park
 * to consume. True when unparked (now or before the call). */
bool mox__parker_nap(mox__parker *parker, uint64_t until_ns);
/* Whether an unpark is waiting to be consumed by the next park. */
static inline bool mox__parker_notified(mox__parker *parker)
{
    return atomic_load_explicit(&parker->state, memory_order_relaxed) == 1;
}
uint64_t mox__now_ns(void); /* CLOCK_MONOTONIC */
static inline void mox__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#endif
