/* cpu_overhead.c - what the runtime costs per dispatch on the CPU backend:
 * building ops, repeated two-stage sequences (waited each time, and
 * pipelined), and the round trip of one launch + wait. Tiny kernels, so the
 * numbers are the runtime's. Prints a table; asserts nothing.
 * Usage: cpu_overhead [iterations] (default 20000). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mox/mox.h>

#include "ovh.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct two_stage {
    mox_device *dev;
    mox_launch_config cfg;
    mox_buffer *a, *b;
    uint32_t n;
} two_stage;

static mox_status record(void *ctx, mox_batch *batch)
{
    two_stage *t = ctx;
    mox_status st = mox_batch_push(batch, ovh_bump(t->dev, t->cfg, t->a, t->n));
    if (st == MOX_OK)
        st = mox_batch_push(batch, ovh_twice(t->dev, t->cfg, t->a, t->b, t->n));
    return st;
}

/* A waker that parks the bench thread until the runtime wakes it. */
typedef struct parker {
    pthread_mutex_t m;
    pthread_cond_t c;
    int woken;
} parker;

static void unpark(void *p)
{
    parker *k = p;
    pthread_mutex_lock(&k->m);
    k->woken = 1;
    pthread_cond_signal(&k->c);
    pthread_mutex_unlock(&k->m);
}

/* Polls until the op is submitted (sleeping while every command slot is
 * busy, until a completion wakes us). */
static void submit(mox_device *dev, mox_op *op, parker *k)
{
    uint64_t before = mox_device_submission_count(dev);
    while (mox_op_poll(op, (mox_waker){unpark, k}) == MOX_PENDING &&
           mox_device_submission_count(dev) == before) {
        pthread_mutex_lock(&k->m);
        while (!k->woken)
            pthread_cond_wait(&k->c, &k->m);
        k->woken = 0;
        pthread_mutex_unlock(&k->m);
    }
}

static void row(const char *what, double us_per, const char *unit, long count)
{
    printf("| %-46s | %10.3f | %-13s | %8ld |\n", what, us_per, unit, count);
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    if (iters < 10)
        iters = 10;
    mox_device *dev = NULL;
    mox_status st = mox_device_open(&dev);
    if (st != MOX_OK) {
        fprintf(stderr, "cpu_overhead: %s: %s\n", mox_status_name(st), mox_error_last_message());
        return st == MOX_ERR_DEVICE_UNAVAILABLE ? 77 : 1;
    }
    two_stage t = {dev, {{1, 1, 1}, {64, 1, 1}, 0}, NULL, NULL, 64};
    mox_buffer_create(dev, &mox_type_f32, 64, &t.a);
    mox_buffer_create(dev, &mox_type_f32, 64, &t.b);
    mox_module_prepare(dev, &ovh_module);

    printf("device: %s\n\n", mox_device_name(dev));
    printf("| %-46s | %10s | %-13s | %8s |\n", "measurement", "us", "per", "count");
    printf("|%s|%s|%s|%s|\n", "------------------------------------------------", "------------",
           "---------------", "----------");

    /* Building and dropping a launch: validation and allocation only. */
    double t0 = now_us();
    for (long i = 0; i < iters; i++)
        mox_op_drop(ovh_bump(dev, t.cfg, t.a, t.n));
    row("construct + drop a launch (nothing submitted)", (now_us() - t0) / (double)iters, "launch", iters);

    /* Two-stage sequence, waited every time. */
    t0 = now_us();
    for (long i = 0; i < iters; i++) {
        mox_op *op = mox_sequence(dev, record, &t);
        mox_op_wait(op);
        mox_op_drop(op);
    }
    double seq = now_us() - t0;
    row("two-stage sequence + wait", seq / (double)iters, "sequence", iters);
    row("  the same, per dispatch", seq / (double)iters / 2.0, "dispatch", iters * 2);

    /* Pipelined: submit without waiting (ordered by the trackers, up to
     * the 64 command slots in flight), wait for the last one only. */
    parker k = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    t0 = now_us();
    for (long i = 0; i < iters; i++) {
        mox_op *op = mox_sequence(dev, record, &t);
        if (i == iters - 1)
            mox_op_wait(op);
        else
            submit(dev, op, &k);
        mox_op_drop(op);
    }
    double piped = now_us() - t0;
    row("two-stage sequences, pipelined, per dispatch", piped / (double)iters / 2.0, "dispatch", iters * 2);

    /* Round trip of one launch + mox_op_wait. */
    long samples = iters < 5000 ? iters : 5000;
    double *lat = malloc((size_t)samples * sizeof *lat);
    for (long i = 0; i < samples; i++) {
        double s = now_us();
        mox_op *op = ovh_bump(dev, t.cfg, t.a, t.n);
        mox_op_wait(op);
        mox_op_drop(op);
        lat[i] = now_us() - s;
    }
    qsort(lat, (size_t)samples, sizeof *lat, cmp_double);
    row("launch + wait round trip, min", lat[0], "launch", samples);
    row("launch + wait round trip, median", lat[samples / 2], "launch", samples);
    row("launch + wait round trip, p90", lat[(samples * 9) / 10], "launch", samples);
    free(lat);

    float check = 0;
    mox_buffer_read(t.b, 0, 1, &check);
    printf("\n(check value %g; submissions %llu)\n", (double)check,
           (unsigned long long)mox_device_submission_count(dev));
    mox_buffer_release(t.a);
    mox_buffer_release(t.b);
    mox_device_release(dev);
    return 0;
}
