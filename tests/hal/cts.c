/* cts.c - the HAL contract suite: what every backend must do behind
 * src/hal/hal.h, tested on the backend alone (no runtime core): barriers
 * inside a command buffer, FIFO queues, waits on other queues' semaphore
 * points, failure gating inside and across executions, completion order
 * and semaphore values, a failed semaphore, transfers; across two devices
 * of the backend: waits on another device's point, copies from its memory
 * gated by its dispatches, its failed semaphore. Written once, run per
 * backend (tests/hal/CMakeLists.txt), like IREE's CTS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "core/semaphore.h"
#include "cts.h"

enum { N = 200 };

static cts T;
static cts U;       /* device 1 of the same backend, for the cases across devices */
static bool have_u;

static void expect_on(cts *t, void *address, float want)
{
    float v[N];
    cts_read(t, address, v, N);
    for (uint32_t i = 0; i < N; i++)
        if (v[i] != want)
            fail_msg("element %u is %g, want %g", i, (double)v[i], (double)want);
}

static void expect_all(void *address, float want) { expect_on(&T, address, want); }

static uint32_t fill(cts *t, cts_cb *cb, void *out, float value)
{
    uint32_t i = cts_dispatch(t, cb, K_FILL, N);
    cts_ptr(cb, out);
    cts_f32(cb, value);
    cts_u32(cb, N);
    return i;
}

static uint32_t add(cts *t, cts_cb *cb, void *in, void *out, float value)
{
    uint32_t i = cts_dispatch(t, cb, K_ADD, N);
    cts_ptr(cb, in);
    cts_ptr(cb, out);
    cts_f32(cb, value);
    cts_u32(cb, N);
    return i;
}

static uint32_t failing(cts *t, cts_cb *cb, void *out, uint32_t code)
{
    uint32_t i = cts_dispatch(t, cb, K_FAIL, N);
    cts_ptr(cb, out);
    cts_u32(cb, code);
    cts_u32(cb, N);
    return i;
}

static uint32_t slow(cts *t, cts_cb *cb, void *in, void *out)
{
    uint32_t i = cts_dispatch(t, cb, K_SLOW, N);
    cts_ptr(cb, in);
    cts_ptr(cb, out);
    cts_u32(cb, N);
    cts_u32(cb, 200000);
    return i;
}

/* A chain x -> y -> z through barriers; an independent dispatch too. */
static void barriers_order_commands(void **state)
{
    (void)state;
    void *x = cts_buffer(&T, N, 0), *y = cts_buffer(&T, N, 0), *z = cts_buffer(&T, N, 0);
    void *w = cts_buffer(&T, N, 0);
    cts_cb cb;
    cts_cb_init(&T, &cb);
    uint32_t a = fill(&T, &cb, x, 3.0f);
    uint32_t b = add(&T, &cb, x, y, 1.0f);
    cts_pred(&cb, a);
    add(&T, &cb, y, z, 1.0f);
    cts_pred(&cb, b);
    fill(&T, &cb, w, 9.0f);
    cts_execute(&T, &cb, 0);
    cts_wait(&cb);
    assert_int_equal(cb.status, MOX_OK);
    for (uint32_t i = 0; i < cb.pub.count; i++)
        assert_int_equal(cb.d[i].state, MOX_DISPATCH_OK);
    expect_all(z, 5.0f);
    expect_all(w, 9.0f);
    cts_cb_fini(&cb);
    cts_free(&T, x), cts_free(&T, y), cts_free(&T, z), cts_free(&T, w);
}

/* Two executions on one queue, no wait list: FIFO gives the order; each
 * completes in order and its semaphore shows its value. */
static void queues_are_fifo(void **state)
{
    (void)state;
    void *x = cts_buffer(&T, N, 1), *y = cts_buffer(&T, N, 0);
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&T, &second);
    slow(&T, &first, x, y);                /* y = 1, late */
    add(&T, &second, y, y, 10.0f);         /* y += 10: after the first */
    cts_execute(&T, &first, 1);
    cts_execute(&T, &second, 1);
    cts_wait(&second);
    cts_wait(&first);
    assert_true(first.order < second.order);
    assert_true(first.sem_value_at_completion >= first.pub.signal.value);
    assert_true(mox__semaphore_reached(&T.sems[1], second.pub.signal.value));
    expect_all(y, 11.0f);
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, x), cts_free(&T, y);
}

/* Queue 2 waits on a point of queue 3, which is still running. */
static void waits_order_other_queues(void **state)
{
    (void)state;
    if (T.info.queue_count < 4)
        skip();
    void *x = cts_buffer(&T, N, 4), *y = cts_buffer(&T, N, 0), *z = cts_buffer(&T, N, 0);
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&T, &second);
    slow(&T, &first, x, y);
    add(&T, &second, y, z, 0.5f);
    cts_execute(&T, &first, 3);
    cts_wait_for(&second, &first); /* its signal point, known once executed */
    cts_execute(&T, &second, 2);
    cts_wait(&second);
    cts_wait(&first);
    assert_int_equal(second.status, MOX_OK);
    assert_true(first.order < second.order);
    expect_all(z, 4.5f);
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, x), cts_free(&T, y), cts_free(&T, z);
}

/* A failed dispatch gates its dependents; independent ones still run. */
static void failure_gates_dependents(void **state)
{
    (void)state;
    void *f = cts_buffer(&T, N, 0), *y = cts_buffer(&T, N, 7), *w = cts_buffer(&T, N, 0);
    cts_cb cb;
    cts_cb_init(&T, &cb);
    uint32_t a = failing(&T, &cb, f, 42);
    add(&T, &cb, f, y, 1.0f);
    cts_pred(&cb, a);
    fill(&T, &cb, w, 2.0f);
    cts_execute(&T, &cb, 0);
    cts_wait(&cb);
    assert_int_equal(cb.status, MOX_OK); /* states, not an error */
    assert_int_equal(cb.d[0].state, MOX_DISPATCH_FAILED);
    assert_int_equal(cb.d[0].fail_code, 42);
    assert_int_equal(cb.d[1].state, MOX_DISPATCH_GATED);
    assert_int_equal(cb.d[2].state, MOX_DISPATCH_OK);
    expect_all(f, 1.0f); /* the failed one ran */
    expect_all(y, 7.0f); /* the gated one did not */
    expect_all(w, 2.0f);
    cts_cb_fini(&cb);
    cts_free(&T, f), cts_free(&T, y), cts_free(&T, w);
}

/* A gate on a dispatch of an earlier execution (another queue) that
 * failed: the later dispatch does not run; an ungated one does. */
static void failure_gates_across_executions(void **state)
{
    (void)state;
    void *f = cts_buffer(&T, N, 0), *y = cts_buffer(&T, N, 5), *w = cts_buffer(&T, N, 0);
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&T, &second);
    failing(&T, &first, f, 9);
    add(&T, &second, f, y, 1.0f);
    cts_gate(&second, &first, 0);
    fill(&T, &second, w, 3.0f);
    uint32_t q2 = T.info.queue_count > 1 ? 1 : 0;
    cts_execute(&T, &first, 0);
    cts_wait_for(&second, &first);
    cts_execute(&T, &second, q2);
    cts_wait(&second);
    cts_wait(&first);
    assert_int_equal(first.d[0].state, MOX_DISPATCH_FAILED);
    assert_int_equal(second.d[0].state, MOX_DISPATCH_GATED);
    assert_int_equal(second.d[1].state, MOX_DISPATCH_OK);
    assert_true(first.order < second.order); /* completes after what it waited for */
    expect_all(y, 5.0f);
    expect_all(w, 3.0f);
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, f), cts_free(&T, y), cts_free(&T, w);
}

/* A wait on a failed semaphore: the execution completes with that failure
 * and runs nothing (no waiter hangs on a lost device). */
static void failed_semaphore_fails_its_waiters(void **state)
{
    (void)state;
    if (T.info.queue_count < 2)
        skip();
    mox__semaphore dead;
    mox__semaphore_init(&dead, T.be, 0);
    mox__semaphore_fail(&dead, mox__error_new(MOX_ERR_DEVICE_LOST, "lost on purpose"));
    void *y = cts_buffer(&T, N, 6);
    cts_cb cb;
    cts_cb_init(&T, &cb);
    fill(&T, &cb, y, 1.0f);
    cb.waits[cb.pub.wait_count++] = (mox__sem_point){&dead, 1};
    cts_execute(&T, &cb, 1);
    cts_wait(&cb);
    assert_int_equal(cb.status, MOX_ERR_DEVICE_LOST);
    assert_non_null(strstr(cb.message, "lost on purpose"));
    assert_int_equal(cb.d[0].state, MOX_DISPATCH_GATED);
    expect_all(y, 6.0f);
    cts_cb_fini(&cb);
    cts_free(&T, y);
    mox__semaphore_fini(&dead);
}

/* A download is ordered after the dispatch before it and never gated. */
static void transfers_follow_barriers(void **state)
{
    (void)state;
    void *f = cts_buffer(&T, N, 0);
    float host[N];
    memset(host, 0, sizeof host);
    cts_cb cb;
    cts_cb_init(&T, &cb);
    uint32_t a = failing(&T, &cb, f, 3);
    cts_download(&cb, f, host, sizeof host);
    cts_pred(&cb, a);
    cts_execute(&T, &cb, 0);
    cts_wait(&cb);
    assert_int_equal(cb.d[1].state, MOX_DISPATCH_OK);
    for (uint32_t i = 0; i < N; i++)
        assert_true(host[i] == 1.0f);
    cts_cb_fini(&cb);
    cts_free(&T, f);
}

/* An UPLOAD from memory the backend lends (host_alloc, where it has the
 * hook: both hooks or neither) is ordered before the dispatch after it,
 * execution after execution of one shape (on CUDA the later ones graphs
 * whose upload node reads that memory in place). The memory is given
 * back after each wait. */
static void lent_uploads_feed_the_dispatch_after_them(void **state)
{
    (void)state;
    assert_true(!T.be->vt->host_alloc == !T.be->vt->host_free);
    void *x = cts_buffer(&T, N, 0), *y = cts_buffer(&T, N, 0);
    for (int round = 0; round < 3; round++) {
        float host[N];
        for (uint32_t i = 0; i < N; i++)
            host[i] = (float)(i + 7u * (uint32_t)round);
        void *lent = NULL;
        cts_cb cb;
        cts_cb_init(&T, &cb);
        uint32_t u = cts_upload(&T, &cb, x, host, sizeof host, &lent);
        memset(host, 0xff, sizeof host); /* the upload reads its own copy */
        add(&T, &cb, x, y, 0.5f);
        cts_pred(&cb, u);
        cts_execute(&T, &cb, 0);
        cts_wait(&cb);
        assert_int_equal(cb.d[0].state, MOX_DISPATCH_OK);
        assert_int_equal(cb.d[1].state, MOX_DISPATCH_OK);
        cts_upload_done(&T, lent);
        float got[N];
        cts_read(&T, y, got, N);
        for (uint32_t i = 0; i < N; i++)
            if (got[i] != (float)(i + 7u * (uint32_t)round) + 0.5f)
                fail_msg("round %d: y[%u] = %g", round, i, (double)got[i]);
        cts_cb_fini(&cb);
    }
    cts_free(&T, x), cts_free(&T, y);
}

/* FILL repeats its element (a 4-byte one, a 12-byte one over part of a
 * buffer) and is device work: gated by a failed predecessor in its
 * execution and by a failed gate of an earlier one. */
static void fills_repeat_their_element_and_are_gated(void **state)
{
    (void)state;
    void *f = cts_buffer(&T, N, 0), *x = cts_buffer(&T, N, 1), *w = cts_buffer(&T, N, 8);
    void *y = cts_buffer(&T, N, 6);
    const float two = 2.5f, three[3] = {-1.0f, 0.5f, 4.0f};
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&T, &second);
    uint32_t a = failing(&T, &first, f, 5);
    cts_fill(&first, f, 4ull * N, &two, sizeof two);
    cts_pred(&first, a);
    cts_fill(&first, x, 4ull * N, &two, sizeof two);
    cts_fill(&first, w, 4ull * (N - 2), three, sizeof three); /* N - 2: a multiple of 3 */
    cts_fill(&second, y, 4ull * N, &two, sizeof two);
    cts_gate(&second, &first, 0);
    uint32_t q2 = T.info.queue_count > 1 ? 1 : 0;
    cts_execute(&T, &first, 0);
    cts_wait_for(&second, &first);
    cts_execute(&T, &second, q2);
    cts_wait(&second);
    cts_wait(&first);
    assert_int_equal(first.d[0].state, MOX_DISPATCH_FAILED);
    assert_int_equal(first.d[1].state, MOX_DISPATCH_GATED);
    assert_int_equal(first.d[2].state, MOX_DISPATCH_OK);
    assert_int_equal(first.d[3].state, MOX_DISPATCH_OK);
    assert_int_equal(second.d[0].state, MOX_DISPATCH_GATED);
    expect_all(f, 1.0f); /* what the failed dispatch wrote */
    expect_all(x, 2.5f);
    expect_all(y, 6.0f);
    float got[N];
    cts_read(&T, w, got, N);
    for (uint32_t i = 0; i < N; i++) {
        float want = i < N - 2 ? three[i % 3] : 8.0f;
        if (got[i] != want)
            fail_msg("element %u of the 12-byte fill is %g, want %g", i, (double)got[i],
                     (double)want);
    }
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, f), cts_free(&T, x), cts_free(&T, w), cts_free(&T, y);
}

/* ---- across devices: device 1's executions wait on device 0's points,
 * copy device 0's memory and are gated by its dispatches ---- */

/* Device 1 copies what device 0 is still computing: it waits for device
 * 0's point, on the device where the backend can, and completes after it. */
static void waits_on_another_devices_point(void **state)
{
    (void)state;
    if (!have_u)
        skip();
    void *x = cts_buffer(&T, N, 2), *y = cts_buffer(&T, N, 0);
    void *z = cts_buffer(&U, N, 0), *w = cts_buffer(&U, N, 0);
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&U, &second);
    slow(&T, &first, x, y);
    cts_execute(&T, &first, 0);
    cts_copy(&second, &T, y, z, 4ull * N);
    add(&U, &second, z, w, 0.5f);
    cts_pred(&second, 0);
    cts_wait_for(&second, &first);
    cts_execute(&U, &second, 1 % U.info.queue_count);
    cts_wait(&second);
    cts_wait(&first);
    assert_int_equal(second.status, MOX_OK);
    assert_int_equal(second.d[0].state, MOX_DISPATCH_OK);
    assert_true(first.order < second.order);
    expect_on(&U, z, 2.0f);
    expect_on(&U, w, 2.5f);
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, x), cts_free(&T, y), cts_free(&U, z), cts_free(&U, w);
}

/* A copy gated on device 0's dispatch that fails (after a slow one, so it
 * is still running when device 1's execution is handed over): the copy
 * and what depends on it are GATED; nothing is copied. */
static void copy_gated_by_another_devices_failure(void **state)
{
    (void)state;
    if (!have_u)
        skip();
    void *x = cts_buffer(&T, N, 1), *t = cts_buffer(&T, N, 0), *f = cts_buffer(&T, N, 0);
    void *z = cts_buffer(&U, N, 4), *w = cts_buffer(&U, N, 0);
    cts_cb first, second;
    cts_cb_init(&T, &first);
    cts_cb_init(&U, &second);
    slow(&T, &first, x, t);
    failing(&T, &first, f, 13);
    cts_pred(&first, 0);
    cts_execute(&T, &first, 0);
    cts_copy(&second, &T, f, z, 4ull * N);
    cts_gate(&second, &first, 1);
    add(&U, &second, z, w, 1.0f);
    cts_pred(&second, 0);
    cts_wait_for(&second, &first);
    cts_execute(&U, &second, 0);
    cts_wait(&second);
    cts_wait(&first);
    assert_int_equal(first.d[1].state, MOX_DISPATCH_FAILED);
    assert_int_equal(first.d[1].fail_code, 13);
    assert_int_equal(second.status, MOX_OK); /* states, not an error */
    assert_int_equal(second.d[0].state, MOX_DISPATCH_GATED);
    assert_int_equal(second.d[1].state, MOX_DISPATCH_GATED);
    assert_true(first.order < second.order);
    expect_on(&U, z, 4.0f);
    expect_on(&U, w, 0.0f);
    cts_cb_fini(&first);
    cts_cb_fini(&second);
    cts_free(&T, x), cts_free(&T, t), cts_free(&T, f), cts_free(&U, z), cts_free(&U, w);
}

/* Device 0's semaphore failed (device 0 lost): device 1's execution waiting
 * on it completes with that very failure and runs nothing. */
static void failed_semaphore_of_another_device(void **state)
{
    (void)state;
    if (!have_u)
        skip();
    mox__semaphore dead;
    mox__semaphore_init(&dead, T.be, 0);
    if (T.be->vt->semaphore_init)
        assert_null(T.be->vt->semaphore_init(T.be, &dead));
    mox_error *lost = mox__error_new(MOX_ERR_DEVICE_LOST, "device 0 lost on purpose");
    mox__semaphore_fail(&dead, mox_error_retain(lost));
    void *y = cts_buffer(&U, N, 6);
    cts_cb cb;
    cts_cb_init(&U, &cb);
    fill(&U, &cb, y, 1.0f);
    cb.waits[cb.pub.wait_count++] = (mox__sem_point){&dead, 1};
    cts_execute(&U, &cb, 0);
    cts_wait(&cb);
    assert_int_equal(cb.status, MOX_ERR_DEVICE_LOST);
    assert_ptr_equal(cb.error, lost); /* the same object: the core tells it is not U's loss */
    assert_int_equal(cb.d[0].state, MOX_DISPATCH_GATED);
    expect_on(&U, y, 6.0f);
    cts_cb_fini(&cb);
    cts_free(&U, y);
    mox_error_release(lost);
    if (T.be->vt->semaphore_fini)
        T.be->vt->semaphore_fini(T.be, &dead);
    mox__semaphore_fini(&dead);
}

int main(void)
{
    cts_open(&T);
    have_u = cts_open_ordinal(&U, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(barriers_order_commands),
        cmocka_unit_test(queues_are_fifo),
        cmocka_unit_test(waits_order_other_queues),
        cmocka_unit_test(failure_gates_dependents),
        cmocka_unit_test(failure_gates_across_executions),
        cmocka_unit_test(failed_semaphore_fails_its_waiters),
        cmocka_unit_test(transfers_follow_barriers),
        cmocka_unit_test(lent_uploads_feed_the_dispatch_after_them),
        cmocka_unit_test(waits_on_another_devices_point),
        cmocka_unit_test(copy_gated_by_another_devices_failure),
        cmocka_unit_test(fills_repeat_their_element_and_are_gated),
        cmocka_unit_test(failed_semaphore_of_another_device),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (have_u)
        cts_close(&U);
    cts_close(&T);
    return rc;
}
