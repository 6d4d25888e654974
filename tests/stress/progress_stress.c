/* progress_stress.c - randomized progress test of the async core: several
 * threads share a few devices with command capacities from 1 to 64 and run
 * random jobs (stress_jobs.c: launches, sequences, then-chains, maps,
 * shares, failing kernels, drops before and after submission), driving each
 * round of jobs by waiting, by polling with a waker, or by polling with no
 * waker from an epoll loop on the device's event fd. A watchdog fails the
 * run (exit 1, with the counters) if no job finishes for 5 s: a lost
 * completion. The run ends at --ops constructed ops or after --seconds,
 * whichever comes first, and prints the op count, the jobs and the waker
 * calls per job. Built as progress_stress_faults (STRESS_FAULTS, linked with
 * libmox_testing) it also injects allocation failures (stress_faults.h)
 * and, after them, checks that every kind of job works on every device.
 *
 * usage: progress_stress [--ops N] [--seconds S] [--threads T] [--seed X] */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "stress_faults.h"
#include "stress_jobs.h"

enum { WINDOW = 24, SLOTS = WINDOW, DEVICES = 4, STALL_MS = 5000, MAX_THREADS = 16 };
static const uint32_t capacities[DEVICES] = {1, 2, 8, 64};

typedef enum consumer { BY_WAIT, BY_WAKER, BY_EVENT_FD, CONSUMERS } consumer;

static stress_device devices[DEVICES];
static uint64_t op_target = 1000000, seconds_cap = 60, seed = 1;
static uint32_t nthreads = 4;
static _Atomic bool stop;
static _Atomic uint32_t finished_threads;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* A waker that counts and signals the driving thread. */
typedef struct flag {
    pthread_mutex_t m;
    pthread_cond_t c;
    uint64_t calls, seen;
} flag;

static void flag_wake(void *p)
{
    flag *f = p;
    atomic_fetch_add_explicit(&stress_count.wakes, 1, memory_order_relaxed);
    pthread_mutex_lock(&f->m);
    f->calls++;
    pthread_cond_signal(&f->c);
    pthread_mutex_unlock(&f->m);
}

/* Waits for a call since the last one seen (at most 100 ms: the watchdog,
 * not this wait, decides what a stall is). */
static void flag_wait(flag *f)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->m);
    int rc = 0;
    while (f->calls == f->seen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&f->c, &f->m, &ts);
    f->seen = f->calls;
    pthread_mutex_unlock(&f->m);
}

typedef struct worker {
    uint32_t index;
    uint64_t rng;
    mox_buffer *slots[DEVICES][SLOTS];
    stress_job jobs[WINDOW];
    flag f;
    int epfd[DEVICES];
} worker;

/* Polls every unfinished op of the round; returns how many are left. */
static uint32_t poll_round(stress_job *jobs, uint32_t n, mox_waker w)
{
    uint32_t left = 0;
    for (uint32_t j = 0; j < n; j++)
        for (int k = 0; k < 2; k++) {
            if (jobs[j].done[k])
                continue;
            if (mox_op_poll(jobs[j].ops[k], w) == MOX_READY)
                jobs[j].done[k] = true;
            else
                left++;
        }
    return left;
}

static void drive_round(worker *wk, consumer how, uint32_t d, uint32_t n)
{
    stress_job *jobs = wk->jobs;
    if (how == BY_WAIT) {
        /* Sometimes submit them all first, sometimes wait in turn. */
        if (next_rand(&wk->rng) & 1)
            poll_round(jobs, n, (mox_waker){NULL, NULL});
        for (uint32_t j = 0; j < n; j++)
            for (int k = 0; k < 2; k++)
                if (!jobs[j].done[k]) {
                    mox_op_wait(jobs[j].ops[k]);
                    jobs[j].done[k] = true;
                }
        return;
    }
    if (how == BY_WAKER) {
        mox_waker w = {flag_wake, &wk->f};
        while (poll_round(jobs, n, w))
            flag_wait(&wk->f);
        return;
    }
    int evfd = mox_device_event_fd(devices[d].dev);
    while (poll_round(jobs, n, (mox_waker){NULL, NULL})) {
        struct epoll_event ev;
        if (epoll_wait(wk->epfd[d], &ev, 1, 100) > 0) {
            uint64_t v;
            if (read(evfd, &v, sizeof v) < 0 && errno != EAGAIN)
                stress_die("reading the event fd: %s", strerror(errno));
            atomic_fetch_add_explicit(&stress_count.wakes, 1, memory_order_relaxed);
        }
    }
}

static void *worker_main(void *p)
{
    worker *wk = p;
    while (!atomic_load(&stop)) {
        uint32_t d = next_rand(&wk->rng) % DEVICES;
        consumer how = (consumer)(next_rand(&wk->rng) % CONSUMERS);
        uint32_t n = 1 + next_rand(&wk->rng) % WINDOW;
        for (uint32_t j = 0; j < n; j++) {
            stress_kind kind = (stress_kind)(next_rand(&wk->rng) % JOB_KINDS);
            float value = (float)(next_rand(&wk->rng) % 1000);
            stress_job_build(&wk->jobs[j], kind, &devices[d], wk->slots[d][j], value);
        }
        drive_round(wk, how, d, n);
        for (uint32_t j = 0; j < n; j++)
            stress_job_check(&wk->jobs[j]);
        if (atomic_load_explicit(&stress_count.ops, memory_order_relaxed) >= op_target)
            atomic_store(&stop, true);
    }
    atomic_fetch_add(&finished_threads, 1);
    return NULL;
}

/* Fails the run if no job finished for STALL_MS while a thread still runs
 * (also after the end was called: a thread stuck in its last round); ends
 * the run at the time cap. */
static void watch(uint64_t start)
{
    uint64_t last_jobs = 0, last_change = now_ms();
    while (atomic_load(&finished_threads) < nthreads) {
        usleep(50000);
        uint64_t jobs = atomic_load(&stress_count.jobs), t = now_ms();
        if (jobs != last_jobs) {
            last_jobs = jobs;
            last_change = t;
        } else if (t - last_change >= STALL_MS) {
            fprintf(stderr, "stress: STALL - no job finished for %d ms (%llu ops, %llu jobs); "
                            "in flight per device:", STALL_MS,
                    (unsigned long long)atomic_load(&stress_count.ops), (unsigned long long)jobs);
            for (int d = 0; d < DEVICES; d++)
                fprintf(stderr, " %llu submitted", (unsigned long long)mox_device_submission_count(devices[d].dev));
            fprintf(stderr, "\n");
            fflush(NULL);
            _exit(1);
        }
        if (t - start >= seconds_cap * 1000u)
            atomic_store(&stop, true);
    }
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long long v = strtoull(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--ops"))
            op_target = v;
        else if (!strcmp(argv[i], "--seconds"))
            seconds_cap = v;
        else if (!strcmp(argv[i], "--threads"))
            nthreads = v < 1 ? 1 : v > MAX_THREADS ? MAX_THREADS : (uint32_t)v;
        else if (!strcmp(argv[i], "--seed"))
            seed = v ? v : 1;
    }
}

static void open_devices(void)
{
    float neg[STRESS_VALUES];
    for (int i = 0; i < STRESS_VALUES; i++)
        neg[i] = -7.0f;
    for (int d = 0; d < DEVICES; d++) {
        mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = capacities[d], .cpu_threads = 0};
        mox_status st = mox_device_open_with(&o, &devices[d].dev);
        if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
            fprintf(stderr, "skip: %s\n", mox_error_last_message());
            exit(77);
        }
        if (st != MOX_OK ||
            mox_buffer_create_from(devices[d].dev, &mox_type_f32, STRESS_VALUES, neg,
                                   &devices[d].negative) != MOX_OK)
            stress_die("opening device %d: %s", d, mox_error_last_message());
        devices[d].capacity = capacities[d];
    }
}

static void worker_init(worker *wk, uint32_t index)
{
    memset(wk, 0, sizeof *wk);
    wk->index = index;
    wk->rng = seed * 0x9E3779B97F4A7C15ull + index + 1;
    pthread_mutex_init(&wk->f.m, NULL);
    pthread_cond_init(&wk->f.c, NULL);
    for (int d = 0; d < DEVICES; d++) {
        for (int s = 0; s < SLOTS; s++)
            if (mox_buffer_create(devices[d].dev, &mox_type_f32, STRESS_VALUES, &wk->slots[d][s]) != MOX_OK)
                stress_die("buffer: %s", mox_error_last_message());
        wk->epfd[d] = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)d};
        if (wk->epfd[d] < 0 ||
            epoll_ctl(wk->epfd[d], EPOLL_CTL_ADD, mox_device_event_fd(devices[d].dev), &ev) != 0)
            stress_die("epoll: %s", strerror(errno));
    }
}

static void worker_fini(worker *wk)
{
    for (int d = 0; d < DEVICES; d++) {
        for (int s = 0; s < SLOTS; s++)
            mox_buffer_release(wk->slots[d][s]);
        close(wk->epfd[d]);
    }
    pthread_cond_destroy(&wk->f.c);
    pthread_mutex_destroy(&wk->f.m);
}

#if STRESS_FAULTS
/* After injected failures: every kind of job works again on every device
 * (no transient failure was kept, e.g. a module preparation). */
static void verify_recovery(worker *wk)
{
    for (uint32_t d = 0; d < DEVICES; d++)
        for (int kind = 0; kind < JOB_KINDS; kind++) {
            stress_job *job = &wk->jobs[0];
            stress_job_build(job, (stress_kind)kind, &devices[d], wk->slots[d][0], 5.0f);
            drive_round(wk, BY_WAIT, d, 1);
            stress_job_check(job);
        }
}
#endif

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    open_devices();
    static worker workers[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    for (uint32_t t = 0; t < nthreads; t++)
        worker_init(&workers[t], t);
    uint64_t start = now_ms();
#if STRESS_FAULTS
    stress_faults_start(seed);
#endif
    for (uint32_t t = 0; t < nthreads; t++)
        if (pthread_create(&threads[t], NULL, worker_main, &workers[t]) != 0)
            stress_die("pthread_create failed");
    watch(start);
    for (uint32_t t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
#if STRESS_FAULTS
    {
        uint64_t injected = stress_faults_stop();
        verify_recovery(&workers[0]);
        printf("fault injection: %llu allocations failed, %llu stages ended out of memory (code "
               "and message checked); afterwards every job kind succeeded on every device\n",
               (unsigned long long)injected,
               (unsigned long long)atomic_load(&stress_count.out_of_memory));
    }
#endif
    for (uint32_t t = 0; t < nthreads; t++)
        worker_fini(&workers[t]);
    double secs = (double)(now_ms() - start) / 1000.0;
    uint64_t ops = atomic_load(&stress_count.ops), jobs = atomic_load(&stress_count.jobs);
    printf("progress stress: %llu ops in %llu jobs (%llu expected failures) on %u threads, %d devices "
           "(capacities 1, 2, 8, 64), %.1f s (%.0f ops/s), %.2f wake-ups per job, seed %llu\n",
           (unsigned long long)ops, (unsigned long long)jobs,
           (unsigned long long)atomic_load(&stress_count.failures), nthreads, DEVICES, secs,
           (double)ops / secs, (double)atomic_load(&stress_count.wakes) / (double)(jobs ? jobs : 1),
           (unsigned long long)seed);
    for (int d = 0; d < DEVICES; d++) {
        mox_buffer_release(devices[d].negative);
        mox_device_release(devices[d].dev);
    }
    return 0;
}
