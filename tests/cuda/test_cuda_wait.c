/* tests/cuda/test_cuda_wait.c - a waiting thread watching its launch
 * (complete_inline, through the backend's vtable): it completes a launch
 * it watched on its own thread, and the completion thread then leaves it
 * alone; one it gives back (time up, or its stop says so) is completed by
 * the completion thread; one it cannot take (not launched yet, or shared
 * with other submissions) is refused at once; one whose time is up may
 * block until done where the core lets it; launches nobody watches
 * complete right after inline completions too; while a waiting thread
 * watches the device (vtable watch) the completion thread queries instead
 * of sleeping on a launch's event. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static fx F;
static CUdeviceptr flags;

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    flags = fx_alloc(&F, 64 * 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, flags);
    fx_close(&F);
    return 0;
}

static unsigned long long inline_count(void)
{
    return atomic_load(&F.dev->stats.inline_completions);
}

/* The counters of declined offers and of watches given back, in order:
 * not launched, shared, taken, given back. */
typedef struct offer_counts {
    unsigned long long not_out, shared, taken, missed;
} offer_counts;

static offer_counts offers(void)
{
    const mox__cuda_stats *st = &F.dev->stats;
    return (offer_counts){atomic_load(&st->inline_not_out), atomic_load(&st->inline_shared),
                          atomic_load(&st->inline_taken), atomic_load(&st->inline_missed)};
}

/* One dispatch that runs for about `ms` milliseconds (sets flags[slot]). */
static void spin_sub(fx_sub *s, uint32_t slot, uint32_t ms)
{
    fx_spin_sub(s, &F, flags, slot, ms * 2000000u);
}

static bool never(void *ctx)
{
    (void)ctx;
    return false;
}

/* Stops after `*left` calls. */
static bool after_calls(void *ctx)
{
    int *left = ctx;
    return --*left <= 0;
}

static bool watch(fx_sub *s, uint64_t for_ns, bool (*stop)(void *), void *ctx)
{
    mox__inline_wait w = {fx_now_ns() + for_ns, stop, ctx, NULL, false, false};
    return F.backend->vt->complete_inline(F.backend, &s->pub, &w);
}

static void a_watched_launch_completes_on_the_waiting_thread(void **state)
{
    (void)state;
    unsigned long long before = inline_count();
    fx_sub s;
    spin_sub(&s, 0, 100);
    fx_submit(&F, &s);
    /* An idle stream launches at once: the launch is this thread's to watch. */
    assert_true(watch(&s, 10000000000ull, never, NULL));
    /* Completed from inside the call, on this thread. */
    assert_true(s.done);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_OK);
    assert_int_equal(inline_count(), before + 1);
    float got;
    fx_get(&F, &got, flags, sizeof got);
    assert_true(got == 1.0f);
}

/* Right after a waiting thread completed a launch, new launches do not
 * signal the completion thread (it looks for them on its own): one that
 * nobody watches still completes. */
static void an_unwatched_launch_after_an_inline_completion_completes(void **state)
{
    (void)state;
    int inline_rounds = 0;
    for (int round = 0; round < 20; round++) {
        fx_sub a, b;
        spin_sub(&a, 5, 5);
        fx_submit(&F, &a);
        /* The watch misses only when this thread was off the CPU for the
         * whole kernel (a loaded machine): the completion thread has
         * finished it then. That round tests nothing new, but must not
         * fail. */
        if (watch(&a, 10000000000ull, never, NULL))
            inline_rounds++;
        else
            fx_wait(&a);
        assert_int_equal(a.status, MOX_OK);
        spin_sub(&b, 6, 1);
        fx_submit(&F, &b);
        fx_wait(&b);
        assert_int_equal(b.status, MOX_OK);
    }
    assert_true(inline_rounds > 0);
}

static void a_watch_given_back_is_completed_by_the_backend(void **state)
{
    (void)state;
    unsigned long long before = inline_count();
    fx_sub s;
    spin_sub(&s, 1, 200);
    fx_submit(&F, &s);
    int left = 50;
    offer_counts o = offers();
    assert_false(watch(&s, 10000000000ull, after_calls, &left)); /* stop said so */
    assert_false(s.done);
    assert_int_equal(offers().missed, o.missed + 1); /* counted as given back */
    assert_int_equal(offers().not_out, o.not_out);
    fx_wait(&s); /* the completion thread takes it back: no hang */
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_OK);
    assert_int_equal(inline_count(), before);
}

static void a_watch_whose_time_is_up_gives_the_launch_back(void **state)
{
    (void)state;
    unsigned long long before = inline_count();
    fx_sub s;
    spin_sub(&s, 2, 200);
    fx_submit(&F, &s);
    uint64_t t0 = fx_now_ns();
    assert_false(watch(&s, 20000000ull, never, NULL)); /* 20 ms of a 200 ms kernel */
    assert_true(fx_now_ns() - t0 >= 20000000ull);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(inline_count(), before);
}

/* Where the core lets it (block_after), a watch whose time is up blocks
 * in the driver until the launch is done and completes it itself. */
static void a_watch_past_its_time_may_block_until_done(void **state)
{
    (void)state;
    unsigned long long before = inline_count();
    unsigned long long blocks = atomic_load(&F.dev->stats.inline_blocks);
    fx_sub s;
    spin_sub(&s, 8, 60);
    fx_submit(&F, &s);
    mox__inline_wait w = {fx_now_ns() + 5000000ull, never, NULL, NULL, false, true}; /* 5 of 60 ms */
    assert_true(F.backend->vt->complete_inline(F.backend, &s.pub, &w));
    assert_true(s.done);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_OK);
    assert_int_equal(inline_count(), before + 1);
    assert_int_equal(atomic_load(&F.dev->stats.inline_blocks), blocks + 1);
    assert_int_equal(atomic_load(&F.dev->watchers), 0); /* not counted: it was no watcher */
}

static void a_held_or_shared_launch_is_refused_at_once(void **state)
{
    (void)state;
    unsigned long long before = inline_count();
    /* Held: executed but not launched - nothing to watch yet. */
    F.backend->vt->set_hold(F.backend, true);
    fx_sub a, b;
    spin_sub(&a, 3, 1);
    fx_submit(&F, &a);
    offer_counts o = offers();
    assert_false(watch(&a, 10000000000ull, never, NULL));
    assert_int_equal(offers().not_out, o.not_out + 1); /* counted by its reason */
    assert_int_equal(offers().shared, o.shared);
    /* A second submission behind it on the same stream: on release both
     * may go out as one launch, which calls two completions: never
     * completed on a waiting thread then. */
    spin_sub(&b, 4, 50);
    fx_after(&b, &a);
    fx_submit(&F, &b);
    F.backend->vt->set_hold(F.backend, false); /* both go out as one launch */
    o = offers();
    assert_false(watch(&a, 10000000000ull, never, NULL));
    assert_false(watch(&b, 10000000000ull, never, NULL));
    assert_int_equal(offers().shared, o.shared + 2);
    assert_int_equal(offers().missed, o.missed);
    fx_wait(&a);
    fx_wait(&b);
    assert_int_equal(a.status, MOX_OK);
    assert_int_equal(b.status, MOX_OK);
    assert_int_equal(inline_count(), before);
}

/* ---- with MOX_CUDA_SPIN_US=0: the completion thread sleeps on a
 * launch's event at once, unless a user thread watches the device ---- */

static int setup_no_spin(void **state)
{
    (void)state;
    setenv("MOX_CUDA_SPIN_US", "0", 1);
    fx_open(&F);
    flags = fx_alloc(&F, 64 * 4);
    return 0;
}

static int teardown_no_spin(void **state)
{
    int rc = teardown(state);
    unsetenv("MOX_CUDA_SPIN_US");
    return rc;
}

static unsigned long long event_sleeps(void)
{
    return atomic_load(&F.dev->stats.event_sleeps);
}

/* A launch nobody can watch on its own (here: nobody tries) completes
 * through the completion thread; while a waiting thread watches the
 * device it queries instead of sleeping on the launch's event. */
static void a_watching_thread_keeps_the_completion_thread_querying(void **state)
{
    (void)state;
    unsigned long long before = event_sleeps();
    F.backend->vt->watch(F.backend, true);
    fx_sub s;
    spin_sub(&s, 5, 100);
    fx_submit(&F, &s);
    fx_wait(&s);
    F.backend->vt->watch(F.backend, false);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(event_sleeps(), before);
    /* Nobody watching: the same launch is waited for by sleeping. */
    fx_sub t;
    spin_sub(&t, 6, 100);
    fx_submit(&F, &t);
    fx_wait(&t);
    assert_int_equal(t.status, MOX_OK);
    assert_true(event_sleeps() > before);
}

/* Watches count: with two begun and one ended, it stays awake. */
static void watches_pair_up(void **state)
{
    (void)state;
    F.backend->vt->watch(F.backend, true);
    F.backend->vt->watch(F.backend, true);
    F.backend->vt->watch(F.backend, false);
    unsigned long long before = event_sleeps();
    fx_sub s;
    spin_sub(&s, 7, 50);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(event_sleeps(), before);
    F.backend->vt->watch(F.backend, false);
    assert_int_equal(atomic_load(&F.dev->watchers), 0);
}

int main(void)
{
    const struct CMUnitTest no_spin[] = {
        cmocka_unit_test(a_watching_thread_keeps_the_completion_thread_querying),
        cmocka_unit_test(watches_pair_up),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_watched_launch_completes_on_the_waiting_thread),
        cmocka_unit_test(an_unwatched_launch_after_an_inline_completion_completes),
        cmocka_unit_test(a_watch_given_back_is_completed_by_the_backend),
        cmocka_unit_test(a_watch_whose_time_is_up_gives_the_launch_back),
        cmocka_unit_test(a_watch_past_its_time_may_block_until_done),
        cmocka_unit_test(a_held_or_shared_launch_is_refused_at_once),
    };
    int failed = cmocka_run_group_tests(tests, setup, teardown);
    return failed ? failed : cmocka_run_group_tests(no_spin, setup_no_spin, teardown_no_spin);
}
