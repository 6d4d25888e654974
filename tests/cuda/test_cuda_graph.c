/* tests/cuda/test_cuda_graph.c - batches as cached CUDA graphs (backend
 * only): results are right, a repeated shape re-uses its instantiated
 * graph (counted through the backend's counters), only changed nodes get
 * new parameters, pipelined repeats add instances only up to the depth in
 * flight, independent dispatches all run. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

#define N 1000u

static fx F;
static CUdeviceptr in, tmp, out;
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
    for (uint32_t i = 0; i < N; i++)
        host_in[i] = (float)(i % 1024) * 0.25f;
    fx_upload(&F, in, host_in, sizeof host_in);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, in);
    fx_free(&F, tmp);
    fx_free(&F, out);
    fx_close(&F);
    return 0;
}

/* scale(in -> tmp, n) then finish(tmp -> out, n2) */
static void two_stage(fx_disp d[2], uint32_t n, uint32_t n2)
{
    fx_set(&d[0], F.scale, (n + 255) / 256, 256);
    fx_ptr(&d[0], in);
    fx_ptr(&d[0], tmp);
    fx_u32(&d[0], n);
    fx_set(&d[1], F.finish, (n + 127) / 128, 128);
    fx_ptr(&d[1], tmp);
    fx_ptr(&d[1], out);
    fx_u32(&d[1], n2);
    fx_dep(&d[1], 0);
}

static void check_out(uint32_t n)
{
    float got[N];
    fx_download(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < n; i++)
        assert_true(got[i] == host_in[i] * 4.0f + 3.0f + 1.0f);
}

static void run_and_wait(fx_disp *d, uint32_t count)
{
    fx_wait w;
    assert_int_equal(fx_submit(&F, d, count, NULL, 0, &w, NULL), MOX_OK);
    fx_wait_for(&w);
    assert_int_equal(w.status, MOX_OK);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(w.states[i], MOX_DISPATCH_OK);
}

static void two_stage_batch_is_correct(void **state)
{
    (void)state;
    fx_disp d[2];
    two_stage(d, N, N);
    run_and_wait(d, 2);
    check_out(N);
}

static void repeated_shape_reuses_the_graph(void **state)
{
    (void)state;
    fx_disp d[2];
    two_stage(d, N, N);
    run_and_wait(d, 2); /* make sure the plan exists */
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    unsigned long long upd0 = stat(&F.dev->stats.node_updates);
    unsigned long long launches0 = stat(&F.dev->stats.graph_launches);
    for (int r = 0; r < 20; r++)
        run_and_wait(d, 2);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    assert_int_equal(stat(&F.dev->stats.plans), plans0);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0); /* same arguments: no update */
    assert_int_equal(stat(&F.dev->stats.graph_launches), launches0 + 20);

    /* A new value for the second stage only: one node update per run. */
    fx_disp e[2];
    two_stage(e, N, N - 1);
    run_and_wait(e, 2);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 1);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    check_out(N - 1);
    /* Other geometry is another topology: a new plan. */
    fx_disp g[2];
    two_stage(g, 300, 300);
    run_and_wait(g, 2);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    check_out(300);
}

static void pipelined_repeats_bound_instances(void **state)
{
    (void)state;
    enum { DEPTH = 16 };
    fx_disp d[2];
    two_stage(d, N, N);
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    for (int round = 0; round < 3; round++) {
        fx_wait w[DEPTH];
        mox__cuda_sub *subs[DEPTH];
        for (int k = 0; k < DEPTH; k++) {
            mox__cuda_sub **prev = k ? &subs[k - 1] : NULL;
            assert_int_equal(fx_submit(&F, d, 2, prev, k ? 1 : 0, &w[k], &subs[k]), MOX_OK);
        }
        for (int k = 0; k < DEPTH; k++) {
            fx_wait_for(&w[k]);
            assert_int_equal(w[k].status, MOX_OK);
            mox__cuda_sub_release(subs[k]);
        }
        check_out(N);
        /* Never more instances than submissions in flight at once. */
        assert_true(stat(&F.dev->stats.instantiations) - inst0 <= DEPTH);
    }
    unsigned long long after = stat(&F.dev->stats.instantiations);
    fx_disp e[2];
    two_stage(e, N, N);
    run_and_wait(e, 2);
    assert_int_equal(stat(&F.dev->stats.instantiations), after);
}

static void independent_dispatches_all_run(void **state)
{
    (void)state;
    enum { K = 8 };
    CUdeviceptr flags = fx_alloc(&F, K * 4);
    float zero[K] = {0};
    fx_upload(&F, flags, zero, sizeof zero);
    fx_disp d[K];
    for (uint32_t i = 0; i < K; i++) {
        fx_set(&d[i], F.spin, 1, 32);
        fx_ptr(&d[i], flags);
        fx_u32(&d[i], i);
        fx_u32(&d[i], 100000);
    }
    run_and_wait(d, K);
    float got[K];
    fx_download(&F, got, flags, sizeof got);
    for (uint32_t i = 0; i < K; i++)
        assert_true(got[i] == 1.0f);
    fx_free(&F, flags);
}

static void empty_grid_runs_nothing(void **state)
{
    (void)state;
    fx_disp d[2];
    two_stage(d, N, N);
    run_and_wait(d, 2);
    fx_disp e[2];
    two_stage(e, 0, 0);
    run_and_wait(e, 2);
    check_out(N); /* unchanged */
}

static void single_dispatch_uses_a_stream_launch(void **state)
{
    (void)state;
    if (F.dev->mode != MOX__CUDA_LAUNCH_AUTO)
        skip();
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long s0 = stat(&F.dev->stats.stream_launches);
    fx_disp d[1];
    fx_set(&d[0], F.scale, (N + 255) / 256, 256);
    fx_ptr(&d[0], in);
    fx_ptr(&d[0], tmp);
    fx_u32(&d[0], N);
    for (int r = 0; r < 5; r++)
        run_and_wait(d, 1);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    assert_int_equal(stat(&F.dev->stats.stream_launches), s0 + 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_stage_batch_is_correct),
        cmocka_unit_test(repeated_shape_reuses_the_graph),
        cmocka_unit_test(pipelined_repeats_bound_instances),
        cmocka_unit_test(independent_dispatches_all_run),
        cmocka_unit_test(empty_grid_runs_nothing),
        cmocka_unit_test(single_dispatch_uses_a_stream_launch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
