/* support.c - see support.h. */
#include "support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

mox_device *conf_open_with(const mox_device_options *options)
{
    mox_device *dev = NULL;
    mox_status st = mox_device_open_with(options, &dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        fprintf(stderr, "skip: %s\n", mox_error_last_message());
        exit(CONF_SKIP);
    }
    if (st != MOX_OK) {
        fprintf(stderr, "mox_device_open: %s: %s\n", mox_status_name(st), mox_error_last_message());
        exit(1);
    }
    return dev;
}

mox_device *conf_open(void) { return conf_open_with(NULL); }

mox_buffer *conf_buffer(mox_device *dev, const float *values, size_t n)
{
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create_from(dev, &mox_type_f32, n, values, &b), MOX_OK);
    return b;
}

mox_buffer *conf_zeros(mox_device *dev, size_t n)
{
    mox_buffer *b = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, n, &b), MOX_OK);
    return b;
}

mox_buffer *conf_ramp(mox_device *dev, size_t n, float base, float step)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)i * step + base;
    mox_buffer *b = conf_buffer(dev, v, n);
    free(v);
    return b;
}

float *conf_read(mox_buffer *b)
{
    size_t n = mox_buffer_length(b);
    float *v = malloc((n ? n : 1) * sizeof *v);
    assert_non_null(v);
    assert_int_equal(mox_buffer_read(b, 0, n, v), MOX_OK);
    return v;
}

float conf_read1(mox_buffer *b, size_t i)
{
    float v = -1.0f;
    assert_int_equal(mox_buffer_read(b, i, 1, &v), MOX_OK);
    return v;
}

mox_launch_config conf_cfg(uint32_t n)
{
    mox_launch_config c;
    assert_int_equal(mox_launch_config_for_elements(64, n, &c), MOX_OK);
    return c;
}

void conf_flag_init(conf_flag *f)
{
    pthread_mutex_init(&f->m, NULL);
    pthread_cond_init(&f->c, NULL);
    f->calls = 0;
}

void conf_flag_destroy(conf_flag *f)
{
    pthread_cond_destroy(&f->c);
    pthread_mutex_destroy(&f->m);
}

static void flag_wake(void *p)
{
    conf_flag *f = p;
    pthread_mutex_lock(&f->m);
    f->calls++;
    pthread_cond_broadcast(&f->c);
    pthread_mutex_unlock(&f->m);
}

mox_waker conf_flag_waker(conf_flag *f) { return (mox_waker){flag_wake, f}; }

int conf_flag_calls(conf_flag *f)
{
    pthread_mutex_lock(&f->m);
    int n = f->calls;
    pthread_mutex_unlock(&f->m);
    return n;
}

bool conf_flag_wait(conf_flag *f, int seen, int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->m);
    int rc = 0;
    while (f->calls <= seen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&f->c, &f->m, &ts);
    bool ok = f->calls > seen;
    pthread_mutex_unlock(&f->m);
    return ok;
}

mox_status conf_drive(mox_op *op)
{
    conf_flag f;
    conf_flag_init(&f);
    for (int i = 0; i < 100000; i++) {
        int seen = conf_flag_calls(&f);
        if (mox_op_poll(op, conf_flag_waker(&f)) == MOX_READY) {
            conf_flag_destroy(&f);
            return mox_result_status(mox_op_result(op));
        }
        /* A PENDING poll must be followed by a wake: waiting long here
         * means a lost wakeup (the ctest timeout is the backstop). */
        if (!conf_flag_wait(&f, seen, 60000))
            fail_msg("op stayed PENDING without its waker being called");
    }
    fail_msg("op did not resolve");
    return MOX_ERR_STATE;
}

mox_status conf_run(mox_op *op)
{
    mox_status st = mox_op_wait(op);
    mox_op_drop(op);
    return st;
}

void conf_nap(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
