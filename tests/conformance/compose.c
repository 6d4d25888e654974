/* compose.c - rule A7: then (fallible continuation on success), map (CPU
 * transform), share/clone (one op, many consumers, the same result
 * pointer); an error skips every later stage and comes out at the end. */
#include <stdlib.h>
#include <string.h>

#include "core/testing.h"
#include "support.h"

static mox_device *dev;

static int setup(void **state)
{
    (void)state;
    dev = conf_open();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(dev);
    return 0;
}

typedef struct stage_ctx {
    int calls;
    mox_buffer *out;
    mox_status ret;
    bool give_null;
} stage_ctx;

/* Continues with out = in(result buffer 1) * 10. */
static mox_status times_ten(void *p, const mox_result *in, mox_op **next)
{
    stage_ctx *c = p;
    c->calls++;
    if (c->ret != MOX_OK)
        return c->ret;
    if (c->give_null) {
        *next = NULL;
        return MOX_OK;
    }
    mox_buffer *prev = mox_result_buffer(in, 1);
    *next = conf_scale(dev, conf_cfg(mox_buffer_length(prev)), prev, c->out, 10.0f,
                       (uint32_t)mox_buffer_length(prev));
    return MOX_OK;
}

static void then_chains_on_success(void **state)
{
    (void)state;
    mox_buffer *in = conf_ramp(dev, 100, 1.0f, 0.0f), *mid = conf_zeros(dev, 100), *out = conf_zeros(dev, 100);
    stage_ctx c1 = {0, out, MOX_OK, false};
    mox_op *first = conf_scale(dev, conf_cfg(100), in, mid, 3.0f, 100);
    mox_op *chain = NULL;
    assert_int_equal(mox_op_then(first, times_ten, &c1, &chain), MOX_OK);
    assert_int_equal(c1.calls, 0); /* nothing runs before driving */
    assert_int_equal(conf_drive(chain), MOX_OK);
    assert_int_equal(c1.calls, 1);
    /* The chain's result is the last stage's: it yields that launch's args. */
    assert_ptr_equal(mox_result_buffer(mox_op_result(chain), 1), out);
    mox_op_drop(chain);
    assert_true(conf_read1(out, 99) == 30.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
}

/* An asynchronous loop: each step's callback continues with a new then
 * op (negate in place, then this callback again), LOOP_STEPS times, then
 * a readback. However many steps ran, the then op waits on a launch, not
 * on a then op (each poll walked, and recursed through, one more level
 * per step), and it ends with the last op's result. */
enum { LOOP_STEPS = 3001 }; /* odd: the values end negated */
typedef struct loop_ctx {
    int left, calls;
} loop_ctx;

static mox_status loop_step(void *ctx, const mox_result *in, mox_op **next)
{
    loop_ctx *c = ctx;
    c->calls++;
    mox_buffer *b = mox_result_buffer(in, 1);
    if (--c->left == 0) {
        *next = mox_buffer_readback(b);
        return MOX_OK;
    }
    return mox_op_then(conf_scale(dev, conf_cfg(4), b, b, -1.0f, 4), loop_step, c, next);
}

static void continuation_loop_stays_shallow(void **state)
{
    (void)state;
    mox_buffer *b = conf_ramp(dev, 4, 1.0f, 1.0f); /* 1, 2, 3, 4 */
    loop_ctx c = {LOOP_STEPS, 0};
    mox_op *loop = NULL;
    assert_int_equal(mox_op_then(conf_scale(dev, conf_cfg(4), b, b, -1.0f, 4), loop_step, &c, &loop), MOX_OK);
    conf_flag f;
    conf_flag_init(&f);
    uint32_t deepest = 0;
    for (;;) {
        int seen = conf_flag_calls(&f);
        if (mox_op_poll(loop, conf_flag_waker(&f)) == MOX_READY)
            break;
        uint32_t depth = mox__testing_then_depth(loop);
        deepest = depth > deepest ? depth : deepest;
        if (!conf_flag_wait(&f, seen, 60000))
            fail_msg("the loop stayed PENDING without its waker being called");
    }
    conf_flag_destroy(&f);
    assert_int_equal(c.calls, LOOP_STEPS);
    assert_int_equal(deepest, 1); /* the returned then ops are taken over */
    const mox_result *r = mox_op_result(loop);
    assert_int_equal(mox_result_status(r), MOX_OK);
    size_t size = 0;
    const float *v = mox_result_bytes(r, &size);
    assert_int_equal(size, 4 * sizeof(float));
    /* LOOP_STEPS negations, each after the one before */
    assert_true(v[0] == -1.0f && v[3] == -4.0f);
    mox_op_drop(loop);
    mox_buffer_release(b);
}

/* A chain built up front, chain = then(chain, fn) CHAIN_STEPS times: one
 * then op (no nesting to walk or recurse through), its callbacks run in
 * order, each on the previous one's result; an error in the middle skips
 * the rest. */
enum { CHAIN_STEPS = 3001 };
typedef struct chain_ctx {
    int calls, fail_at;
} chain_ctx;

static mox_status chain_step(void *ctx, const mox_result *in, mox_op **next)
{
    chain_ctx *c = ctx;
    if (++c->calls == c->fail_at)
        return MOX_ERR_IO;
    mox_buffer *b = mox_result_buffer(in, 1);
    *next = conf_scale(dev, conf_cfg(4), b, b, -1.0f, 4);
    return MOX_OK;
}

static mox_op *chain_up_front(mox_buffer *b, chain_ctx *c)
{
    mox_op *chain = conf_scale(dev, conf_cfg(4), b, b, -1.0f, 4);
    for (int i = 0; i < CHAIN_STEPS - 1; i++) {
        mox_op *longer = NULL;
        assert_int_equal(mox_op_then(chain, chain_step, c, &longer), MOX_OK);
        chain = longer;
        assert_int_equal(mox__testing_then_depth(chain), 1);
    }
    return chain;
}

static void chain_built_up_front_is_one_op(void **state)
{
    (void)state;
    mox_buffer *b = conf_ramp(dev, 4, 1.0f, 1.0f); /* 1, 2, 3, 4 */
    chain_ctx c = {0, 0};
    mox_op *chain = chain_up_front(b, &c);
    assert_int_equal(conf_drive(chain), MOX_OK);
    assert_int_equal(c.calls, CHAIN_STEPS - 1);
    assert_ptr_equal(mox_result_buffer(mox_op_result(chain), 1), b);
    mox_op_drop(chain);
    assert_true(conf_read1(b, 0) == -1.0f && conf_read1(b, 3) == -4.0f); /* odd: negated */

    chain_ctx f = {0, 1000};
    chain = chain_up_front(b, &f);
    assert_int_equal(conf_drive(chain), MOX_ERR_CALLBACK);
    assert_int_equal(f.calls, 1000); /* none after the failing one */
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(chain))), "MOX_ERR_IO"));
    mox_op_drop(chain);
    /* from -1 .. -4, 1000 launches ran (the first and 999 callbacks' ones): even */
    assert_true(conf_read1(b, 0) == -1.0f && conf_read1(b, 3) == -4.0f);
    mox_buffer_release(b);
}

static void failing_first_stage_skips_the_rest(void **state)
{
    (void)state;
    float bad[4] = {1, 2, -7, 4};
    mox_buffer *in = conf_buffer(dev, bad, 4), *mid = conf_zeros(dev, 4), *out = conf_zeros(dev, 4);
    stage_ctx c1 = {0, out, MOX_OK, false}, c2 = {0, out, MOX_OK, false};
    mox_op *a = NULL, *b = NULL;
    assert_int_equal(mox_op_then(conf_fail_if_negative(dev, conf_cfg(4), in, mid, 4), times_ten, &c1, &a), MOX_OK);
    assert_int_equal(mox_op_then(a, times_ten, &c2, &b), MOX_OK);
    assert_int_equal(mox_op_wait(b), MOX_ERR_KERNEL_FAILED);
    assert_int_equal(c1.calls, 0);
    assert_int_equal(c2.calls, 0);
    const mox_error *e = mox_result_error(mox_op_result(b));
    assert_string_equal(mox_error_kernel(e), "fail_if_negative");
    assert_int_equal(mox_error_fail_code(e), 7);
    assert_non_null(strstr(mox_error_message(e), "mox_fail(7)"));
    mox_op_drop(b);
    assert_true(conf_read1(out, 0) == 0.0f);
    mox_buffer_release(in);
    mox_buffer_release(mid);
    mox_buffer_release(out);
}

static void callback_errors(void **state)
{
    (void)state;
    mox_buffer *in = conf_zeros(dev, 4), *mid = conf_zeros(dev, 4);
    stage_ctx c = {0, mid, MOX_ERR_OUT_OF_RANGE, false};
    mox_op *t = NULL;
    assert_int_equal(mox_op_then(conf_scale(dev, conf_cfg(4), in, mid, 1.0f, 4), times_ten, &c, &t), MOX_OK);
    assert_int_equal(mox_op_wait(t), MOX_ERR_CALLBACK);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(t))), "MOX_ERR_OUT_OF_RANGE"));
    mox_op_drop(t);
    stage_ctx n = {0, mid, MOX_OK, true};
    assert_int_equal(mox_op_then(conf_scale(dev, conf_cfg(4), in, mid, 1.0f, 4), times_ten, &n, &t), MOX_OK);
    assert_int_equal(mox_op_wait(t), MOX_ERR_CALLBACK);
    assert_non_null(strstr(mox_error_message(mox_result_error(mox_op_result(t))), "no op"));
    mox_op_drop(t);
    /* A value that is no mox_status keeps its number in the message. */
    stage_ctx odd = {0, mid, (mox_status)999, false};
    assert_int_equal(mox_op_then(conf_scale(dev, conf_cfg(4), in, mid, 1.0f, 4), times_ten, &odd, &t), MOX_OK);
    assert_int_equal(mox_op_wait(t), MOX_ERR_CALLBACK);
    assert_string_equal(mox_error_message(mox_result_error(mox_op_result(t))),
                        "then callback failed with 999 (not a mox_status value)");
    mox_op_drop(t);
    mox_buffer_release(in);
    mox_buffer_release(mid);
}

static int destroyed;
static void count_destroy(void *v)
{
    free(v);
    destroyed++;
}

static mox_status sum_map(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    int *calls = ctx;
    (*calls)++;
    size_t size = 0;
    const float *v = mox_result_bytes(in, &size);
    float *sum = malloc(sizeof *sum);
    *sum = 0;
    for (size_t i = 0; i < size / sizeof(float); i++)
        *sum += v[i];
    *value = sum;
    *destroy = count_destroy;
    return MOX_OK;
}

static mox_status failing_map(void *ctx, const mox_result *in, void **value, void (**destroy)(void *))
{
    (void)ctx;
    (void)in;
    (void)value;
    (void)destroy;
    return MOX_ERR_STATE;
}

static void map_transforms_on_the_cpu(void **state)
{
    (void)state;
    mox_buffer *b = conf_ramp(dev, 10, 1.0f, 1.0f); /* 1..10 */
    int calls = 0;
    mox_op *m = NULL;
    destroyed = 0;
    assert_int_equal(mox_op_map(mox_buffer_readback(b), sum_map, &calls, &m), MOX_OK);
    assert_int_equal(mox_op_wait(m), MOX_OK);
    assert_true(*(float *)mox_result_value(mox_op_result(m)) == 55.0f);
    assert_int_equal(calls, 1);
    const mox_result *keep = mox_result_retain(mox_op_result(m));
    mox_op_drop(m);
    assert_int_equal(destroyed, 0);
    mox_result_release(keep);
    assert_int_equal(destroyed, 1);

    assert_int_equal(mox_op_map(mox_buffer_readback(b), failing_map, NULL, &m), MOX_OK);
    assert_int_equal(mox_op_wait(m), MOX_ERR_CALLBACK);
    mox_op_drop(m);

    /* An error before the map skips it. */
    calls = 0;
    assert_int_equal(mox_op_map(mox_buffer_readback(NULL), sum_map, &calls, &m), MOX_OK);
    assert_int_equal(mox_op_wait(m), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(calls, 0);
    mox_op_drop(m);
    mox_buffer_release(b);
}

typedef struct clone_job {
    mox_op *op;
    mox_status st;
    const mox_result *r;
} clone_job;

static void *drive_clone(void *p)
{
    clone_job *j = p;
    j->st = mox_op_wait(j->op);
    j->r = mox_op_result(j->op);
    return NULL;
}

static void shared_clones_get_the_same_result(void **state)
{
    (void)state;
    for (int failing = 0; failing < 2; failing++) {
        float vals[3] = {1, failing ? -3.0f : 2.0f, 3};
        mox_buffer *in = conf_buffer(dev, vals, 3), *out = conf_zeros(dev, 3);
        mox_op *s = NULL;
        assert_int_equal(mox_op_share(conf_fail_if_negative(dev, conf_cfg(3), in, out, 3), &s), MOX_OK);
        enum { N = 4 };
        clone_job jobs[N];
        pthread_t th[N];
        jobs[0].op = s;
        for (int i = 1; i < N; i++)
            assert_int_equal(mox_op_clone(s, &jobs[i].op), MOX_OK);
        for (int i = 0; i < N; i++)
            pthread_create(&th[i], NULL, drive_clone, &jobs[i]);
        for (int i = 0; i < N; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < N; i++) {
            assert_int_equal(jobs[i].st, failing ? MOX_ERR_KERNEL_FAILED : MOX_OK);
            assert_ptr_equal(jobs[i].r, jobs[0].r);
            assert_ptr_equal(mox_result_error(jobs[i].r), mox_result_error(jobs[0].r));
        }
        /* A clone made after resolution gets it too. */
        mox_op *late = NULL;
        assert_int_equal(mox_op_clone(jobs[1].op, &late), MOX_OK);
        assert_int_equal(mox_op_poll(late, (mox_waker){NULL, NULL}), MOX_READY);
        assert_ptr_equal(mox_op_result(late), jobs[0].r);
        mox_op_drop(late);
        for (int i = 0; i < N; i++)
            mox_op_drop(jobs[i].op);
        mox_buffer_release(in);
        mox_buffer_release(out);
    }
}

static void misuse_consumes_nothing(void **state)
{
    (void)state;
    mox_buffer *b = conf_zeros(dev, 4);
    mox_op *op = conf_fill(dev, conf_cfg(4), b, 1.0f, 4), *out = (mox_op *)1;
    assert_int_equal(mox_op_then(op, NULL, NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    assert_null(out);
    assert_int_equal(mox_op_map(op, NULL, NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_then(NULL, times_ten, NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_then(op, times_ten, NULL, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_share(NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_share(op, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_op_clone(op, &out), MOX_ERR_INVALID_ARGUMENT); /* not shared */
    assert_int_equal(mox_op_clone(NULL, &out), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_op_clone: shared is NULL"));
    assert_int_equal(mox_op_clone(op, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_op_clone: out is NULL"));
    assert_int_equal(conf_run(op), MOX_OK); /* still ours, still works */
    assert_true(conf_read1(b, 3) == 1.0f);
    mox_buffer_release(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(then_chains_on_success),
        cmocka_unit_test(continuation_loop_stays_shallow),
        cmocka_unit_test(chain_built_up_front_is_one_op),
        cmocka_unit_test(failing_first_stage_skips_the_rest),
        cmocka_unit_test(callback_errors),
        cmocka_unit_test(map_transforms_on_the_cpu),
        cmocka_unit_test(shared_clones_get_the_same_result),
        cmocka_unit_test(misuse_consumes_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
