/* alloc_failures.c - an allocation-failure loop: for every N, the runtime's
 * N-th host allocation fails once while a scenario runs (open a device,
 * create buffers, a batch of launches, a then-chain, a readback). Every
 * step must fail cleanly (a code, no crash, no hang) and, under
 * LeakSanitizer, nothing may leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "core/testing.h"
#include "rtk.h"

static mox_status stage2(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    mox_buffer *x = mox_result_buffer(in, 0), *y = mox_result_buffer(in, 1);
    mox_launch_config c;
    mox_status st = mox_launch_config_for_elements(64, 100, &c);
    if (st != MOX_OK)
        return st;
    *next = rtk_axpy(mox_buffer_device(x), c, x, y, 3.0f, 100);
    return MOX_OK;
}

static mox_status record(void *ctx, mox_batch *b)
{
    mox_buffer **bufs = ctx;
    mox_launch_config c;
    mox_status st = mox_launch_config_for_elements(64, 100, &c);
    if (st == MOX_OK)
        st = mox_batch_push(b, rtk_axpy(mox_buffer_device(bufs[0]), c, bufs[0], bufs[1], 2.0f, 100));
    if (st == MOX_OK)
        st = mox_batch_push(b, rtk_axpy(mox_buffer_device(bufs[0]), c, bufs[1], bufs[2], 1.0f, 100));
    return st;
}

/* Returns true when the whole scenario succeeded. */
static bool scenario(void)
{
    bool ok = false;
    mox_device *dev = NULL;
    mox_buffer *bufs[3] = {NULL, NULL, NULL};
    float ones[100];
    for (int i = 0; i < 100; i++)
        ones[i] = 1.0f;
    if (mox_device_open(&dev) != MOX_OK)
        return false;
    for (int i = 0; i < 3; i++)
        if (mox_buffer_create_from(dev, &mox_type_f32, 100, ones, &bufs[i]) != MOX_OK)
            goto out;
    mox_op *seq = mox_sequence(dev, record, bufs);
    mox_status st = mox_op_wait(seq);
    mox_op_drop(seq);
    if (st != MOX_OK)
        goto out;
    mox_launch_config c;
    if (mox_launch_config_for_elements(64, 100, &c) != MOX_OK)
        goto out;
    mox_op *chain = NULL, *shared = NULL, *clone = NULL;
    mox_op *first = rtk_axpy(dev, c, bufs[0], bufs[1], 1.0f, 100);
    if (mox_op_then(first, stage2, NULL, &chain) != MOX_OK) {
        mox_op_drop(first);
        goto out;
    }
    if (mox_op_share(chain, &shared) != MOX_OK) {
        mox_op_drop(chain);
        goto out;
    }
    if (mox_op_clone(shared, &clone) != MOX_OK) {
        mox_op_drop(shared);
        goto out;
    }
    st = mox_op_wait(clone);
    mox_op_drop(clone);
    mox_op_drop(shared);
    if (st != MOX_OK)
        goto out;
    mox_op *rb = mox_buffer_readback(bufs[1]);
    st = mox_op_wait(rb);
    if (st == MOX_OK) {
        const float *v = mox_result_bytes(mox_op_result(rb), NULL);
        /* y1 = 1 + 2*1 = 3, then +1 = 4, then +3*1 = 7 */
        ok = v[99] == 7.0f;
        assert_true(ok);
    }
    mox_op_drop(rb);
out:
    for (int i = 0; i < 3; i++)
        mox_buffer_release(bufs[i]);
    mox_device_release(dev);
    return ok;
}

static void every_allocation_can_fail(void **state)
{
    (void)state;
    assert_true(scenario()); /* loads the module, warms up */
    int successes = 0;
    long n;
    for (n = 0; n < 2000; n++) {
        mox__testing_fail_alloc_after(n);
        bool ok = scenario();
        mox__testing_fail_alloc_after(-1);
        successes = ok ? successes + 1 : 0;
        if (successes == 5)
            break; /* past the last allocation: the failure no longer lands */
    }
    printf("scenario ran %ld times\n", n + 1);
    assert_true(successes == 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
