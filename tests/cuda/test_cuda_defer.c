/* tests/cuda/test_cuda_defer.c - deferred dispatches on the device (backend
 * only): a kernel with MOX_KFEAT_GATE_DEFERRED checks its gate only before
 * each store and asks nothing at its end, so a dispatch of it whose threads
 * store nothing (n = 0) leaves its status word OK behind a failed
 * dependency (kernels.cu's bt_defer_finish; the simulated driver's
 * sim_kernels_defer.c does the same). The backend must still report it
 * GATED and gate whatever reads it: in its batch, in a later batch while it
 * runs and after it finished, two deferred hops away, inside a coalesced
 * launch; with its dependency OK it runs. A kernel without the bit
 * (bt_defer_asks: its entry asks at its end) is handled as before: its
 * readers read its word alone. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

static fx F;
static CUdeviceptr a, b, c, d;

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

/* Every buffer's first element back to a known value. */
static void reset_buffers(void)
{
    put(a, 0.0f);
    put(b, -1.0f);
    put(c, -2.0f);
    put(d, -3.0f);
}

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    a = fx_alloc(&F, 256 * 4);
    b = fx_alloc(&F, 256 * 4);
    c = fx_alloc(&F, 256 * 4);
    d = fx_alloc(&F, 256 * 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, a);
    fx_free(&F, b);
    fx_free(&F, c);
    fx_free(&F, d);
    fx_close(&F);
    return 0;
}

static void set_coalesce(bool on)
{
    mox__lock(&F.dev->lock);
    F.dev->coalesce = on;
    mox__unlock(&F.dev->lock);
}

/* Appends maybe_fail(a, code, spin): fails with `code` (0: writes a[0] = 1)
 * after about `spin` cycles. */
static uint32_t writer(fx_sub *s, uint32_t code, uint32_t spin)
{
    uint32_t i = fx_kernel(s, &F, FX_MAYBE_FAIL, 1, 32);
    fx_ptr(s, a);
    fx_u32(s, code);
    fx_u32(s, spin);
    return i;
}

/* Appends kernel k (FX_FINISH, FX_DEFER_FINISH or FX_DEFER_ASKS):
 * out[i] = in[i] + 1 for i < n, in one block of 32. */
static uint32_t finish(fx_sub *s, uint32_t k, CUdeviceptr in, CUdeviceptr out, uint32_t n)
{
    uint32_t i = fx_kernel(s, &F, k, 1, 32);
    fx_ptr(s, in);
    fx_ptr(s, out);
    fx_u32(s, n);
    return i;
}

/* [0] fails with 7  [1] deferred kernel k, a -> b, n = 0, after 0
 * [2] finish b -> c after 1. */
static void failure_then_empty(fx_sub *s, uint32_t k)
{
    fx_sub_init(s);
    writer(s, 7, 0);
    finish(s, k, a, b, 0);
    fx_pred(s, 0);
    finish(s, FX_FINISH, b, c, 1);
    fx_pred(s, 1);
}

static void empty_dispatch_behind_a_failure_is_gated(void **state)
{
    (void)state;
    reset_buffers();
    fx_sub s;
    failure_then_empty(&s, FX_DEFER_FINISH);
    unsigned long long deps0 = stat(&F.dev->stats.gate_deps);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&s, 0), 7);
    /* Its word stayed OK (no thread stored): the backend derived it. */
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
    assert_int_equal(fx_code(&s, 1), 0);
    /* Its reader in the batch read the failure's slot too. */
    assert_int_equal(fx_state(&s, 2), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    assert_true(get(c) == -2.0f);
    /* [1] reads [0]; [2] reads [1] and what [1] carries, [0]. */
    assert_int_equal(stat(&F.dev->stats.gate_deps), deps0 + 3);
}

static void deferred_dispatch_with_an_ok_dependency_runs(void **state)
{
    (void)state;
    reset_buffers();
    fx_sub s;
    fx_sub_init(&s);
    writer(&s, 0, 0);                       /* a[0] = 1 */
    finish(&s, FX_DEFER_FINISH, a, b, 1);   /* b[0] = 2 */
    fx_pred(&s, 0);
    finish(&s, FX_FINISH, b, c, 1);         /* c[0] = 3 */
    fx_pred(&s, 1);
    finish(&s, FX_DEFER_FINISH, a, d, 0);   /* stores nothing */
    fx_pred(&s, 0);
    unsigned long long reads0 = stat(&F.dev->stats.status_reads);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(fx_state(&s, i), MOX_DISPATCH_OK);
    assert_true(get(b) == 2.0f);
    assert_true(get(c) == 3.0f);
    assert_true(get(d) == -3.0f);
    /* Still a clean batch: its states come without reading the words. */
    assert_int_equal(stat(&F.dev->stats.status_reads), reads0);
}

/* finish(b -> c), gated on dispatch `dispatch` of `earlier`. */
static void reader_of(fx_sub *s, fx_sub *earlier, uint32_t dispatch)
{
    fx_sub_init(s);
    finish(s, FX_FINISH, b, c, 1);
    fx_gate(s, earlier, dispatch);
}

static void later_batch_is_gated_while_running_and_after(void **state)
{
    (void)state;
    /* Without coalescing the reader launches while the failing writer
     * (about 100 ms) still runs: its gate reads the deferred dispatch's
     * slot and the slot that dispatch carries, from the running launch. */
    bool coalesce = F.dev->coalesce;
    set_coalesce(false);
    reset_buffers();
    fx_sub w, r, late;
    fx_sub_init(&w);
    writer(&w, 9, 200u * 1000u * 1000u);
    finish(&w, FX_DEFER_FINISH, a, b, 0);
    fx_pred(&w, 0);
    unsigned long long live0 = stat(&F.dev->stats.live_gates);
    fx_submit(&F, &w);
    reader_of(&r, &w, 1);
    fx_submit(&F, &r);
    fx_wait(&w);
    fx_wait(&r);
    set_coalesce(coalesce);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&w, 0), 9);
    assert_int_equal(fx_state(&w, 1), MOX_DISPATCH_GATED);
    assert_int_equal(r.status, MOX_OK);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    assert_true(get(c) == -2.0f);
    assert_int_equal(stat(&F.dev->stats.live_gates), live0 + 1);

    /* Submitted after it finished (the core still names it when it has not
     * seen the completion): its settled, derived state gates the reader. */
    reader_of(&late, &w, 1);
    fx_submit(&F, &late);
    fx_wait(&late);
    assert_int_equal(fx_state(&late, 0), MOX_DISPATCH_GATED);
    assert_true(get(c) == -2.0f);
}

/* F fails; D1 (deferred, n = 0) reads a after it; D2 (deferred, n = 1)
 * reads what D1 wrote; R reads what D2 wrote. D2's threads store: its
 * gate sees the failure only through the slot D1 carries. */
static void failure_two_deferred_hops_away(void **state)
{
    (void)state;
    bool coalesce = F.dev->coalesce;
    set_coalesce(false);
    reset_buffers();
    fx_sub w, d1, d2, r;
    fx_sub_init(&w);
    writer(&w, 3, 100u * 1000u * 1000u);
    fx_sub_init(&d1);
    finish(&d1, FX_DEFER_FINISH, a, b, 0);
    fx_gate(&d1, &w, 0);
    fx_sub_init(&d2);
    finish(&d2, FX_DEFER_FINISH, b, c, 1);
    fx_gate(&d2, &d1, 0);
    fx_sub_init(&r);
    finish(&r, FX_FINISH, c, d, 1);
    fx_gate(&r, &d2, 0);
    fx_submit(&F, &w);
    fx_submit(&F, &d1);
    fx_submit(&F, &d2);
    fx_submit(&F, &r);
    fx_wait(&r);
    fx_wait(&d2);
    fx_wait(&d1);
    fx_wait(&w);
    set_coalesce(coalesce);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&d1, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&d2, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    assert_true(get(c) == -2.0f);
    assert_true(get(d) == -3.0f);

    /* The same chain in one batch, every deferred dispatch empty. */
    reset_buffers();
    fx_sub s;
    fx_sub_init(&s);
    writer(&s, 4, 0);
    finish(&s, FX_DEFER_FINISH, a, b, 0);
    fx_pred(&s, 0);
    finish(&s, FX_DEFER_FINISH, b, c, 0);
    fx_pred(&s, 1);
    finish(&s, FX_FINISH, c, d, 1);
    fx_pred(&s, 2);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    for (uint32_t i = 1; i < 4; i++)
        assert_int_equal(fx_state(&s, i), MOX_DISPATCH_GATED);
    assert_true(get(d) == -3.0f);
}

static void deferred_dispatch_inside_a_coalesced_launch(void **state)
{
    (void)state;
    reset_buffers();
    /* Hold so that the three executions go out as one launch: the reader's
     * gate takes the slots the deferred dispatch carries inside it. */
    F.backend->vt->set_hold(F.backend, true);
    fx_sub w, dd, r;
    fx_sub_init(&w);
    writer(&w, 5, 1000);
    fx_sub_init(&dd);
    finish(&dd, FX_DEFER_FINISH, a, b, 0);
    fx_gate(&dd, &w, 0);
    reader_of(&r, &dd, 0);
    fx_submit(&F, &w);
    fx_submit(&F, &dd);
    fx_submit(&F, &r);
    unsigned long long co0 = stat(&F.dev->stats.coalesced);
    F.backend->vt->set_hold(F.backend, false);
    fx_wait(&w);
    fx_wait(&dd);
    fx_wait(&r);
    assert_int_equal(stat(&F.dev->stats.coalesced), co0 + 3);
    assert_int_equal(fx_state(&w, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&dd, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r, 0), MOX_DISPATCH_GATED);
    assert_true(get(c) == -2.0f);
}

/* A kernel whose ABI lacks the bit (a module for a runtime that does not
 * derive): its entry asks at its end and marks the empty dispatch GATED
 * itself; its reader reads its word alone, as before. */
static void without_the_bit_the_entry_asks_and_nothing_is_carried(void **state)
{
    (void)state;
    reset_buffers();
    fx_sub s;
    failure_then_empty(&s, FX_DEFER_ASKS);
    unsigned long long deps0 = stat(&F.dev->stats.gate_deps);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&s, 2), MOX_DISPATCH_GATED);
    assert_true(get(b) == -1.0f);
    assert_true(get(c) == -2.0f);
    /* [1] reads [0], [2] reads [1]: nothing carried. */
    assert_int_equal(stat(&F.dev->stats.gate_deps), deps0 + 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_dispatch_behind_a_failure_is_gated),
        cmocka_unit_test(deferred_dispatch_with_an_ok_dependency_runs),
        cmocka_unit_test(later_batch_is_gated_while_running_and_after),
        cmocka_unit_test(failure_two_deferred_hops_away),
        cmocka_unit_test(deferred_dispatch_inside_a_coalesced_launch),
        cmocka_unit_test(without_the_bit_the_entry_asks_and_nothing_is_carried),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
