/* host.c - the pipeline example: two stages in one batch (mox_sequence),
 * verified exactly against the CPU for blocks 128 and 256 and sizes 0, 1,
 * 255, 256, 257 and 1000003. Each case is awaited twice: once with the
 * tiny executor below (an event loop driving mox_op_poll, like the seed's
 * block_on), once with mox_op_wait. Exit status: 0 verified, 1 mismatch or
 * error, 77 when the requested backend is unavailable. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mox/mox.h>

#include "example.h"
#include "stages.h"

/* ---- a tiny executor: park the thread until the op's waker unparks it ---- */

typedef struct parker {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool unparked;
} parker;

static void unpark(void *p)
{
    parker *k = p;
    pthread_mutex_lock(&k->lock);
    k->unparked = true;
    pthread_cond_signal(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

/* Drives `op` to completion; returns its status. */
static mox_status block_on(mox_op *op)
{
    parker k = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    mox_waker waker = {unpark, &k};
    while (mox_op_poll(op, waker) == MOX_PENDING) {
        pthread_mutex_lock(&k.lock);
        while (!k.unparked)
            pthread_cond_wait(&k.cond, &k.lock);
        k.unparked = false;
        pthread_mutex_unlock(&k.lock);
    }
    pthread_cond_destroy(&k.cond);
    pthread_mutex_destroy(&k.lock);
    return mox_result_status(mox_op_result(op));
}

/* ---- the pipeline ---- */

typedef struct stages_batch {
    mox_device *device;
    uint32_t block, n;
    mox_buffer *input, *intermediate, *output;
} stages_batch;

static mox_status record(void *ctx, mox_batch *batch)
{
    stages_batch *s = ctx;
    mox_launch_config first, second;
    mox_status st = mox_launch_config_for_elements(s->block, s->n, &first);
    if (st == MOX_OK)
        st = mox_launch_config_for_elements(256, s->n, &second);
    if (st != MOX_OK)
        return st;
    mox_op *stage1 = s->block == 128
                         ? stages_scale_128(s->device, first, s->input, s->intermediate, s->n)
                         : stages_scale_256(s->device, first, s->input, s->intermediate, s->n);
    st = mox_batch_push(batch, stage1);
    if (st == MOX_OK)
        st = mox_batch_push(batch, stages_finish(s->device, second, s->intermediate, s->output, s->n));
    return st;
}

static int fail(const char *what, mox_status st)
{
    fprintf(stderr, "pipeline: %s: %s: %s\n", what, mox_status_name(st), mox_error_last_message());
    return 1;
}

static int fail_op(const char *what, mox_op *op)
{
    fprintf(stderr, "pipeline: %s: %s: %s\n", what,
            mox_status_name(mox_result_status(mox_op_result(op))), ex_op_message(op));
    return 1;
}

/* Reads `output` with an async readback and compares exactly. */
static int verify(mox_buffer *output, const float *values, uint32_t n, float scale, bool use_poll,
                  uint32_t block)
{
    mox_op *rb = mox_buffer_readback(output);
    mox_status st = use_poll ? block_on(rb) : mox_op_wait(rb);
    if (st != MOX_OK) {
        int rc = fail_op("readback", rb);
        mox_op_drop(rb);
        return rc;
    }
    size_t size = 0;
    const float *actual = mox_result_bytes(mox_op_result(rb), &size);
    int rc = size == (size_t)n * sizeof(float) ? 0 : 1;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        float expected = (values[i] * scale + 3.0f) * 5.0f + 7.0f;
        if (actual[i] != expected) {
            fprintf(stderr, "pipeline: block=%u, n=%u, i=%u: %.9g != %.9g\n", block, n, i,
                    (double)actual[i], (double)expected);
            rc = 1;
        }
    }
    mox_op_drop(rb);
    return rc;
}

static int run_case(mox_device *device, uint32_t block, uint32_t n)
{
    float *values = ex_xmalloc((size_t)n * sizeof *values);
    for (uint32_t i = 0; i < n; i++)
        values[i] = (float)(i % 1024) * 0.25f;
    stages_batch s = {device,
                      block,
                      n,
                      ex_buffer_from(device, &mox_type_f32, n, values),
                      ex_buffer_new(device, &mox_type_f32, n),
                      ex_buffer_new(device, &mox_type_f32, n)};
    int rc = 1;
    mox_status st;
    float scale = block == 128 ? 2.0f : 4.0f;
    for (int pass = 0; pass < 2; pass++) {
        bool use_poll = pass == 0;
        if (pass == 1 && n) {
            /* Start the second pass from zeros so it proves itself. */
            float *zeros = ex_xcalloc(n, sizeof *zeros);
            st = mox_buffer_write(s.output, 0, n, zeros);
            free(zeros);
            if (st != MOX_OK) {
                rc = fail("reset", st);
                goto out;
            }
        }
        mox_op *op = mox_sequence(device, record, &s);
        st = use_poll ? block_on(op) : mox_op_wait(op);
        if (st != MOX_OK) {
            rc = fail_op("sequence", op);
            mox_op_drop(op);
            goto out;
        }
        mox_op_drop(op);
        if (verify(s.output, values, n, scale, use_poll, block) != 0)
            goto out;
    }
    printf("pipeline block=%u, n=%u: verified on %s\n", block, n, mox_device_name(device));
    rc = 0;
out:
    mox_buffer_release(s.input);
    mox_buffer_release(s.intermediate);
    mox_buffer_release(s.output);
    free(values);
    return rc;
}

/* The seed's extra pipeline checks: a dropped submission still completes
 * (a later readback sees it), and a fixed-block kernel rejects other blocks. */
static int extra_checks(mox_device *device)
{
    const uint32_t n = 1000;
    float values[1000];
    for (uint32_t i = 0; i < n; i++)
        values[i] = (float)i;
    mox_buffer *in = ex_buffer_from(device, &mox_type_f32, n, values);
    mox_buffer *out = ex_buffer_new(device, &mox_type_f32, n);
    int rc = 0;
    mox_launch_config c128 = ex_launch_config(128, n), c256 = ex_launch_config(256, n);
    mox_op *op = stages_scale_128(device, c128, in, out, n);
    uint64_t before = mox_device_submission_count(device);
    /* Poll until it is submitted (the module may still be preparing). */
    while (mox_device_submission_count(device) == before &&
           mox_op_poll(op, (mox_waker){NULL, NULL}) == MOX_PENDING) {
    }
    mox_op_drop(op); /* submitted (or done): dropping neither blocks nor cancels */
    float last = 0;
    if (mox_buffer_read(out, n - 1, 1, &last) != MOX_OK || last != (float)(n - 1) * 2.0f + 3.0f) {
        fprintf(stderr, "pipeline: a dropped submission's output is missing\n");
        rc = 1;
    }
    op = stages_scale_128(device, c256, in, out, n);
    if (mox_op_wait(op) != MOX_ERR_INVALID_LAUNCH) {
        fprintf(stderr, "pipeline: scale_128 accepted a 256-thread block\n");
        rc = 1;
    }
    mox_op_drop(op);
    mox_buffer_release(in);
    mox_buffer_release(out);
    if (rc == 0)
        printf("pipeline checks (dropped submission, block mismatch): ok\n");
    return rc;
}

int main(void)
{
    ex_init("pipeline");
    mox_device *device = ex_open_device();
    static const uint32_t blocks[] = {128, 256};
    static const uint32_t sizes[] = {0, 1, 255, 256, 257, 1000003};
    int rc = 0;
    for (size_t b = 0; b < 2 && rc == 0; b++)
        for (size_t i = 0; i < 6 && rc == 0; i++)
            rc = run_case(device, blocks[b], sizes[i]);
    if (rc == 0)
        rc = extra_checks(device);
    mox_device_release(device);
    return rc;
}
