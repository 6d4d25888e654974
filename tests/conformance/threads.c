/* threads.c - many host threads creating and driving ops on one device at
 * once (each op driven by one thread), sharing read-only inputs, plus
 * shared ops polled from several threads. Results must be exact. */
#include <stdlib.h>

#include "support.h"

enum { THREADS = 8, ROUNDS = 25, N = 777 };

static mox_device *dev;
static mox_buffer *shared_in; /* read by every thread */

typedef struct worker {
    int id;
    int errors;
} worker;

static mox_status record(void *ctx, mox_batch *b)
{
    mox_buffer **bufs = ctx;
    mox_status st = mox_batch_push(b, conf_scale(dev, conf_cfg(N), shared_in, bufs[0], 2.0f, N));
    if (st == MOX_OK)
        st = mox_batch_push(b, conf_step(dev, conf_cfg(N), bufs[0], N));
    if (st == MOX_OK)
        st = mox_batch_push(b, conf_add(dev, conf_cfg(N), bufs[0], shared_in, bufs[1], N));
    return st;
}

static void *work(void *p)
{
    worker *w = p;
    mox_buffer *bufs[2];
    mox_buffer_create(dev, &mox_type_f32, N, &bufs[0]);
    mox_buffer_create(dev, &mox_type_f32, N, &bufs[1]);
    for (int r = 0; r < ROUNDS; r++) {
        mox_op *op = (r % 2) ? mox_sequence(dev, record, bufs) : NULL;
        if (!op) {
            /* the same work as three single launches */
            mox_op *a = conf_scale(dev, conf_cfg(N), shared_in, bufs[0], 2.0f, N);
            mox_op *b = conf_step(dev, conf_cfg(N), bufs[0], N);
            (void)mox_op_poll(a, (mox_waker){NULL, NULL});
            (void)mox_op_poll(b, (mox_waker){NULL, NULL});
            mox_op_drop(a);
            mox_op_drop(b);
            op = conf_add(dev, conf_cfg(N), bufs[0], shared_in, bufs[1], N);
        }
        if (conf_drive(op) != MOX_OK)
            w->errors++;
        mox_op_drop(op);
        mox_op *rb = mox_buffer_readback(bufs[1]);
        if (mox_op_wait(rb) != MOX_OK) {
            w->errors++;
        } else {
            const float *v = mox_result_bytes(mox_op_result(rb), NULL);
            for (int i = 0; i < N; i++) {
                float x = (float)(i % 100);
                if (v[i] != (x * 2.0f) * 2.0f + 1.0f + x)
                    w->errors++;
            }
        }
        mox_op_drop(rb);
    }
    mox_buffer_release(bufs[0]);
    mox_buffer_release(bufs[1]);
    return NULL;
}

static void eight_threads_at_once(void **state)
{
    (void)state;
    dev = conf_open();
    /* Prepared, so one poll submits (the unwaited launches below rely on it). */
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    float *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = (float)(i % 100);
    shared_in = conf_buffer(dev, v, N);
    free(v);
    pthread_t th[THREADS];
    worker ws[THREADS];
    for (int t = 0; t < THREADS; t++) {
        ws[t] = (worker){t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, work, &ws[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(ws[t].errors, 0);
    }
    mox_buffer_release(shared_in);
    mox_device_release(dev);
}

/* Device clones used from several threads, with one small capacity. */
static void *small_capacity_work(void *p)
{
    mox_buffer *b = p;
    for (int r = 0; r < 30; r++) {
        mox_op *op = conf_step(mox_buffer_device(b), conf_cfg(64), b, 64);
        mox_op_wait(op);
        mox_op_drop(op);
    }
    return NULL;
}

static void threads_share_a_small_capacity(void **state)
{
    (void)state;
    mox_device_options o = {.backend = MOX_BACKEND_AUTO, .command_capacity = 2, .cpu_threads = 0};
    mox_device *d = conf_open_with(&o);
    pthread_t th[THREADS];
    mox_buffer *bufs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        bufs[t] = conf_zeros(d, 64);
        pthread_create(&th[t], NULL, small_capacity_work, bufs[t]);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        /* 30 times x*2+1 from 0: 2^30 - 1 */
        assert_true(conf_read1(bufs[t], 63) == 1073741823.0f);
        mox_buffer_release(bufs[t]);
    }
    mox_device_release(d);
}

/* A thread that never touched the device waits for a kernel that fails.
 * Whichever thread finishes the launch (the runtime's, or the waiter
 * itself when it finds the launch done) must report the kernel's own
 * failure and code: on CUDA, reading the failure needs the context, which
 * is not current on a fresh thread. */
typedef struct fresh_wait {
    mox_op *op;
    mox_status st;
    unsigned code;
} fresh_wait;


static void *wait_on_fresh_thread(void *p)
{
    fresh_wait *w = p;
    w->st = mox_op_wait(w->op);
    w->code = mox_error_fail_code(mox_result_error(mox_op_result(w->op)));
    return NULL;
}

static void failures_reach_waiters_on_fresh_threads(void **state)
{
    (void)state;
    enum { WAITERS = 4 };
    mox_device *d = conf_open();
    float vals[4] = {1, 2, -7, 4};
    mox_buffer *in = conf_buffer(d, vals, 4), *out = conf_zeros(d, 4);
    for (int round = 0; round < 64; round++) {
        fresh_wait w[WAITERS];
        pthread_t th[WAITERS];
        assert_int_equal(mox_op_share(conf_fail_if_negative(d, conf_cfg(4), in, out, 4), &w[0].op),
                         MOX_OK);
        for (int i = 1; i < WAITERS; i++)
            assert_int_equal(mox_op_clone(w[0].op, &w[i].op), MOX_OK);
        for (int i = 0; i < WAITERS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, wait_on_fresh_thread, &w[i]), 0);
        for (int i = 0; i < WAITERS; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < WAITERS; i++) {
            assert_int_equal(w[i].st, MOX_ERR_KERNEL_FAILED);
            assert_int_equal(w[i].code, 7);
            mox_op_drop(w[i].op);
        }
    }
    mox_buffer_release(in);
    mox_buffer_release(out);
    mox_device_release(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_threads_at_once),
        cmocka_unit_test(threads_share_a_small_capacity),
        cmocka_unit_test(failures_reach_waiters_on_fresh_threads),
    };
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
