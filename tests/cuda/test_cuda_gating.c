/* tests/cuda/test_cuda_gating.c - failure gating on the device (backend
 * only): mox_fail marks its dispatch FAILED with its code and raises the
 * host flag; dependents in the batch are GATED and do not run, independent
 * ones run; a clean batch is recognised without reading the status words; a
 * later batch gated on a failed dispatch of a batch still running is gated
 * on the device (also inside one coalesced launch), and so is one submitted
 * after that batch finished; an instance that saw a failure is reset before
 * it runs again; launches no failure can reach run the entries without the
 * gate check, and only those. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static fx F;
static CUdeviceptr a, b, c;

static unsigned long long stat(atomic_ullong *x)
{
    return atomic_load(x);
}

static void put(CUdeviceptr p, float v)
{
    fx_put(&F, p, &v, sizeof v);
}

static float get(CUdeviceptr p)
{
    float v;
    fx_get(&F, &v, p, sizeof v);
    return v;
}

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    a = fx_alloc(&F, 256 * 4);
    b = fx_alloc(&F, 256 * 4);
    c = fx_alloc(&F, 256 * 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, a);
    fx_free(&F, b);
    fx_free(&F, c);
    fx_close(&F);
    return 0;
}

/* [0] maybe_fail(a, code, spin)  [1] finish(a -> b) after 0  [2] finish(c -> c),
 * in blocks of `block` threads. */
static void fail_batch_of(fx_sub *s, uint32_t code, uint32_t spin, uint32_t block)
{
    fx_sub_init(s);
    fx_kernel(s, &F, FX_MAYBE_FAIL, 1, block);
    fx_ptr(s, a);
    fx_u32(s, code);
    fx_u32(s, spin);
    fx_kernel(s, &F, FX_FINISH, 1, block);
    fx_ptr(s, a);
    fx_ptr(s, b);
    fx_u32(s, 1);
    fx_pred(s, 0);
    fx_kernel(s, &F, FX_FINISH, 1, block);
    fx_ptr(s, c);
    fx_ptr(s, c);
    fx_u32(s, 1);
}

static void fail_batch(fx_sub *s, uint32_t code, uint32_t spin)
{
    fail_batch_of(s, code, spin, 64);
}

/* kernel `first`(from -> via), then finish(via -> to) after it, in blocks
 * of `block` threads. */
static void chain_batch(fx_sub *s, uint32_t first, CUdeviceptr from, CUdeviceptr via, CUdeviceptr to, uint32_t block)
{
    fx_sub_init(s);
    fx_kernel(s, &F, first, 1, block);
    fx_ptr(s, from);
    fx_ptr(s, via);
    fx_u32(s, 1);
    fx_kernel(s, &F, FX_FINISH, 1, block);
    fx_ptr(s, via);
    fx_ptr(s, to);
    fx_u32(s, 1);
    fx_pred(s, 0);
}

/* One dispatch that spins ~`spin` cycles then fails with `code` (0: ok). */
static void slow_writer(fx_sub *s, uint32_t code, uint32_t spin)
{
    fx_sub_init(s);
    fx_kernel(s, &F, FX_MAYBE_FAIL, 1, 32);
    fx_ptr(s, a);
    fx_u32(s, code);
    fx_u32(s, spin);
}

/* finish(a -> b) gated on `writer`'s dispatch 0, then finish(b -> c) (fx_gated_reader). */
static void reader(fx_sub *s, fx_sub *writer)
{
    fx_gated_reader(s, &F, writer, a, b, c);
}

static void failure_gates_dependents_in_the_batch(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(b, -1.0f);
    put(c, 10.0f);
    fx_sub s;
    fail_batch(&s, 7, 0);
    unsigned long long reads0 = stat(&F.dev->stats.status_reads);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&s, 0), 7);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&s, 2), MOX_DISPATCH_OK);
    assert_true(get(b) == -1.0f); /* the gated dispatch did not run */
    assert_true(get(c) == 11.0f); /* the independent one did */
    assert_int_equal(stat(&F.dev->stats.status_reads), reads0 + 1);
}

static void clean_batch_needs_one_host_load(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(c, 0.0f);
    fx_sub s;
    fail_batch(&s, 0, 0);
    unsigned long long reads0 = stat(&F.dev->stats.status_reads);
    unsigned long long resets0 = stat(&F.dev->stats.resets);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(fx_state(&s, i), MOX_DISPATCH_OK);
    assert_true(get(a) == 1.0f);
    assert_true(get(b) == 2.0f);
    assert_int_equal(stat(&F.dev->stats.status_reads), reads0);
    /* The previous test left this shape's instance dirty: it was reset once
     * before running clean. */
    assert_int_equal(stat(&F.dev->stats.resets), resets0 + 1);
}

/* Kernels that cannot call mox_fail never close a gate: a chain of them
 * launches with no dependency words (no gate reads on the device), while
 * a chain behind a kernel that can fail reads one. */
static void gates_only_follow_kernels_that_can_fail(void **state)
{
    (void)state;
    put(a, 1.0f);
    fx_sub s;
    chain_batch(&s, FX_FINISH, a, b, c, 64);
    unsigned long long deps0 = stat(&F.dev->stats.gate_deps);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_OK);
    assert_int_equal(stat(&F.dev->stats.gate_deps), deps0);

    fx_sub t;
    fail_batch(&t, 0, 0); /* maybe_fail (does not fail) -> finish, and an independent finish */
    fx_submit(&F, &t);
    fx_wait(&t);
    assert_int_equal(t.status, MOX_OK);
    assert_int_equal(fx_state(&t, 1), MOX_DISPATCH_OK);
    assert_int_equal(stat(&F.dev->stats.gate_deps), deps0 + 1);
}

/* Launches no failure can reach run the entry without the gate check
 * (MOX_ENTRY_UNGATED_SUFFIX): every node of a chain of kernels that cannot
 * fail, and in a batch with one that can, that kernel and what does not
 * depend on it. Its dependent keeps the gated entry and is gated when it
 * fails: the ungated entries (kernels.cu; on the simulated driver, the
 * kernels with the gate's dependencies ignored) would run it. Blocks of 96
 * threads: shapes no other test plans, so each plan is new here. */
static void ungated_entries_where_no_failure_reaches(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(b, -1.0f);
    put(c, 10.0f);
    unsigned long long ungated0 = stat(&F.dev->stats.ungated_nodes);
    fx_sub s;
    fail_batch_of(&s, 5, 0, 96);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&s, 0), 5);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&s, 2), MOX_DISPATCH_OK);
    assert_true(get(b) == -1.0f);
    assert_true(get(c) == 11.0f);
    assert_int_equal(stat(&F.dev->stats.ungated_nodes), ungated0 + 2);

    put(c, 3.0f);
    fx_sub t;
    chain_batch(&t, FX_SCALE, c, b, a, 96);
    fx_submit(&F, &t);
    fx_wait(&t);
    assert_int_equal(t.status, MOX_OK);
    assert_true(get(a) == 16.0f); /* 3 * 4 + 3, then + 1 */
    assert_int_equal(stat(&F.dev->stats.ungated_nodes), ungated0 + 4);
}

static void set_coalesce(bool on)
{
    mox__lock(&F.dev->lock);
    F.dev->coalesce = on;
    mox__unlock(&F.dev->lock);
}

static void later_batch_is_gated_by_a_running_failure(void **state)
{
    (void)state;
    /* Without coalescing the reader launches while the writer runs, so its
     * gate is checked on the device from the writer's slot. */
    bool coalesce = F.dev->coalesce;
    set_coalesce(false);
    unsigned long long live0 = stat(&F.dev->stats.live_gates);
    put(a, 0.0f);
    put(b, -1.0f);
    fx_sub w, r, late;
    slow_writer(&w, 9, 200u * 1000u * 1000u); /* ~100 ms, then fails */
    fx_submit(&F, &w);
    reader(&r, &w);
    fx_submit(&F, &r);
    fx_wait(&w);
    fx_wait(&r);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&w, 0), 9);
    assert_int_equal(r.status, MOX_OK);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r, 1), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    assert_int_equal(stat(&F.dev->stats.live_gates), live0 + 1);
    set_coalesce(coalesce);

    /* Submitted after the writer finished (the core still names it as a
     * gate when it has not seen the completion yet): the backend knows the
     * outcome and points the dependency at the always-failed slot. */
    reader(&late, &w);
    fx_submit(&F, &late);
    fx_wait(&late);
    assert_int_equal(fx_state(&late, 0), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
}

static void reader_deferred_behind_a_running_failure_is_gated(void **state)
{
    (void)state;
    /* Defer behind one running launch, so the reader waits in the pending
     * list and goes out once the writer's outcome is known. */
    mox__lock(&F.dev->lock);
    uint32_t depth = F.dev->defer_depth;
    bool coalesce = F.dev->coalesce;
    F.dev->defer_depth = 1;
    F.dev->coalesce = true;
    mox__unlock(&F.dev->lock);
    unsigned long long live0 = stat(&F.dev->stats.live_gates);
    put(a, 0.0f);
    put(b, -1.0f);
    fx_sub w, r;
    slow_writer(&w, 4, 20u * 1000u * 1000u);
    fx_submit(&F, &w);
    reader(&r, &w); /* waits in the pending list until the writer is done */
    fx_submit(&F, &r);
    fx_wait(&w);
    fx_wait(&r);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r, 1), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    /* It was not launched while the writer ran: no live gate. */
    assert_int_equal(stat(&F.dev->stats.live_gates), live0);
    mox__lock(&F.dev->lock);
    F.dev->defer_depth = depth;
    F.dev->coalesce = coalesce;
    mox__unlock(&F.dev->lock);
}

static void gate_inside_a_coalesced_launch(void **state)
{
    (void)state;
    put(a, 0.0f);
    put(b, -1.0f);
    /* Hold so that the writer and the reader go out as one launch. */
    F.backend->vt->set_hold(F.backend, true);
    fx_sub w, r;
    slow_writer(&w, 5, 1000);
    fx_submit(&F, &w);
    reader(&r, &w);
    fx_submit(&F, &r);
    unsigned long long co0 = stat(&F.dev->stats.coalesced);
    F.backend->vt->set_hold(F.backend, false);
    fx_wait(&w);
    fx_wait(&r);
    assert_int_equal(stat(&F.dev->stats.coalesced), co0 + 2);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&w, 0), 5);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r, 1), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
}

static void dependency_on_a_clean_earlier_batch_runs(void **state)
{
    (void)state;
    put(a, 0.0f);
    fx_sub w, r;
    slow_writer(&w, 0, 1000u * 1000u);
    fx_submit(&F, &w);
    reader(&r, &w);
    fx_submit(&F, &r);
    fx_wait(&r);
    fx_wait(&w);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_OK);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_OK);
    assert_int_equal(fx_state(&r, 1), MOX_DISPATCH_OK);
    assert_true(get(b) == 2.0f); /* ordered after the writer: it saw a == 1 */
    assert_true(get(c) == 3.0f);
}

static void independent_work_on_other_streams_is_not_gated(void **state)
{
    (void)state;
    put(c, 0.0f);
    fx_sub w, other;
    slow_writer(&w, 3, 10u * 1000u * 1000u);
    fx_submit(&F, &w);
    fx_sub_init(&other);
    fx_kernel(&other, &F, FX_FINISH, 1, 32);
    fx_ptr(&other, c);
    fx_ptr(&other, c);
    fx_u32(&other, 1);
    fx_submit(&F, &other);
    fx_wait(&other);
    fx_wait(&w);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&other, 0), MOX_DISPATCH_OK);
    assert_true(get(c) == 1.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failure_gates_dependents_in_the_batch),
        cmocka_unit_test(clean_batch_needs_one_host_load),
        cmocka_unit_test(gates_only_follow_kernels_that_can_fail),
        cmocka_unit_test(ungated_entries_where_no_failure_reaches),
        cmocka_unit_test(later_batch_is_gated_by_a_running_failure),
        cmocka_unit_test(reader_deferred_behind_a_running_failure_is_gated),
        cmocka_unit_test(gate_inside_a_coalesced_launch),
        cmocka_unit_test(dependency_on_a_clean_earlier_batch_runs),
        cmocka_unit_test(independent_work_on_other_streams_is_not_gated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
