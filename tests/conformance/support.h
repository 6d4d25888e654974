/* support.h - helpers shared by the conformance tests: opening the device
 * chosen by MOX_BACKEND (exit 77 = skip when it is unavailable), float
 * buffers, a counting waker, small waits with a deadline. */
#ifndef MOX_CONF_SUPPORT_H
#define MOX_CONF_SUPPORT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "conf.h" /* generated bindings of tests/conformance/kernels */

#define CONF_SKIP 77

/* Opens the device of this run, or exits 77 when the backend is unavailable. */
mox_device *conf_open(void);
mox_device *conf_open_with(const mox_device_options *options);

mox_buffer *conf_buffer(mox_device *dev, const float *values, size_t n);
mox_buffer *conf_zeros(mox_device *dev, size_t n);
/* Buffer of n floats, value(i) = i * step + base. */
mox_buffer *conf_ramp(mox_device *dev, size_t n, float base, float step);
/* Reads all floats (malloc'd, caller frees). */
float *conf_read(mox_buffer *b);
float conf_read1(mox_buffer *b, size_t i);
mox_launch_config conf_cfg(uint32_t n);

/* A waker that counts its calls and can be waited on. */
typedef struct conf_flag {
    pthread_mutex_t m;
    pthread_cond_t c;
    int calls;
} conf_flag;
void conf_flag_init(conf_flag *f);
void conf_flag_destroy(conf_flag *f);
mox_waker conf_flag_waker(conf_flag *f);
int conf_flag_calls(conf_flag *f);
/* Waits until calls > seen, at most timeout_ms. Returns true if so. */
bool conf_flag_wait(conf_flag *f, int seen, int timeout_ms);

/* Polls op with a counting waker until READY (bounded); fails the test on
 * timeout. Returns the status. */
mox_status conf_drive(mox_op *op);
/* mox_op_wait, then drop; returns the status. */
mox_status conf_run(mox_op *op);

/* Sleeps a few milliseconds (never used to assert timing, only to give
 * other threads a chance to make a mistake). */
void conf_nap(int ms);

#endif
