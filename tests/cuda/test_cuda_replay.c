/* tests/cuda/test_cuda_replay.c - launches that repeat a recent plan's
 * shape are described against it in one pass (src/cuda/cuda_replay.c),
 * counted by the backend's `replays`: taken for a repeated batch, a
 * batch with other arguments (which then updates that node only) and
 * merged launches with gates that cannot close; not taken for another
 * geometry, other edges (inside an execution, or the FIFO edges between
 * merged ones), a kernel that can fail, a gate on a running dispatch that
 * can, or a plan whose only instance is busy. Results are checked each
 * time. The arguments an instance keeps are compared byte by byte (no
 * device needed for that one). Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda/cuda_plan_internal.h"
#include "cuda_fixture.h"

#define N 1000u
#define Q 0u /* the queue each test starts on */

static fx F;
static CUdeviceptr in, tmp, out, flags;
static float host_in[N];

static unsigned long long stat(atomic_ullong *c)
{
    return atomic_load(c);
}

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    in = fx_alloc(&F, N * 4);
    tmp = fx_alloc(&F, N * 4);
    out = fx_alloc(&F, N * 4);
    flags = fx_alloc(&F, 64);
    for (uint32_t i = 0; i < N; i++)
        host_in[i] = (float)(i % 1024) * 0.25f;
    fx_put(&F, in, host_in, sizeof host_in);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, in);
    fx_free(&F, tmp);
    fx_free(&F, out);
    fx_free(&F, flags);
    fx_close(&F);
    return 0;
}

/* scale(in -> tmp, n1) then finish(tmp -> out, n2); `pred`: finish after
 * scale (else the two are independent). */
static void two_stage_n(fx_sub *s, uint32_t grid, uint32_t n1, uint32_t n2, bool pred)
{
    fx_sub_init(s);
    fx_kernel(s, &F, FX_SCALE, grid, 256);
    fx_ptr(s, in);
    fx_ptr(s, tmp);
    fx_u32(s, n1);
    fx_kernel(s, &F, FX_FINISH, (n2 + 127) / 128, 128);
    fx_ptr(s, tmp);
    fx_ptr(s, out);
    fx_u32(s, n2);
    if (pred)
        fx_pred(s, 0);
}

static void two_stage(fx_sub *s, uint32_t grid, uint32_t n2, bool pred)
{
    two_stage_n(s, grid, N, n2, pred);
}

static void check_out(uint32_t n)
{
    float got[N];
    fx_get(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < n; i++)
        assert_true(got[i] == host_in[i] * 4.0f + 3.0f + 1.0f);
}

static void run_on(fx_sub *s, uint32_t q)
{
    F.next_queue = q;
    fx_submit(&F, s);
    fx_wait(s);
    if (s->status != MOX_OK)
        print_error("%s\n", s->message);
    assert_int_equal(s->status, MOX_OK);
    for (uint32_t i = 0; i < s->pub.count; i++)
        assert_int_equal(fx_state(s, i), MOX_DISPATCH_OK);
}

#define GRID ((N + 255) / 256)

static void a_repeated_batch_is_replayed(void **state)
{
    (void)state;
    fx_sub s;
    /* The plan and its instance exist after the first run; the second
     * finds it by its hash, and from then on it is among the stream's
     * recent plans. */
    for (int r = 0; r < 2; r++) {
        two_stage(&s, GRID, N, true);
        run_on(&s, Q);
    }
    unsigned long long r0 = stat(&F.dev->stats.replays);
    unsigned long long upd0 = stat(&F.dev->stats.node_updates);
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    for (int r = 0; r < 5; r++) {
        two_stage(&s, GRID, N, true);
        run_on(&s, Q);
        check_out(N);
    }
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 5);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);

    /* Other arguments: replayed, the second node's parameters set. */
    two_stage(&s, GRID, N - 1, true);
    run_on(&s, Q);
    check_out(N - 1);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 6);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 1);
    /* Both nodes' arguments: both updated, in node order. */
    two_stage_n(&s, GRID, N - 2, N - 2, true);
    run_on(&s, Q);
    check_out(N - 2);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 7);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 3);
    /* And back: the instance's last arguments are those just given. */
    two_stage(&s, GRID, N, true);
    run_on(&s, Q);
    check_out(N);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 8);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 5);
    two_stage(&s, GRID, N, true);
    run_on(&s, Q);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 5);
}

static void another_shape_is_not_replayed(void **state)
{
    (void)state;
    fx_sub s;
    two_stage(&s, GRID, N, true);
    run_on(&s, Q);
    two_stage(&s, GRID, N, true);
    run_on(&s, Q);
    unsigned long long r0 = stat(&F.dev->stats.replays);
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    /* Another grid for the first node: same node count, another plan. */
    two_stage(&s, GRID + 1, N, true);
    run_on(&s, Q);
    check_out(N);
    assert_int_equal(stat(&F.dev->stats.replays), r0);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    /* No edge between the two: another plan again. */
    two_stage(&s, GRID, N, false);
    run_on(&s, Q);
    check_out(N);
    assert_int_equal(stat(&F.dev->stats.replays), r0);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 2);
    /* The first shape again: still among the stream's recent plans. */
    two_stage(&s, GRID, N, true);
    run_on(&s, Q);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 1);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 2);
}

/* Held, `k` chained executions (each gated on the one before, on a kernel
 * that cannot fail: the gate never closes) go out as one launch. With
 * `odd` >= 0, execution `odd` has no edge between its two nodes. */
static void merged_round(fx_sub *s, uint32_t k, int odd)
{
    F.backend->vt->set_hold(F.backend, true);
    F.next_queue = Q;
    for (uint32_t i = 0; i < k; i++) {
        two_stage(&s[i], GRID, N, (int)i != odd);
        if (i)
            fx_gate(&s[i], &s[i - 1], 1);
        fx_submit(&F, &s[i]);
    }
    F.backend->vt->set_hold(F.backend, false);
    for (uint32_t i = 0; i < k; i++) {
        fx_wait(&s[i]);
        assert_int_equal(s[i].status, MOX_OK);
        assert_int_equal(fx_state(&s[i], 0), MOX_DISPATCH_OK);
        assert_int_equal(fx_state(&s[i], 1), MOX_DISPATCH_OK);
    }
    check_out(N);
}

static void merged_launches_are_replayed_unless_their_edges_differ(void **state)
{
    (void)state;
    enum { K = 8 };
    fx_sub *s = calloc(K, sizeof *s);
    assert_non_null(s);
    unsigned long long g0 = stat(&F.dev->stats.groups);
    merged_round(s, K, -1); /* the plan of K merged executions */
    merged_round(s, K, -1); /* found by its hash: a recent plan of the stream */
    unsigned long long r0 = stat(&F.dev->stats.replays);
    merged_round(s, K, -1);
    merged_round(s, K, -1);
    assert_int_equal(stat(&F.dev->stats.groups), g0 + 4);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 2);
    /* Execution 3 without its edge: its two nodes are both sources, each
     * after the sinks of execution 2. Same node count, other edges. */
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    merged_round(s, K, 3);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 2);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    merged_round(s, K, -1);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 3);
    free(s);
}

/* maybe_fail(a): a kernel that can fail, alone. */
static void writer(fx_sub *s, uint32_t code, uint32_t spin)
{
    fx_sub_init(s);
    fx_kernel(s, &F, FX_MAYBE_FAIL, 1, 32);
    fx_ptr(s, flags);
    fx_u32(s, code);
    fx_u32(s, spin);
}

/* maybe_fail(a) then finish(a -> b). */
static void fail_batch(fx_sub *s, uint32_t code, uint32_t spin)
{
    writer(s, code, spin);
    fx_kernel(s, &F, FX_FINISH, 1, 32);
    fx_ptr(s, flags);
    fx_ptr(s, out);
    fx_u32(s, 1);
    fx_pred(s, 0);
}

static void a_kernel_that_can_fail_is_not_replayed(void **state)
{
    (void)state;
    fx_sub s;
    unsigned long long r0 = stat(&F.dev->stats.replays);
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    for (int r = 0; r < 3; r++) {
        fail_batch(&s, 0, 0);
        run_on(&s, Q);
    }
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    assert_int_equal(stat(&F.dev->stats.replays), r0);
    fail_batch(&s, 6, 0);
    F.next_queue = Q;
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&s, 0), 6);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
    assert_int_equal(stat(&F.dev->stats.replays), r0);
}

/* finish(in -> tmp) gated on `writer`'s dispatch 0, then finish(tmp -> out) (fx_gated_reader). */
static void reader(fx_sub *s, fx_sub *writer)
{
    fx_gated_reader(s, &F, writer, in, tmp, out);
}


static void a_gate_that_may_close_is_not_replayed(void **state)
{
    (void)state;
    fx_sub w, r;
    writer(&w, 0, 0);
    run_on(&w, Q);
    /* Gated on a writer that finished OK: the gate never closes. */
    for (int k = 0; k < 2; k++) {
        reader(&r, &w);
        run_on(&r, Q);
    }
    unsigned long long r0 = stat(&F.dev->stats.replays);
    reader(&r, &w);
    run_on(&r, Q);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 1);
    /* Gated on a writer that runs (or failed): the full description. The
     * writer's launch is its own (one node); the reader's follows it on
     * its queue at once (one launch queued is under the default depth). */
    fx_sub w2, r2;
    writer(&w2, 8, 20u * 1000u * 1000u);
    F.next_queue = Q;
    fx_submit(&F, &w2);
    reader(&r2, &w2);
    fx_submit(&F, &r2);
    fx_wait(&w2);
    fx_wait(&r2);
    assert_int_equal(fx_state(&w2, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_state(&r2, 0), MOX_DISPATCH_GATED);
    assert_int_equal(fx_state(&r2, 1), MOX_DISPATCH_GATED);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 1);
}

static void a_busy_plan_is_not_replayed(void **state)
{
    (void)state;
    fx_sub a, b;
    for (int r = 0; r < 3; r++) {
        fx_spin_sub(&a, &F, flags, 0, 0);
        run_on(&a, Q);
    }
    unsigned long long r0 = stat(&F.dev->stats.replays);
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    /* a runs for long (its launch replayed); b, after it on its queue,
     * finds the plan's only instance busy: described in full, and a second
     * instance made. */
    fx_spin_sub(&a, &F, flags, 1, 200u * 1000u * 1000u);
    F.next_queue = Q;
    fx_submit(&F, &a);
    fx_spin_sub(&b, &F, flags, 2, 0);
    fx_after(&b, &a);
    fx_submit(&F, &b);
    fx_wait(&a);
    fx_wait(&b);
    assert_int_equal(a.status, MOX_OK);
    assert_int_equal(b.status, MOX_OK);
    assert_int_equal(stat(&F.dev->stats.replays), r0 + 1);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0 + 1);
    float got[3];
    fx_get(&F, got, flags, sizeof got);
    assert_true(got[1] == 1.0f && got[2] == 1.0f);
}

/* The arguments an instance keeps (cuda_plan_internal.h), with no
 * device: a kernel whose parameters are all 4 or 8 bytes keeps words (a
 * 4-byte argument's neighbouring bytes do not count), any other packed
 * bytes; either way a change of any argument byte is seen. */
static void kept_arguments_compare_every_byte(void **state)
{
    (void)state;
    static const uint32_t sizes[2][4] = {{8, 4, 8, 4}, {8, 2, 16, 4}};
    for (int packed = 0; packed < 2; packed++) {
        mox__cuda_kernel k;
        memset(&k, 0, sizeof k);
        k.param_count = 4;
        k.word_params = !packed;
        for (uint32_t a = 0; a < 4; a++) {
            k.param_size[a] = sizes[packed][a];
            k.wide_params |= (uint32_t)(sizes[packed][a] == 8) << a;
        }
        _Alignas(16) unsigned char values[4][16];
        memset(values, 0x5a, sizeof values);
        void *params[4] = {values[0], values[1], values[2], values[3]};
        mox__dispatch d;
        memset(&d, 0, sizeof d);
        d.param_count = 4;
        d.params = params;
        unsigned char last[64];
        mox__cuda_node_state ns;
        memset(&ns, 0, sizeof ns);
        mox__cuda_inst inst;
        memset(&inst, 0, sizeof inst);
        inst.node_state = &ns;
        inst.last_args = last;
        assert_true(mox__cuda_args_bytes(&k) <= sizeof last);
        assert_int_equal(mox__cuda_args_bytes(&k), packed ? 30 : 32);
        mox__cuda_keep_args(last, &k, &d);
        assert_true(mox__cuda_same_args(&inst, 0, &k, &d));
        for (uint32_t a = 0; a < 4; a++) {
            for (uint32_t b = 0; b < 16; b++) {
                values[a][b] ^= 0x01;
                bool counts = b < sizes[packed][a];
                assert_int_equal(mox__cuda_same_args(&inst, 0, &k, &d), !counts);
                values[a][b] ^= 0x01;
            }
        }
        assert_true(mox__cuda_same_args(&inst, 0, &k, &d));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_repeated_batch_is_replayed),
        cmocka_unit_test(another_shape_is_not_replayed),
        cmocka_unit_test(merged_launches_are_replayed_unless_their_edges_differ),
        cmocka_unit_test(a_kernel_that_can_fail_is_not_replayed),
        cmocka_unit_test(a_gate_that_may_close_is_not_replayed),
        cmocka_unit_test(a_busy_plan_is_not_replayed),
        cmocka_unit_test(kept_arguments_compare_every_byte),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
