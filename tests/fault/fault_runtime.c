/* fault_runtime.c - allocation-failure injection through libmox_testing's
 * hook (src/core/testing.h), which reaches every allocation of the runtime,
 * the backend, the artifact layer, the module registry, jansson and
 * libcrypto. A scenario (open a device, register and prepare a module that
 * was never seen, buffers, a launch, a sequence, a then-chain (a then of
 * a then, whose callback continues with a then op) through a
 * shared op, a map, a readback, an upload and a fill) runs with allocation k
 * failing, for every k
 * and in each mode: once, from k on, a burst then recovery. At each point:
 * every failed step reports MOX_ERR_OUT_OF_MEMORY (or is gated by such a
 * failure) with a message saying so, nothing hangs, nothing leaks (ASan's
 * leak check at exit), and the same scenario run again afterwards succeeds
 * on the same module. Runs on the device MOX_BACKEND picks (ctest runs it
 * on the CPU and on the simulated CUDA driver).
 *
 * usage: fault_runtime [first_use|once|from|burst] [--stride S]
 * (one test, every S-th allocation point; the sanitizer builds sample). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "conf.h"
#include "core/testing.h"

enum { N = 64, MAX_POINTS = 20000, DESCS = 4 * MAX_POINTS };

/* Fresh copies of conf's descriptor: the registry keys modules by address,
 * so each copy is a module parsed, hashed and prepared from scratch. */
static mox_module_desc descs[DESCS];
static size_t desc_used;
static long stride = 1;

static const mox_module_desc *fresh_module(void)
{
    assert_true(desc_used < DESCS);
    descs[desc_used] = conf_module;
    return &descs[desc_used++];
}

static uint32_t kernel_index(const char *name)
{
    for (uint32_t k = 0; k < conf_module.kernel_count; k++)
        if (strcmp(conf_module.kernel_names[k], name) == 0)
            return k;
    fail_msg("conf has no kernel %s", name);
    return 0;
}

/* What a scenario run saw. */
typedef struct outcome {
    bool ok;             /* every step succeeded with the right values */
    mox_status status;   /* the first failure */
    char message[512];
} outcome;

/* Records a failed step: it must be out of memory, gated by it, or a
 * callback that failed with it (then_step_nested's mox_op_then). */
static bool failed(outcome *o, mox_status st, const mox_error *e)
{
    mox_error *last = e ? NULL : mox_error_last();
    if (!e)
        e = last;
    const char *msg = mox_error_message(e);
    const mox_error *cause = mox_error_cause(e);
    bool oom = st == MOX_ERR_OUT_OF_MEMORY ||
               (st == MOX_ERR_GATED && mox_error_code(cause) == MOX_ERR_OUT_OF_MEMORY);
    bool callback_oom =
        st == MOX_ERR_CALLBACK && msg && strstr(msg, "callback failed with MOX_ERR_OUT_OF_MEMORY");
    if (!callback_oom && (!oom || !msg || !strstr(msg, "out of memory")))
        fail_msg("a failed allocation gave %s: \"%s\" (cause %s: \"%s\")", mox_status_name(st), msg ? msg : "", cause ? mox_status_name(mox_error_code(cause)) : "-", cause ? mox_error_message(cause) : "");
    if (o->status == MOX_OK) {
        o->status = st;
        snprintf(o->message, sizeof o->message, "%s", msg);
    }
    mox_error_release(last);
    return false;
}

/* Waits, then checks the op's status; drops it. */
static bool run_op(outcome *o, mox_op *op)
{
    mox_status st = mox_op_wait(op);
    bool ok = st == MOX_OK || failed(o, st, mox_result_error(mox_op_result(op)));
    mox_op_drop(op);
    return ok;
}

static mox_status record(void *ctx, mox_batch *b)
{
    mox_buffer **bufs = ctx;
    mox_device *dev = mox_buffer_device(bufs[0]);
    mox_launch_config c = {{1, 1, 1}, {N, 1, 1}, 0};
    mox_status st = mox_batch_push(b, conf_scale(dev, c, bufs[0], bufs[1], 2.0f, N));
    if (st == MOX_OK)
        st = mox_batch_push(b, conf_add(dev, c, bufs[0], bufs[1], bufs[2], N));
    return st;
}

static mox_status then_step(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    mox_buffer *buf = mox_result_buffer(in, 0);
    mox_launch_config c = {{1, 1, 1}, {N, 1, 1}, 0};
    *next = conf_step(mox_buffer_device(buf), c, buf, N);
    return MOX_OK;
}

/* Continues with a then op (a step, then then_step): the chain takes it
 * over (then.c). */
static mox_status then_step_nested(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    mox_buffer *buf = mox_result_buffer(in, 0);
    mox_launch_config c = {{1, 1, 1}, {N, 1, 1}, 0};
    mox_op *step = conf_step(mox_buffer_device(buf), c, buf, N);
    mox_status st = mox_op_then(step, then_step, NULL, next);
    if (st != MOX_OK)
        mox_op_drop(step);
    return st;
}

static mox_status map_sum(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    (void)ctx;
    const float *v = mox_result_bytes(in, NULL);
    float *sum = malloc(sizeof *sum);
    if (!sum)
        return MOX_ERR_OUT_OF_MEMORY;
    *sum = 0;
    for (int i = 0; i < N; i++)
        *sum += v[i];
    *value = sum;
    *destroy = free;
    return MOX_OK;
}

/* A launch of a module nobody used yet: registry, hashing, preparation. */
static bool launch_fresh(outcome *o, mox_device *dev, const mox_module_desc *m, mox_buffer *out)
{
    float value = 5.0f;
    uint32_t n = N;
    mox_arg args[3] = {MOX_ARG_WRITE(out), MOX_ARG_VALUE(&value, &mox_type_f32),
                       MOX_ARG_VALUE(&n, &mox_type_u32)};
    mox_launch_config c = {{1, 1, 1}, {N, 1, 1}, 0};
    return run_op(o, mox_launch_generated(dev, m, kernel_index("fill"), c, args, 3));
}

static bool chain_and_read(outcome *o, mox_buffer **bufs)
{
    mox_device *dev = mox_buffer_device(bufs[0]);
    mox_launch_config c = {{1, 1, 1}, {N, 1, 1}, 0};
    mox_op *chain = NULL, *shared = NULL, *clone = NULL, *mapped = NULL;
    mox_op *first = conf_step(dev, c, bufs[3], N); /* 5 -> 11 */
    mox_status st = mox_op_then(first, then_step, NULL, &chain);
    if (st != MOX_OK) {
        mox_op_drop(first);
        return failed(o, st, NULL);
    }
    mox_op *longer = NULL; /* a then of a then: merged into one op */
    if ((st = mox_op_then(chain, then_step_nested, NULL, &longer)) != MOX_OK) {
        mox_op_drop(chain);
        return failed(o, st, NULL);
    }
    chain = longer;
    if ((st = mox_op_share(chain, &shared)) != MOX_OK) {
        mox_op_drop(chain);
        return failed(o, st, NULL);
    }
    if ((st = mox_op_clone(shared, &clone)) != MOX_OK) {
        mox_op_drop(shared);
        return failed(o, st, NULL);
    }
    bool ok = run_op(o, clone); /* 11 -> 23 -> 47 -> 95 */
    if (!run_op(o, shared) || !ok)
        return false;
    mox_op *rb = mox_buffer_readback(bufs[3]);
    if ((st = mox_op_map(rb, map_sum, NULL, &mapped)) != MOX_OK) {
        mox_op_drop(rb);
        return failed(o, st, NULL);
    }
    st = mox_op_wait(mapped);
    if (st == MOX_OK)
        assert_true(*(float *)mox_result_value(mox_op_result(mapped)) == 95.0f * N);
    ok = st == MOX_OK || failed(o, st, mox_result_error(mox_op_result(mapped)));
    mox_op_drop(mapped);
    return ok;
}

static bool check_values(outcome *o, mox_buffer **bufs)
{
    float got[N];
    mox_status st = mox_buffer_read(bufs[2], 0, N, got);
    if (st != MOX_OK)
        return failed(o, st, NULL);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == 3.0f * (float)i); /* i + 2i */
    return true;
}

/* mox_buffer_upload and mox_buffer_fill over bufs[0], whose readers (the
 * sequence) finished: its first half uploaded, its second half filled. */
static bool upload_and_fill(outcome *o, mox_buffer **bufs)
{
    float half[N / 2], seven = 7.0f, got[N];
    for (int i = 0; i < N / 2; i++)
        half[i] = -(float)i;
    if (!run_op(o, mox_buffer_upload(bufs[0], 0, N / 2, half)) ||
        !run_op(o, mox_buffer_fill(bufs[0], N / 2, N / 2, &seven)))
        return false;
    mox_status st = mox_buffer_read(bufs[0], 0, N, got);
    if (st != MOX_OK)
        return failed(o, st, NULL);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == (i < N / 2 ? -(float)i : 7.0f));
    return true;
}

/* The whole scenario on `m` (a module descriptor this process may or may
 * not have used yet). */
static outcome scenario(const mox_module_desc *m)
{
    outcome o = {false, MOX_OK, ""};
    mox_device *dev = NULL;
    mox_buffer *bufs[4] = {NULL, NULL, NULL, NULL};
    float ramp[N];
    for (int i = 0; i < N; i++)
        ramp[i] = (float)i;
    mox_device_options opts = {.backend = MOX_BACKEND_AUTO, .cpu_threads = 2};
    mox_status st = mox_device_open_with(&opts, &dev);
    if (st != MOX_OK) {
        failed(&o, st, NULL);
        return o;
    }
    bool ok = true;
    for (int i = 0; ok && i < 4; i++)
        if ((st = mox_buffer_create_from(dev, &mox_type_f32, N, ramp, &bufs[i])) != MOX_OK)
            ok = failed(&o, st, NULL);
    ok = ok && launch_fresh(&o, dev, m, bufs[3]);
    ok = ok && run_op(&o, mox_sequence(dev, record, bufs));
    ok = ok && check_values(&o, bufs);
    ok = ok && upload_and_fill(&o, bufs);
    ok = ok && chain_and_read(&o, bufs);
    for (int i = 0; i < 4; i++)
        mox_buffer_release(bufs[i]);
    mox_device_release(dev);
    o.ok = ok;
    return o;
}

static const char *const mode_names[] = {"off", "once", "from", "burst"};

/* Every allocation point k of the scenario in `mode`; returns the points. */
static long sweep(mox__fault_mode mode, long burst)
{
    long k, clean = 0, points = 0, failures = 0, absorbed = 0, runs = 0;
    for (k = 0; k < MAX_POINTS; k += stride) {
        const mox_module_desc *m = fresh_module();
        mox__testing_fault_arm(mode, k, burst);
        outcome o = scenario(m);
        long injected = mox__testing_fault_injected();
        mox__testing_fault_disarm();
        if (injected) {
            runs++;
            points = k + 1;
            if (o.ok)
                absorbed++; /* an allocation whose failure costs nothing but time */
            else
                failures++;
        }
        /* Memory is back: the same module (whose first use failed) works. */
        outcome again = scenario(m);
        if (!again.ok)
            fail_msg("%s at allocation %ld: the retry failed with %s: %s (the first run: %s: %s)",
                     mode_names[mode], k, mox_status_name(again.status), again.message,
                     mox_status_name(o.status), o.message);
        if (injected == 0 && o.ok && ++clean == 3)
            break; /* k is past the scenario's last allocation */
    }
    printf("%s%s: %ld allocation points, %ld tried (stride %ld): %ld failed cleanly, %ld ran "
           "through, every retry succeeded\n", mode_names[mode],
           mode == MOX__FAULT_BURST ? " (16)" : "", points, runs, stride, failures, absorbed);
    assert_true(k < MAX_POINTS);
    return points;
}

static void warm_up(void)
{
    /* libcrypto's one-time set-up happens at the first device open, before
     * the hook is armed: it does not survive a failed allocation
     * (docs/errors.md). */
    assert_true(scenario(fresh_module()).ok);
    assert_true(mox__testing_fault_reaches_dependencies());
}

static void fail_once(void **state)
{
    (void)state;
    warm_up();
    sweep(MOX__FAULT_ONCE, 1);
}

static void fail_from_k_on(void **state)
{
    (void)state;
    warm_up();
    sweep(MOX__FAULT_FROM, 0);
}

static void fail_burst_then_recover(void **state)
{
    (void)state;
    warm_up();
    sweep(MOX__FAULT_BURST, 16);
}

/* The registry's own regression: a module whose first launch failed for
 * lack of memory launches on this device and on a new one afterwards. */
static void failed_first_use_is_not_kept(void **state)
{
    (void)state;
    warm_up();
    long points = 0;
    for (long k = 0; k < MAX_POINTS; k += stride) {
        const mox_module_desc *m = fresh_module();
        mox_device *dev = NULL, *other = NULL;
        mox_buffer *out = NULL, *out2 = NULL;
        mox_device_options opts = {.backend = MOX_BACKEND_AUTO, .cpu_threads = 2};
        assert_int_equal(mox_device_open_with(&opts, &dev), MOX_OK);
        assert_int_equal(mox_device_open_with(&opts, &other), MOX_OK);
        assert_int_equal(mox_buffer_create(dev, &mox_type_f32, N, &out), MOX_OK);
        assert_int_equal(mox_buffer_create(other, &mox_type_f32, N, &out2), MOX_OK);
        outcome o = {false, MOX_OK, ""};
        mox__testing_fault_arm(MOX__FAULT_ONCE, k, 1);
        bool ok = launch_fresh(&o, dev, m, out);
        long injected = mox__testing_fault_injected();
        mox__testing_fault_disarm();
        outcome again = {false, MOX_OK, ""};
        if (!launch_fresh(&again, dev, m, out) || !launch_fresh(&again, other, m, out2))
            fail_msg("allocation %ld: after \"%s\", the module stays broken: %s", k, o.message,
                     again.message);
        mox_buffer_release(out);
        mox_buffer_release(out2);
        mox_device_release(dev);
        mox_device_release(other);
        if (ok && injected == 0)
            break;
        points = k + 1;
    }
    printf("first launch of a module: %ld allocation points, each retried on two devices\n", points);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(failed_first_use_is_not_kept),
        cmocka_unit_test(fail_once),
        cmocka_unit_test(fail_from_k_on),
        cmocka_unit_test(fail_burst_then_recover),
    };
    static const char *const names[] = {"first_use", "once", "from", "burst"};
    struct CMUnitTest chosen[4];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = atol(argv[++i]);
            stride = stride < 1 ? 1 : stride;
            continue;
        }
        for (size_t t = 0; t < 4; t++)
            if (strcmp(argv[i], names[t]) == 0)
                chosen[n++] = all[t];
    }
    if (n == 0)
        return cmocka_run_group_tests(all, NULL, NULL);
    return _cmocka_run_group_tests("fault_runtime", chosen, n, NULL, NULL);
}
