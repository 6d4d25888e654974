/* tests/cuda/test_cuda_events.c - the kind of event a launch records
 * (MOX_CUDA_EVENTS, mox__cuda_event_kind): by default (auto) an instance
 * whose runs were measured shorter than the completion thread's spin
 * window records spin events (no interrupt per launch), every other launch
 * a blocking-sync one; nobody sleeps on a spin event, neither the
 * completion thread nor a waiting thread past its time, and such launches
 * still complete; `blocking` keeps every event blocking-sync; another word
 * is MOX_ERR_CONFIG. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

enum { ROUNDS = 48, RUN_MS = 20 };

static fx F;
static CUdeviceptr flags;

/* The settings stay set until the teardown (the device reads them when it
 * opens). */
static void open_with(const char *events, const char *spin_us)
{
    if (events)
        setenv("MOX_CUDA_EVENTS", events, 1);
    setenv("MOX_CUDA_SPIN_US", spin_us, 1);
    fx_open(&F);
    flags = fx_alloc(&F, 64 * 4);
}

/* A spin window of 100 ms: runs of a few milliseconds are short. */
static int setup_auto(void **state)
{
    (void)state;
    open_with(NULL, "100000");
    return 0;
}

static int setup_blocking(void **state)
{
    (void)state;
    open_with("blocking", "100000");
    return 0;
}

/* Every event a spin event, and a completion thread that would sleep on a
 * launch's event at once (no spin window). */
static int setup_spin_no_window(void **state)
{
    (void)state;
    open_with("spin", "0");
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

static unsigned long long spin_events(void) { return atomic_load(&F.dev->stats.spin_events); }

static bool never(void *ctx)
{
    (void)ctx;
    return false;
}

/* One RUN_MS launch of the same instance each call, watched by this thread
 * until it completes it (a measured run: launched onto an idle device). */
static void watched_run(void)
{
    fx_sub s;
    fx_spin_sub(&s, &F, flags, 0, RUN_MS * 2000000u);
    fx_submit(&F, &s);
    mox__inline_wait w = {fx_now_ns() + 10000000000ull, never, NULL, NULL, false, false};
    bool mine = F.backend->vt->complete_inline(F.backend, &s.pub, &w);
    if (!mine)
        fx_wait(&s);
    assert_true(s.done);
    assert_int_equal(s.status, MOX_OK);
}

static void short_measured_runs_record_spin_events(void **state)
{
    (void)state;
    unsigned long long before = spin_events();
    /* Two measured runs are needed before an estimate counts. */
    watched_run();
    watched_run();
    assert_int_equal(spin_events(), before);
    for (int i = 0; i < ROUNDS && spin_events() == before; i++)
        watched_run();
    assert_true(spin_events() > before);
}

static void blocking_keeps_every_event_blocking(void **state)
{
    (void)state;
    unsigned long long before = spin_events();
    for (int i = 0; i < ROUNDS; i++)
        watched_run();
    assert_int_equal(spin_events(), before);
}

static void nobody_sleeps_on_a_spin_event(void **state)
{
    (void)state;
    const mox__cuda_stats *st = &F.dev->stats;
    unsigned long long sleeps = atomic_load(&st->event_sleeps);
    unsigned long long blocks = atomic_load(&st->inline_blocks);
    unsigned long long before = spin_events();
    /* Nobody watches: with no spin window the completion thread would
     * sleep on a blocking event at once; on this one it waits by the clock. */
    fx_sub a;
    fx_spin_sub(&a, &F, flags, 1, 20 * 2000000u);
    fx_submit(&F, &a);
    fx_wait(&a);
    assert_int_equal(a.status, MOX_OK);
    /* A waiting thread past its time that may block gives it back instead. */
    fx_sub b;
    fx_spin_sub(&b, &F, flags, 2, 20 * 2000000u);
    fx_submit(&F, &b);
    mox__inline_wait w = {fx_now_ns() + 1000000ull, never, NULL, NULL, false, true};
    if (!F.backend->vt->complete_inline(F.backend, &b.pub, &w))
        fx_wait(&b);
    assert_true(b.done);
    assert_int_equal(b.status, MOX_OK);
    assert_int_equal(spin_events(), before + 2);
    assert_int_equal(atomic_load(&st->event_sleeps), sleeps);
    assert_int_equal(atomic_load(&st->inline_blocks), blocks);
    float got[3];
    fx_get(&F, got, flags, sizeof got);
    assert_true(got[1] == 1.0f && got[2] == 1.0f);
}

/* The rule itself: spin only for an estimate of two measured runs below the
 * completion thread's spin window (100 ms here), or where the setting says. */
static void the_kind_follows_the_estimate(void **state)
{
    (void)state;
    mox__cuda_inst inst;
    memset(&inst, 0, sizeof inst);
    assert_false(mox__cuda_event_kind(F.dev, NULL));
    assert_false(mox__cuda_event_kind(F.dev, &inst)); /* nothing measured */
    inst.run_ns = 5000000;
    inst.run_obs = 1;
    assert_false(mox__cuda_event_kind(F.dev, &inst)); /* one run is no estimate */
    inst.run_obs = 2;
    assert_true(mox__cuda_event_kind(F.dev, &inst));
    inst.run_ns = 100000000;
    assert_false(mox__cuda_event_kind(F.dev, &inst)); /* not shorter than the window */
    F.dev->events = MOX__CUDA_EVENTS_SPIN;
    assert_true(mox__cuda_event_kind(F.dev, NULL));
    F.dev->events = MOX__CUDA_EVENTS_BLOCKING;
    inst.run_ns = 1000;
    assert_false(mox__cuda_event_kind(F.dev, &inst));
    F.dev->events = MOX__CUDA_EVENTS_AUTO;
}

static void a_bad_value_is_a_config_error(void **state)
{
    (void)state;
    setenv("MOX_CUDA_EVENTS", "fast", 1);
    mox__backend_config cfg = {.context_id = 1, .ordinal = -1};
    mox__backend *be = NULL;
    mox__backend_info info;
    mox_error *err = mox__cuda_backend_open(&cfg, &be, &info);
    unsetenv("MOX_CUDA_EVENTS");
    assert_non_null(err);
    if (mox_error_code(err) == MOX_ERR_DEVICE_UNAVAILABLE) {
        mox_error_release(err);
        exit(FX_SKIP);
    }
    assert_int_equal(mox_error_code(err), MOX_ERR_CONFIG);
    assert_non_null(
        strstr(mox_error_message(err), "MOX_CUDA_EVENTS must be auto, blocking or spin (got 'fast')"));
    mox_error_release(err);
    assert_null(be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_bad_value_is_a_config_error),
        cmocka_unit_test_setup_teardown(the_kind_follows_the_estimate, setup_auto, teardown),
        cmocka_unit_test_setup_teardown(short_measured_runs_record_spin_events, setup_auto, teardown),
        cmocka_unit_test_setup_teardown(blocking_keeps_every_event_blocking, setup_blocking, teardown),
        cmocka_unit_test_setup_teardown(nobody_sleeps_on_a_spin_event, setup_spin_no_window, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
