/* sync.c - waker cells and wait lists: the latest waker wins, a wake is
 * one-shot, quiesce waits for a call in progress, wake_all wakes only the
 * cells listed when it started; spin locks exclude; a parker wakes on an
 * unpark that came before it parked and on one that comes while it sleeps. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "core/sync.h"

static int a_calls, b_calls;
static void wake_a(void *p) { (void)p; a_calls++; }
static void wake_b(void *p) { (void)p; b_calls++; }

static void latest_waker_wins_once(void **state)
{
    (void)state;
    mox__waker_cell c;
    mox__cell_init(&c);
    a_calls = b_calls = 0;
    mox__cell_arm(&c, (mox_waker){wake_a, NULL});
    mox__cell_arm(&c, (mox_waker){wake_b, NULL});
    mox__cell_wake(&c);
    mox__cell_wake(&c); /* one-shot until armed again */
    assert_int_equal(a_calls, 0);
    assert_int_equal(b_calls, 1);
    mox__cell_arm(&c, (mox_waker){wake_a, NULL});
    mox__cell_quiesce(&c); /* disarms */
    mox__cell_wake(&c);
    assert_int_equal(a_calls, 0);
    mox__cell_destroy(&c);
}

typedef struct slow_ctx {
    pthread_mutex_t m;
    pthread_cond_t c;
    int entered, release, done;
} slow_ctx;

static void slow_wake(void *p)
{
    slow_ctx *s = p;
    pthread_mutex_lock(&s->m);
    s->entered = 1;
    pthread_cond_broadcast(&s->c);
    while (!s->release)
        pthread_cond_wait(&s->c, &s->m);
    s->done = 1;
    pthread_mutex_unlock(&s->m);
}

typedef struct waker_thread {
    mox__waker_cell *cell;
} waker_thread;

static void *pinned_wake(void *p)
{
    mox__waker_cell *cell = p;
    mox__cell_wake(cell);
    mox__cell_unpin(cell);
    return NULL;
}

static void *quiesce_then_flag(void *p)
{
    mox__waker_cell *cell = p;
    mox__cell_quiesce(cell);
    return NULL;
}

static void quiesce_waits_for_a_call_in_progress(void **state)
{
    (void)state;
    slow_ctx s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    mox__waker_cell c;
    mox__cell_init(&c);
    mox__cell_arm(&c, (mox_waker){slow_wake, &s});
    mox__cell_pin(&c); /* as a registry does under its lock */
    pthread_t waker, quiescer;
    pthread_create(&waker, NULL, pinned_wake, &c);
    pthread_mutex_lock(&s.m);
    while (!s.entered)
        pthread_cond_wait(&s.c, &s.m);
    pthread_mutex_unlock(&s.m);
    pthread_create(&quiescer, NULL, quiesce_then_flag, &c);
    /* The quiescer cannot return while the waker runs; let the waker go
     * and both finish, with the waker's call complete first. */
    pthread_mutex_lock(&s.m);
    s.release = 1;
    pthread_cond_broadcast(&s.c);
    pthread_mutex_unlock(&s.m);
    pthread_join(quiescer, NULL);
    assert_int_equal(s.done, 1);
    pthread_join(waker, NULL);
    mox__cell_destroy(&c);
}

static mox__mutex list_lock;
static mox__wait_list list;
static mox__waker_cell cells[3];
static int wakes[3];

static void rewake(void *p)
{
    int i = (int)(intptr_t)p;
    wakes[i]++;
    /* Re-register at once, as a poller that is still pending would. */
    mox__lock(&list_lock);
    mox__cell_arm(&cells[i], (mox_waker){rewake, p});
    mox__wait_list_add(&list, &cells[i]);
    mox__unlock(&list_lock);
}

static void wake_all_wakes_a_snapshot(void **state)
{
    (void)state;
    mox__mutex_init(&list_lock);
    for (int i = 0; i < 3; i++) {
        mox__cell_init(&cells[i]);
        mox__cell_arm(&cells[i], (mox_waker){rewake, (void *)(intptr_t)i});
        mox__wait_list_add(&list, &cells[i]);
    }
    /* Removing one (a dropped op) while listed. */
    mox__wait_list_remove(&cells[1]);
    mox__lock(&list_lock);
    mox__wait_list_wake_all(&list, &list_lock);
    mox__unlock(&list_lock);
    assert_int_equal(wakes[0], 1);
    assert_int_equal(wakes[1], 0);
    assert_int_equal(wakes[2], 1);
    /* They re-registered and are listed again, not woken twice. */
    assert_ptr_equal(cells[0].link.list, &list);
    mox__lock(&list_lock);
    mox__wait_list_remove(&cells[0]);
    mox__wait_list_remove(&cells[2]);
    mox__unlock(&list_lock);
    assert_null(list.head);
    for (int i = 0; i < 3; i++)
        mox__cell_destroy(&cells[i]);
    mox__mutex_destroy(&list_lock);
}

enum { SPIN_THREADS = 4, SPIN_ROUNDS = 20000 };
static mox__spin spin; /* zeroed: unlocked */
static long spin_counter;

static void *spin_adder(void *p)
{
    (void)p;
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        mox__spin_lock(&spin);
        long v = spin_counter; /* a plain read-modify-write: only the lock makes it safe */
        spin_counter = v + 1;
        mox__spin_unlock(&spin);
    }
    return NULL;
}

static void spin_lock_excludes(void **state)
{
    (void)state;
    pthread_t t[SPIN_THREADS];
    for (int i = 0; i < SPIN_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, spin_adder, NULL), 0);
    for (int i = 0; i < SPIN_THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(spin_counter, (long)SPIN_THREADS * SPIN_ROUNDS);
}

static mox__parker parker;
static _Atomic int unparked;

static void *late_unpark(void *p)
{
    (void)p;
    /* Long enough for the parker to stop spinning and sleep on its futex. */
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&unparked, 1);
    mox__parker_unpark(&parker);
    return NULL;
}

static void parker_wakes_early_and_late(void **state)
{
    (void)state;
    mox__parker_init(&parker);
    mox__parker_unpark(&parker); /* before park: park returns at once */
    assert_true(mox__parker_notified(&parker));
    mox__parker_park(&parker);
    assert_false(mox__parker_notified(&parker));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, late_unpark, NULL), 0);
    mox__parker_park(&parker); /* returns only after the unpark */
    assert_int_equal(atomic_load(&unparked), 1);
    pthread_join(t, NULL);
    mox__parker_destroy(&parker);
}

/* A nap ends at its time, or at an unpark (which stays for the next
 * park); an unpark made before it ends it at once. */
static void parker_naps_until_its_time_or_an_unpark(void **state)
{
    (void)state;
    mox__parker_init(&parker);
    uint64_t t0 = mox__now_ns();
    assert_false(mox__parker_nap(&parker, t0 + 20 * 1000 * 1000)); /* nobody unparks */
    assert_true(mox__now_ns() - t0 >= 20 * 1000 * 1000);
    assert_false(mox__parker_notified(&parker));
    atomic_store(&unparked, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, late_unpark, NULL), 0);
    assert_true(mox__parker_nap(&parker, mox__now_ns() + 60ull * 1000 * 1000 * 1000));
    assert_int_equal(atomic_load(&unparked), 1); /* ended by the unpark, not the time */
    pthread_join(t, NULL);
    assert_true(mox__parker_notified(&parker)); /* left for the park */
    assert_true(mox__parker_nap(&parker, mox__now_ns() + 60ull * 1000 * 1000 * 1000));
    mox__parker_park(&parker); /* consumes it: returns at once */
    assert_false(mox__parker_notified(&parker));
    mox__parker_destroy(&parker);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(latest_waker_wins_once),
        cmocka_unit_test(quiesce_waits_for_a_call_in_progress),
        cmocka_unit_test(wake_all_wakes_a_snapshot),
        cmocka_unit_test(spin_lock_excludes),
        cmocka_unit_test(parker_wakes_early_and_late),
        cmocka_unit_test(parker_naps_until_its_time_or_an_unpark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
