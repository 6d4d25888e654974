/* stress_jobs.c - building and checking the stress test's jobs (see
 * stress_jobs.h). */
#include "stress_jobs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "stress_faults.h"

stress_counters stress_count;
_Atomic bool stress_faults_active;

enum { FAIL_CODE = 7 };

_Noreturn void stress_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "stress: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(NULL);
    abort();
}

static void count_ops(uint64_t n) { atomic_fetch_add_explicit(&stress_count.ops, n, memory_order_relaxed); }

static mox_launch_config cfg(void)
{
    mox_launch_config c;
    if (mox_launch_config_for_elements(64, STRESS_VALUES, &c) != MOX_OK)
        stress_die("launch config: %s", mox_error_last_message());
    return c;
}

static mox_op *fill(mox_buffer *slot, float v)
{
    count_ops(1);
    return conf_fill(mox_buffer_device(slot), cfg(), slot, v, STRESS_VALUES);
}

static mox_status readback_slot(void *ctx, const mox_result *in, mox_op **next)
{
    (void)in;
    count_ops(1);
    *next = mox_buffer_readback(ctx);
    return MOX_OK;
}

static mox_status must_not_run(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx, (void)in, (void)next;
    stress_die("a then-stage ran after a failed stage");
}

static mox_status record_fill_step_step(void *ctx, mox_batch *b)
{
    stress_job *job = ctx;
    mox_device *dev = mox_buffer_device(job->slot);
    mox_status st = mox_batch_push(b, fill(job->slot, job->value));
    for (int i = 0; i < 2 && st == MOX_OK; i++) {
        count_ops(1);
        st = mox_batch_push(b, conf_step(dev, cfg(), job->slot, STRESS_VALUES));
    }
    return st;
}

static mox_status map_to_value(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    (void)in;
    *value = ctx;
    *destroy = NULL;
    return MOX_OK;
}

/* Under injected allocation failures (stress_faults.h) a job may end out
 * of memory anywhere: accepted with its code and message, counted. */
static bool out_of_memory(mox_status st, const char *message)
{
    if (!STRESS_FAULTS || !atomic_load(&stress_faults_active) || st != MOX_ERR_OUT_OF_MEMORY)
        return false;
    if (!message || !strstr(message, "out of memory"))
        stress_die("out of memory without saying so: \"%s\"", message ? message : "(none)");
    atomic_fetch_add_explicit(&stress_count.out_of_memory, 1, memory_order_relaxed);
    return true;
}

/* A constructor that failed consumed nothing: `op` is dropped here. */
static bool construction_failed(mox_status st, const char *what, mox_op *op)
{
    if (st == MOX_OK)
        return false;
    if (!out_of_memory(st, mox_error_last_message()))
        stress_die("%s: %s", what, mox_error_last_message());
    mox_op_drop(op);
    return true;
}

static mox_op *then_or_die(mox_op *op, mox_then_fn fn, void *ctx)
{
    mox_op *out = NULL;
    count_ops(1);
    if (construction_failed(mox_op_then(op, fn, ctx, &out), "mox_op_then", op))
        return NULL;
    return out;
}

void stress_job_build(stress_job *job, stress_kind kind, stress_device *sd, mox_buffer *slot,
                      float value)
{
    memset(job, 0, sizeof *job);
    job->kind = kind;
    job->slot = slot;
    job->value = value;
    mox_device *dev = sd->dev;
    switch (kind) {
    case JOB_LAUNCH:
    case JOB_DROP_UNPOLLED:
    case JOB_DROP_POLLED:
        job->ops[0] = fill(slot, value);
        break;
    case JOB_CHAIN_READBACK:
        job->ops[0] = then_or_die(fill(slot, value), readback_slot, slot);
        break;
    case JOB_SEQUENCE:
        count_ops(1);
        job->ops[0] = then_or_die(mox_sequence(dev, record_fill_step_step, job), readback_slot, slot);
        break;
    case JOB_MAP: {
        count_ops(1);
        mox_op *in = fill(slot, value);
        construction_failed(mox_op_map(in, map_to_value, job, &job->ops[0]), "mox_op_map", in);
        break;
    }
    case JOB_FAIL:
    case JOB_FAIL_CHAIN:
        count_ops(1);
        job->ops[0] = conf_fail_if_negative(dev, cfg(), sd->negative, slot, STRESS_VALUES);
        if (kind == JOB_FAIL_CHAIN)
            job->ops[0] = then_or_die(job->ops[0], must_not_run, NULL);
        break;
    case JOB_SHARE: {
        count_ops(2);
        mox_op *in = fill(slot, value);
        if (!construction_failed(mox_op_share(in, &job->ops[0]), "mox_op_share", in))
            construction_failed(mox_op_clone(job->ops[0], &job->ops[1]), "mox_op_clone", NULL);
        break;
    }
    case JOB_KINDS:
        break;
    }
    job->built = job->ops[0] != NULL;
    if (kind == JOB_DROP_UNPOLLED) {
        mox_op_drop(job->ops[0]);
        job->ops[0] = NULL;
    } else if (kind == JOB_DROP_POLLED) {
        mox_op_poll(job->ops[0], (mox_waker){NULL, NULL});
        mox_op_drop(job->ops[0]);
        job->ops[0] = NULL;
    }
    job->done[1] = job->ops[1] == NULL;
    job->done[0] = job->ops[0] == NULL;
}

static void expect_bytes(const stress_job *job, const mox_result *r, float want)
{
    size_t size = 0;
    const float *v = mox_result_bytes(r, &size);
    if (!v || size != STRESS_VALUES * sizeof(float))
        stress_die("job %d: readback of %zu bytes", (int)job->kind, size);
    for (int i = 0; i < STRESS_VALUES; i++)
        if (v[i] != want)
            stress_die("job %d: element %d is %g, want %g", (int)job->kind, i, (double)v[i],
                       (double)want);
}

/* True when r has the wanted status; false when it ran out of memory under
 * fault injection; dies otherwise. */
static bool expect_status(const stress_job *job, const mox_result *r, mox_status want)
{
    mox_status st = mox_result_status(r);
    if (st != want && out_of_memory(st, mox_error_message(mox_result_error(r))))
        return false;
    if (st != want)
        stress_die("job %d: %s (%s), want %s", (int)job->kind, mox_status_name(st),
                   mox_error_message(mox_result_error(r)), mox_status_name(want));
    return true;
}

void stress_job_check(stress_job *job)
{
    const mox_result *r = job->ops[0] ? mox_op_result(job->ops[0]) : NULL;
    stress_kind kind = job->built ? job->kind : JOB_KINDS; /* out of memory while building */
    switch (kind) {
    case JOB_LAUNCH:
        if (expect_status(job, r, MOX_OK) && mox_result_buffer(r, 0) != job->slot)
            stress_die("a launch did not yield its buffer back");
        break;
    case JOB_CHAIN_READBACK:
        if (expect_status(job, r, MOX_OK))
            expect_bytes(job, r, job->value);
        break;
    case JOB_SEQUENCE:
        if (expect_status(job, r, MOX_OK))
            expect_bytes(job, r, (job->value * 2.0f + 1.0f) * 2.0f + 1.0f);
        break;
    case JOB_MAP:
        if (expect_status(job, r, MOX_OK) && mox_result_value(r) != job)
            stress_die("map: wrong value");
        break;
    case JOB_FAIL:
    case JOB_FAIL_CHAIN:
        if (!expect_status(job, r, MOX_ERR_KERNEL_FAILED))
            break;
        if (mox_error_fail_code(mox_result_error(r)) != FAIL_CODE)
            stress_die("failing kernel: fail code %u", mox_error_fail_code(mox_result_error(r)));
        atomic_fetch_add_explicit(&stress_count.failures, 1, memory_order_relaxed);
        break;
    case JOB_SHARE:
        if (job->ops[1] && mox_op_result(job->ops[1]) != r)
            stress_die("share: clones resolved to different results");
        expect_status(job, r, MOX_OK);
        break;
    case JOB_DROP_UNPOLLED:
    case JOB_DROP_POLLED:
    case JOB_KINDS:
        break;
    }
    mox_op_drop(job->ops[0]);
    mox_op_drop(job->ops[1]);
    job->ops[0] = job->ops[1] = NULL;
    atomic_fetch_add_explicit(&stress_count.jobs, 1, memory_order_relaxed);
}
