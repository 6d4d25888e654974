/* tests/cuda/test_cuda_core_wait.c - mox_op_wait through the core on the
 * CUDA backend: while it spins for a batch it tells the backend (HAL
 * watch), so the completion thread, which would otherwise sleep on a
 * launch's event at once (MOX_CUDA_SPIN_US=0), stays awake and hands the
 * batch over. The batch is held back until the waiter is seen watching, so
 * nothing depends on timing. A long batch waited for again and again is
 * slept through (cuda_watch.c); with no spin the waiter blocks on its
 * launch's event itself. Needs the conformance module "conf"; run on
 * the simulated driver (cuda.sim.core_wait) and on a GPU (cuda.core_wait);
 * exits 77 when the device is not a CUDA one. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf.h"
#include "core/device.h"
#include "core/testing.h"
#include "cuda/cuda_internal.h"
#include "support.h"

enum { N = 4096, SPINS = 1000000 }; /* the simulated slow_copy naps 20 ms */

typedef struct waiter {
    mox_op *op;
    mox_status status;
} waiter;

static void *wait_main(void *p)
{
    waiter *w = p;
    w->status = mox_op_wait(w->op);
    return NULL;
}

static mox__cuda_dev *cuda_of(mox_device *dev)
{
    return (mox__cuda_dev *)dev->backend;
}

static void no_wake(void *ctx) { (void)ctx; }

/* `out` holds the ramp 1, 2, 3... the slow copies carried over. */
static void expect_copied_ramp(mox_buffer *out)
{
    float *got = conf_read(out);
    assert_non_null(got);
    for (uint32_t i = 0; i < N; i++)
        assert_true(got[i] == 1.0f + (float)i);
    free(got);
}

static void a_waiting_thread_keeps_the_completion_thread_awake(void **state)
{
    mox_device *dev = *state;
    mox__cuda_dev *cd = cuda_of(dev);
    /* The waiter watches for as long as it spins: longer than this test
     * looks for it, so a preempted thread on a loaded machine cannot spin
     * its window away unseen (MOX_WAIT_SPIN_US is 5 s in the test's
     * environment). */
    uint64_t spin = dev->wait_spin_ns;
    dev->wait_spin_ns = 120ull * 1000000000ull;
    unsigned long long sleeps = atomic_load(&cd->stats.event_sleeps);
    mox_buffer *a = conf_ramp(dev, N, 1.0f, 1.0f), *b = conf_zeros(dev, N), *c = conf_zeros(dev, N);
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    assert_int_equal(mox__testing_hold(dev, true), MOX_OK);
    mox_op *first = conf_slow_copy(dev, conf_cfg(N), a, b, N, SPINS);
    waiter w = {conf_slow_copy(dev, conf_cfg(N), b, c, N, SPINS), MOX_OK};
    mox_waker none = {no_wake, NULL};
    assert_int_equal(mox_op_poll(first, none), MOX_PENDING);
    assert_int_equal(mox_op_poll(w.op, none), MOX_PENDING);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wait_main, &w), 0);
    /* The waiter spins for a batch that cannot start yet: it watches. */
    int waited_ms = 0;
    while (atomic_load(&cd->watchers) == 0 && waited_ms < 30000) {
        conf_nap(1);
        waited_ms++;
    }
    bool watched = atomic_load(&cd->watchers) > 0;
    /* Released before any assertion: a failed one would leave the batch
     * held and the next case waiting for it. */
    assert_int_equal(mox__testing_hold(dev, false), MOX_OK);
    assert_int_equal(pthread_join(t, NULL), 0);
    dev->wait_spin_ns = spin;
    assert_true(watched);
    assert_int_equal(w.status, MOX_OK);
    /* Done watching; the completion thread never slept on an event. */
    assert_int_equal(atomic_load(&cd->watchers), 0);
    assert_int_equal(atomic_load(&cd->stats.event_sleeps), sleeps);
    assert_int_equal(mox_op_wait(first), MOX_OK);
    expect_copied_ramp(c);
    mox_op_drop(first);
    mox_op_drop(w.op);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_buffer_release(c);
}

/* The same long batch waited for again and again: once two runs were
 * measured, mox_op_wait sleeps through most of the next (the backend's
 * nap through the core's parker) and still completes it itself. */
static void a_repeated_long_wait_sleeps_through_most_of_it(void **state)
{
    /* About 8 ms on a GPU; 80 ms simulated. A run is measured only when the
     * query that saw it end came soon after one that saw it running: on a
     * loaded machine (the ASan stage beside other jobs) a preempted watcher
     * discards runs, so the loop allows many before it must have napped. */
    enum { LONG_SPINS = 4000000, ROUNDS = 150 };
    mox_device *dev = *state;
    mox__cuda_dev *cd = cuda_of(dev);
    unsigned long long naps = atomic_load(&cd->stats.inline_naps);
    unsigned long long inline_before = atomic_load(&cd->stats.inline_completions);
    mox_buffer *a = conf_ramp(dev, N, 1.0f, 1.0f), *b = conf_zeros(dev, N);
    int rounds = 0;
    while (rounds < ROUNDS && atomic_load(&cd->stats.inline_naps) == naps) {
        mox_op *op = conf_slow_copy(dev, conf_cfg(N), a, b, N, LONG_SPINS);
        assert_int_equal(mox_op_wait(op), MOX_OK);
        mox_op_drop(op);
        rounds++;
    }
    assert_true(atomic_load(&cd->stats.inline_naps) > naps);
    assert_true(rounds >= 3); /* two measured runs first */
    /* The run it slept through was completed by the waiting thread. */
    assert_true(atomic_load(&cd->stats.inline_completions) >= inline_before + (unsigned)rounds - 1);
    expect_copied_ramp(b);
    mox_buffer_release(a);
    mox_buffer_release(b);
}

/* With no spin (MOX_WAIT_SPIN_US=0) mox_op_wait blocks on the launch's
 * event itself and completes the batch on its own thread: one wake-up.
 * A waiter preempted between submitting the batch and claiming its launch
 * may find it done, or finished by the completion thread, asleep on the
 * same event (seen with 16 test processes on 2 cores): then the round is
 * repeated.
 * Every round that blocked completed the batch on the waiter's thread. */
static void with_no_spin_the_waiter_blocks_on_its_launch(void **state)
{
    enum { ROUNDS = 40 };
    mox_device *dev = *state;
    mox__cuda_dev *cd = cuda_of(dev);
    uint64_t spin = dev->wait_spin_ns;
    dev->wait_spin_ns = 0;
    mox_buffer *a = conf_ramp(dev, N, 1.0f, 1.0f), *b = conf_zeros(dev, N);
    int blocked = 0;
    for (int round = 0; round < ROUNDS && !blocked; round++) {
        unsigned long long blocks = atomic_load(&cd->stats.inline_blocks);
        unsigned long long inline_before = atomic_load(&cd->stats.inline_completions);
        mox_op *op = conf_slow_copy(dev, conf_cfg(N), a, b, N, SPINS);
        assert_int_equal(mox_op_wait(op), MOX_OK);
        mox_op_drop(op);
        unsigned long long now_blocks = atomic_load(&cd->stats.inline_blocks);
        assert_true(now_blocks <= blocks + 1);
        if (now_blocks == blocks + 1) {
            assert_int_equal(atomic_load(&cd->stats.inline_completions), inline_before + 1);
            blocked = 1;
        }
    }
    dev->wait_spin_ns = spin;
    assert_true(blocked);
    expect_copied_ramp(b);
    mox_buffer_release(a);
    mox_buffer_release(b);
}

int main(void)
{
    const char *backend = getenv("MOX_BACKEND");
    if (!backend || strcmp(backend, "cuda") != 0) {
        printf("skipped: MOX_BACKEND is not cuda\n");
        return 77;
    }
    mox_device *dev = NULL;
    mox_status st = mox_device_open(&dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    if (st != MOX_OK) {
        fprintf(stderr, "mox_device_open: %s\n", mox_status_name(st));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(a_waiting_thread_keeps_the_completion_thread_awake, dev),
        cmocka_unit_test_prestate(a_repeated_long_wait_sleeps_through_most_of_it, dev),
        cmocka_unit_test_prestate(with_no_spin_the_waiter_blocks_on_its_launch, dev),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    mox_device_release(dev);
    return failed;
}
