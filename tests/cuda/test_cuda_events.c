/* tests/cuda/test_cuda_events.c - the kind of event a launch records
 * (MOX_CUDA_EVENTS): by default a spin event (no interrupt per launch);
 * a thread that sleeps on such a launch - the completion thread past its
 * spin window, a waiting thread past its time - records a blocking-sync
 * event behind it and sleeps on that, when the launch is the newest of its
 * stream, and completes it; a launch with others behind it is completed
 * without that sleep; while the completion thread sleeps on launches
 * nobody watches, new launches record blocking-sync events, and spin ones
 * again once nothing is in flight; `blocking` makes every launch's event blocking-sync
 * and records none to sleep on; another word is MOX_ERR_CONFIG. Exits 77
 * without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cuda_fixture.h"

enum { LONG_MS = 20 };

static fx F;
static CUdeviceptr flags;

/* The settings stay set until the teardown (the device reads them when it
 * opens). With no spin window the completion thread sleeps on a launch
 * nobody watches at once. */
static void open_with(const char *events)
{
    if (events)
        setenv("MOX_CUDA_EVENTS", events, 1);
    setenv("MOX_CUDA_SPIN_US", "0", 1);
    fx_open(&F);
    flags = fx_alloc(&F, 64 * 4);
}

static int setup_default(void **state)
{
    (void)state;
    open_with(NULL);
    return 0;
}

static int setup_blocking(void **state)
{
    (void)state;
    open_with("blocking");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, flags);
    fx_close(&F);
    unsetenv("MOX_CUDA_EVENTS");
    unsetenv("MOX_CUDA_SPIN_US");
    return 0;
}

typedef struct counts {
    unsigned long long spin, wake, sleeps, blocks;
} counts;

static counts now(void)
{
    const mox__cuda_stats *st = &F.dev->stats;
    return (counts){atomic_load(&st->spin_events), atomic_load(&st->wake_events),
                    atomic_load(&st->event_sleeps), atomic_load(&st->inline_blocks)};
}

static bool never(void *ctx)
{
    (void)ctx;
    return false;
}

/* Waits (10 s at most) until the completion thread's sleepiness reads `want`. */
static void await_sleepy(bool want)
{
    uint64_t until = fx_now_ns() + 10000000000ull;
    struct timespec pause = {0, 100000}; /* 0.1 ms: the completion thread needs a core */
    while (atomic_load(&F.dev->sleepy) != want && fx_now_ns() < until)
        nanosleep(&pause, NULL);
    assert_true(atomic_load(&F.dev->sleepy) == want);
}

static void long_sub(fx_sub *s, uint32_t slot) { fx_spin_sub(s, &F, flags, slot, LONG_MS * 2000000u); }

/* Nobody watches it: the completion thread completes it, sleeping. */
static void unwatched(uint32_t slot)
{
    fx_sub s;
    long_sub(&s, slot);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
}

/* Watched for 1 ms, then blocking where the core lets it (block_after). */
static void watched_then_blocked(uint32_t slot)
{
    fx_sub s;
    long_sub(&s, slot);
    fx_submit(&F, &s);
    mox__inline_wait w = {fx_now_ns() + 1000000ull, never, NULL, NULL, false, true};
    assert_true(F.backend->vt->complete_inline(F.backend, &s.pub, &w));
    assert_true(s.done);
    assert_int_equal(s.status, MOX_OK);
}

static void flags_set(uint32_t first, uint32_t n)
{
    float got[8];
    fx_get(&F, got, flags, sizeof got);
    for (uint32_t i = first; i < first + n; i++)
        assert_true(got[i] == 1.0f);
}

static void a_sleeper_records_its_own_blocking_event(void **state)
{
    (void)state;
    counts c = now();
    unwatched(0);
    counts d = now();
    assert_int_equal(d.spin, c.spin + 1);     /* the launch's own event: spin */
    assert_int_equal(d.sleeps, c.sleeps + 1); /* the completion thread slept... */
    assert_int_equal(d.wake, c.wake + 1);     /* ...on an event it recorded */
    await_sleepy(false); /* nothing in flight: spin events again */
    watched_then_blocked(1);
    counts e = now();
    assert_int_equal(e.spin, d.spin + 1);
    assert_int_equal(e.blocks, d.blocks + 1); /* the waiter blocked, on its own thread */
    /* Before the waiter claimed it the completion thread may have begun to
     * sleep on it too, on an event of its own. */
    assert_true(e.wake >= d.wake + 1 && e.wake <= d.wake + 2);
    flags_set(0, 2);
}

/* Two launches on one stream, the second behind the first: the first is
 * not the newest, so nobody sleeps on an event recorded behind it (that
 * would wait for the second too); both complete. */
/* Launches a at `slot` and b behind it at slot + 1, nobody watching (b
 * once the completion thread is asleep, when `after_sleep`); both complete. */
static void chained_pair(uint32_t slot, bool after_sleep)
{
    fx_sub a, b;
    long_sub(&a, slot);
    fx_submit(&F, &a);
    if (after_sleep)
        await_sleepy(true); /* it sleeps on a */
    long_sub(&b, slot + 1);
    fx_after(&b, &a);
    fx_submit(&F, &b);
    fx_wait(&a);
    fx_wait(&b);
    assert_int_equal(a.status, MOX_OK);
    assert_int_equal(b.status, MOX_OK);
    flags_set(slot, 2);
}

static void a_launch_with_another_behind_it_completes(void **state)
{
    (void)state;
    chained_pair(2, false);
}

/* Once the completion thread sleeps on launches nobody watches, launches
 * made meanwhile record blocking-sync events (it sleeps on each, even with
 * others queued behind); with nothing in flight spin events come back. */
static void a_sleeping_completion_thread_gets_blocking_events(void **state)
{
    (void)state;
    counts c = now();
    chained_pair(6, true);
    assert_int_equal(now().spin, c.spin + 1); /* the first only */
    await_sleepy(false);
    watched_then_blocked(0);
    assert_int_equal(now().spin, c.spin + 2);
}

static void blocking_records_none_to_sleep_on(void **state)
{
    (void)state;
    counts c = now();
    unwatched(4);
    watched_then_blocked(5);
    counts d = now();
    assert_int_equal(d.spin, c.spin);
    assert_int_equal(d.wake, c.wake);
    /* On the launch's own event (the second launch, too, may have been
     * slept on before the waiter claimed it). */
    assert_true(d.sleeps >= c.sleeps + 1 && d.sleeps <= c.sleeps + 2);
    assert_int_equal(d.blocks, c.blocks + 1);
    flags_set(4, 2);
}

static void a_bad_value_is_a_config_error(void **state)
{
    (void)state;
    mox_error *err = fx_open_error("MOX_CUDA_EVENTS", "fast");
    assert_non_null(err);
    assert_int_equal(mox_error_code(err), MOX_ERR_CONFIG);
    assert_non_null(strstr(mox_error_message(err), "MOX_CUDA_EVENTS must be spin or blocking (got 'fast')"));
    mox_error_release(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_bad_value_is_a_config_error),
        cmocka_unit_test_setup_teardown(a_sleeper_records_its_own_blocking_event, setup_default, teardown),
        cmocka_unit_test_setup_teardown(a_launch_with_another_behind_it_completes, setup_default, teardown),
        cmocka_unit_test_setup_teardown(a_sleeping_completion_thread_gets_blocking_events, setup_default,
                                        teardown),
        cmocka_unit_test_setup_teardown(blocking_records_none_to_sleep_on, setup_blocking, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
