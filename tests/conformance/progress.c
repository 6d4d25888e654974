/* progress.c - no waiter ever hangs under command-capacity pressure (A2,
 * A3, A9's promise). One thread opens a device with a small command
 * capacity, builds many independent launches, polls each once and then
 * drives them the way an executor does: with one waker per op (poll the op
 * whose waker fired), one shared waker (poll every pending op after each
 * call), or no waker at all, driven by the device's event fd in epoll. A
 * watchdog fails the test when no op resolves for 5 s - a lost completion
 * - instead of hanging. Each run prints its waker calls per resolved op:
 * a capacity-blocked op is woken once, when its batch completes, not at
 * every freed slot. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/testing.h"
#include "support.h"

enum { STALL_MS = 5000, VALUES = 16 };

typedef enum drive_mode { DRIVE_PER_OP, DRIVE_SHARED, DRIVE_EVENT_FD } drive_mode;
static const char *const mode_names[] = {"one waker per op", "one shared waker",
                                         "NULL waker + event fd (epoll)"};

/* What the wakers report to the driving thread. */
typedef struct driver {
    pthread_mutex_t m;
    pthread_cond_t c;
    uint64_t calls;       /* every waker call */
    uint32_t *woken;      /* per-op mode: indices whose waker fired, not yet polled */
    bool *is_woken;
    uint32_t nwoken;
} driver;

typedef struct op_waker {
    driver *d;
    uint32_t index;
} op_waker;

static void wake_one(void *p)
{
    op_waker *w = p;
    driver *d = w->d;
    pthread_mutex_lock(&d->m);
    d->calls++;
    if (!d->is_woken[w->index]) {
        d->is_woken[w->index] = true;
        d->woken[d->nwoken++] = w->index;
    }
    pthread_cond_signal(&d->c);
    pthread_mutex_unlock(&d->m);
}

static void wake_shared(void *p)
{
    driver *d = p;
    pthread_mutex_lock(&d->m);
    d->calls++;
    pthread_cond_signal(&d->c);
    pthread_mutex_unlock(&d->m);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One run's ops and how they are driven. */
typedef struct run {
    mox_device *dev;
    drive_mode mode;
    uint32_t count, ready;
    mox_op **ops;
    mox_buffer **outs;
    op_waker *wakers;
    driver d;
    uint64_t seen_calls; /* d.calls when the last step looked */
    int epfd, evfd;
} run;

static mox_waker waker_of(run *r, uint32_t i)
{
    switch (r->mode) {
    case DRIVE_PER_OP:
        return (mox_waker){wake_one, &r->wakers[i]};
    case DRIVE_SHARED:
        return (mox_waker){wake_shared, &r->d};
    case DRIVE_EVENT_FD:
        break;
    }
    return (mox_waker){NULL, NULL};
}

/* Polls op i unless it is already READY; counts it when it becomes so. */
static void poll_one(run *r, uint32_t i)
{
    if (!r->ops[i] || mox_op_result(r->ops[i]))
        return;
    if (mox_op_poll(r->ops[i], waker_of(r, i)) == MOX_READY) {
        assert_int_equal(mox_result_status(mox_op_result(r->ops[i])), MOX_OK);
        r->ready++;
    }
}

/* What every thread of the process is doing (for the stall report). */
static void print_threads(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd,
             "for t in /proc/%d/task/*; do echo \"$t $(cat $t/comm) $(cat $t/wchan) "
             "$(cut -d' ' -f1,2,9 $t/syscall)\"; done >&2",
             (int)getpid());
    if (system(cmd) != 0)
        fprintf(stderr, "(could not list the threads)\n");
}

static void stall(run *r)
{
    print_threads();

    fail_msg("stalled (%s): %u of %u ops READY, %llu batches submitted, %u in flight, "
             "%llu waker calls, nothing resolved for %d ms",
             mode_names[r->mode], r->ready, r->count,
             (unsigned long long)mox_device_submission_count(r->dev),
             mox__testing_in_flight(r->dev), (unsigned long long)r->d.calls, STALL_MS);
}

/* Blocks until a waker fired (or the event fd is readable), at most until
 * `deadline`; then polls what the mode says to poll. */
static void drive_step(run *r, uint64_t deadline)
{
    if (r->mode == DRIVE_EVENT_FD) {
        struct epoll_event ev;
        int64_t left = (int64_t)deadline - (int64_t)now_ms();
        int n = epoll_wait(r->epfd, &ev, 1, left > 0 ? (int)left : 0);
        assert_true(n >= 0 || errno == EINTR);
        uint64_t v;
        if (n > 0 && read(r->evfd, &v, sizeof v) == (ssize_t)sizeof v)
            r->d.calls++; /* counted as wake-ups of the loop */
        for (uint32_t i = 0; i < r->count; i++)
            poll_one(r, i);
        return;
    }
    pthread_mutex_lock(&r->d.m);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t left = deadline > now_ms() ? deadline - now_ms() : 0;
    ts.tv_sec += (time_t)(left / 1000u);
    ts.tv_nsec += (long)(left % 1000u) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    /* Calls that came while the last step polled count too: wait only when
     * there is nothing new since then. */
    int rc = 0;
    while ((r->mode == DRIVE_PER_OP ? r->d.nwoken == 0 : r->d.calls == r->seen_calls) &&
           rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&r->d.c, &r->d.m, &ts);
    r->seen_calls = r->d.calls;
    uint32_t n = r->d.nwoken;
    uint32_t *batch = n ? malloc(n * sizeof *batch) : NULL;
    for (uint32_t k = 0; k < n; k++) {
        batch[k] = r->d.woken[k];
        r->d.is_woken[batch[k]] = false;
    }
    r->d.nwoken = 0;
    pthread_mutex_unlock(&r->d.m);
    if (r->mode == DRIVE_PER_OP) {
        for (uint32_t k = 0; k < n; k++)
            poll_one(r, batch[k]);
    } else {
        for (uint32_t i = 0; i < r->count; i++)
            poll_one(r, i);
    }
    free(batch);
}

/* Drives every op of the run to READY, failing on a 5 s stall. */
static void drive_all(run *r)
{
    for (uint32_t i = 0; i < r->count; i++)
        poll_one(r, i);
    uint64_t last_progress = now_ms();
    uint32_t last_ready = r->ready;
    while (r->ready < r->count) {
        drive_step(r, last_progress + STALL_MS);
        if (r->ready != last_ready) {
            last_ready = r->ready;
            last_progress = now_ms();
        } else if (now_ms() - last_progress >= STALL_MS) {
            stall(r);
        }
    }
}

/* Runs live on the heap: wakers point into them, and a failing assertion
 * leaves the function without stopping the runtime's threads. */
static run *run_new(drive_mode mode, uint32_t capacity, uint32_t count)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = capacity, .cpu_threads = 0};
    r->dev = conf_open_with(&o);
    r->mode = mode;
    r->count = count;
    r->ops = calloc(count, sizeof *r->ops);
    r->outs = calloc(count, sizeof *r->outs);
    r->wakers = calloc(count, sizeof *r->wakers);
    r->d.woken = calloc(count, sizeof *r->d.woken);
    r->d.is_woken = calloc(count, sizeof *r->d.is_woken);
    assert_true(r->ops && r->outs && r->wakers && r->d.woken && r->d.is_woken);
    pthread_mutex_init(&r->d.m, NULL);
    pthread_cond_init(&r->d.c, NULL);
    for (uint32_t i = 0; i < count; i++)
        r->wakers[i] = (op_waker){&r->d, i};
    r->epfd = r->evfd = -1;
    if (mode == DRIVE_EVENT_FD) {
        r->evfd = mox_device_event_fd(r->dev);
        assert_true(r->evfd >= 0);
        r->epfd = epoll_create1(EPOLL_CLOEXEC);
        assert_true(r->epfd >= 0);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = r->evfd};
        assert_int_equal(epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->evfd, &ev), 0);
    }
    return r;
}

static void run_finish(run *r)
{
    for (uint32_t i = 0; i < r->count; i++) {
        mox_op_drop(r->ops[i]);
        mox_buffer_release(r->outs[i]);
    }
    if (r->epfd >= 0)
        close(r->epfd);
    pthread_cond_destroy(&r->d.c);
    pthread_mutex_destroy(&r->d.m);
    free(r->ops);
    free(r->outs);
    free(r->wakers);
    free(r->d.woken);
    free(r->d.is_woken);
    mox_device_release(r->dev);
    free(r);
}

/* `count` independent launches, op i writing value i into its own buffer. */
static void independent_launches(drive_mode mode, uint32_t capacity, uint32_t count)
{
    run *r = run_new(mode, capacity, count);
    for (uint32_t i = 0; i < count; i++) {
        r->outs[i] = conf_zeros(r->dev, VALUES);
        r->ops[i] = conf_fill(r->dev, conf_cfg(VALUES), r->outs[i], (float)i, VALUES);
    }
    drive_all(r);
    for (uint32_t i = 0; i < count; i++)
        assert_true(conf_read1(r->outs[i], VALUES - 1) == (float)i);
    printf("capacity %2u, %4u ops, %-30s: %.2f wake-ups per resolved op\n", capacity, count,
           mode_names[mode], (double)r->d.calls / count);
    run_finish(r);
}

static void capacity_pressure(void **state)
{
    (void)state;
    static const uint32_t capacities[] = {1, 2, 4, 64};
    static const uint32_t counts[] = {100, 1000};
    for (int m = DRIVE_PER_OP; m <= DRIVE_EVENT_FD; m++)
        for (size_t c = 0; c < sizeof capacities / sizeof *capacities; c++)
            for (size_t n = 0; n < sizeof counts / sizeof *counts; n++)
                independent_launches((drive_mode)m, capacities[c], counts[n]);
}

static mox_status readback_next(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    *next = mox_buffer_readback(mox_result_buffer(in, 0));
    return MOX_OK;
}

/* 256 launch -> readback jobs (then-chains) over capacity 64, driven by an
 * epoll loop on the event fd: every job ends READY with its own bytes. */
static void event_fd_readback_jobs(void **state)
{
    (void)state;
    enum { JOBS = 256 };
    run *r = run_new(DRIVE_EVENT_FD, 64, JOBS);
    for (uint32_t i = 0; i < JOBS; i++) {
        r->outs[i] = conf_zeros(r->dev, VALUES);
        mox_op *fill = conf_fill(r->dev, conf_cfg(VALUES), r->outs[i], (float)i + 0.5f, VALUES);
        assert_int_equal(mox_op_then(fill, readback_next, NULL, &r->ops[i]), MOX_OK);
    }
    drive_all(r);
    for (uint32_t i = 0; i < JOBS; i++) {
        size_t size = 0;
        const float *v = mox_result_bytes(mox_op_result(r->ops[i]), &size);
        assert_int_equal(size, VALUES * sizeof(float));
        assert_true(v[0] == (float)i + 0.5f && v[VALUES - 1] == (float)i + 0.5f);
    }
    printf("256 launch->readback jobs, capacity 64, epoll: %.2f event-fd wake-ups per job\n",
           (double)r->d.calls / JOBS);
    run_finish(r);
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
}

/* While nothing can progress (the one command slot is held by a batch that
 * does not finish), capacity-blocked ops are not woken at all, and the
 * runtime does not spin. Then everything completes with one wake each. */
static void no_waker_storm_while_blocked(void **state)
{
    (void)state;
    enum { OPS = 100, IDLE_MS = 300 };
    run *r = run_new(DRIVE_PER_OP, 1, OPS);
    for (uint32_t i = 0; i < OPS; i++) {
        r->outs[i] = conf_zeros(r->dev, VALUES);
        r->ops[i] = conf_fill(r->dev, conf_cfg(VALUES), r->outs[i], (float)i, VALUES);
    }
    assert_int_equal(mox_module_prepare(r->dev, &conf_module), MOX_OK);
    assert_int_equal(mox__testing_hold(r->dev, true), MOX_OK);
    for (uint32_t i = 0; i < OPS; i++)
        assert_int_equal(mox_op_poll(r->ops[i], waker_of(r, i)), MOX_PENDING);
    assert_int_equal(mox__testing_in_flight(r->dev), 1);
    double cpu0 = cpu_seconds();
    conf_nap(IDLE_MS);
    double cpu = cpu_seconds() - cpu0;
    pthread_mutex_lock(&r->d.m);
    uint64_t calls_while_blocked = r->d.calls;
    pthread_mutex_unlock(&r->d.m);
    assert_int_equal(calls_while_blocked, 0);
    printf("100 capacity-blocked ops, device held: %llu waker calls, %.2f%% of a core in %d ms\n",
           (unsigned long long)calls_while_blocked, 100.0 * cpu / (IDLE_MS / 1000.0), IDLE_MS);
    assert_int_equal(mox__testing_hold(r->dev, false), MOX_OK);
    drive_all(r);
    /* The total stays at about one call per op: no call per freed slot. (An
     * op that the driving loop polls READY before its completion calls the
     * waker may see no call at all: the poll already told it.) */
    if (r->d.calls < 1 || r->d.calls > 2 * OPS)
        fail_msg("%llu waker calls for %u ops", (unsigned long long)r->d.calls, OPS);
    printf("then %llu waker calls for %u ops\n", (unsigned long long)r->d.calls, OPS);
    run_finish(r);
}

/* A queued op that is dropped submits nothing and does not block the queue:
 * the ones behind it still run. */
static void dropping_queued_ops(void **state)
{
    (void)state;
    enum { OPS = 40 };
    run *r = run_new(DRIVE_SHARED, 1, OPS);
    for (uint32_t i = 0; i < OPS; i++) {
        r->outs[i] = conf_zeros(r->dev, VALUES);
        r->ops[i] = conf_fill(r->dev, conf_cfg(VALUES), r->outs[i], 7.0f, VALUES);
    }
    assert_int_equal(mox_module_prepare(r->dev, &conf_module), MOX_OK);
    assert_int_equal(mox__testing_hold(r->dev, true), MOX_OK);
    for (uint32_t i = 0; i < OPS; i++)
        assert_int_equal(mox_op_poll(r->ops[i], waker_of(r, i)), MOX_PENDING);
    uint64_t submitted = mox_device_submission_count(r->dev);
    for (uint32_t i = 1; i < OPS; i += 2) {
        mox_op_drop(r->ops[i]);
        r->ops[i] = NULL;
    }
    assert_int_equal(mox__testing_hold(r->dev, false), MOX_OK);
    r->ready = OPS / 2; /* the dropped ones */
    drive_all(r);
    assert_int_equal(mox_device_submission_count(r->dev) - submitted, OPS / 2 - 1);
    for (uint32_t i = 0; i < OPS; i++)
        assert_true(conf_read1(r->outs[i], 0) == (i % 2 ? 0.0f : 7.0f));
    run_finish(r);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capacity_pressure),
        cmocka_unit_test(event_fd_readback_jobs),
        cmocka_unit_test(no_waker_storm_while_blocked),
        cmocka_unit_test(dropping_queued_ops),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
