/* tests/cuda/test_cuda_graph.c - launches as cached CUDA graphs (backend
 * only, through the backend's vtable): results are right; a repeated shape
 * re-uses its instantiated graph (counted through the backend's counters)
 * and only nodes whose arguments changed get new parameters (a single
 * dispatch too, as a one-node graph); submissions that arrive together are
 * coalesced into shared launches and add instances only up to what is in
 * flight; independent dispatches all run; a plan evicted from the full
 * cache is made again; transfers in
 * submissions copy through staging; held submissions start on release; a
 * group's successors outgrow its inline room. Fills, copies and uploads
 * as graph nodes: test_cuda_commands.c. Exits 77 without a GPU. */
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
    fx_put(&F, in, host_in, sizeof host_in);
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
static void two_stage(fx_sub *s, uint32_t n, uint32_t n2)
{
    fx_sub_init(s);
    fx_kernel(s, &F, FX_SCALE, (n + 255) / 256, 256);
    fx_ptr(s, in);
    fx_ptr(s, tmp);
    fx_u32(s, n);
    fx_kernel(s, &F, FX_FINISH, (n2 + 127) / 128, 128);
    fx_ptr(s, tmp);
    fx_ptr(s, out);
    fx_u32(s, n2);
    fx_pred(s, 0);
}

static void check_out(uint32_t n)
{
    float got[N];
    fx_get(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < n; i++)
        assert_true(got[i] == host_in[i] * 4.0f + 3.0f + 1.0f);
}

static void run_and_wait(fx_sub *s)
{
    fx_submit(&F, s);
    fx_wait(s);
    assert_int_equal(s->status, MOX_OK);
    for (uint32_t i = 0; i < s->pub.count; i++)
        assert_int_equal(fx_state(s, i), MOX_DISPATCH_OK);
}

static void two_stage_batch_is_correct(void **state)
{
    (void)state;
    fx_sub s;
    two_stage(&s, N, N);
    run_and_wait(&s);
    check_out(N);
}

static void repeated_shape_reuses_the_graph(void **state)
{
    (void)state;
    fx_sub s;
    two_stage(&s, N, N);
    run_and_wait(&s); /* the plan exists now */
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    unsigned long long upd0 = stat(&F.dev->stats.node_updates);
    unsigned long long launches0 = stat(&F.dev->stats.graph_launches);
    for (int r = 0; r < 20; r++) {
        two_stage(&s, N, N);
        run_and_wait(&s);
    }
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    assert_int_equal(stat(&F.dev->stats.plans), plans0);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0); /* same arguments: no update */
    assert_int_equal(stat(&F.dev->stats.graph_launches), launches0 + 20);

    /* A new value for the second stage only: one node update. */
    two_stage(&s, N, N - 1);
    run_and_wait(&s);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 1);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    check_out(N - 1);
    /* Other geometry is another topology: a new plan. */
    two_stage(&s, 300, 300);
    run_and_wait(&s);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    check_out(300);
}

static void pipelined_submissions_coalesce(void **state)
{
    (void)state;
    /* Held back (deterministic, unlike racing the GPU), 48 chained
     * submissions go out as launches of MOX__CUDA_MERGE_SUBS submissions:
     * 3 per round, one plan, instances re-used across rounds. */
    enum { DEPTH = 48, ROUNDS = 3 };
    fx_sub *s = calloc(DEPTH, sizeof *s);
    assert_non_null(s);
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long groups0 = stat(&F.dev->stats.groups);
    unsigned long long co0 = stat(&F.dev->stats.coalesced);
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    for (int round = 0; round < ROUNDS; round++) {
        F.backend->vt->set_hold(F.backend, true);
        for (int k = 0; k < DEPTH; k++) {
            two_stage(&s[k], N, N);
            if (k)
                fx_after(&s[k], &s[k - 1]); /* same buffers: the core orders them */
            fx_submit(&F, &s[k]);
        }
        F.backend->vt->set_hold(F.backend, false);
        for (int k = 0; k < DEPTH; k++) {
            fx_wait(&s[k]);
            if (s[k].status != MOX_OK)
                print_error("submission %d: %s\n", k, s[k].message);
            assert_int_equal(s[k].status, MOX_OK);
            assert_int_equal(fx_state(&s[k], 1), MOX_DISPATCH_OK);
        }
        check_out(N);
    }
    unsigned long long per_round = DEPTH / MOX__CUDA_MERGE_SUBS;
    assert_int_equal(stat(&F.dev->stats.groups) - groups0, ROUNDS * per_round);
    assert_int_equal(stat(&F.dev->stats.coalesced) - co0, ROUNDS * DEPTH);
    assert_true(stat(&F.dev->stats.plans) - plans0 <= 1);
    assert_true(stat(&F.dev->stats.instantiations) - inst0 <= per_round);
    free(s);
}

static void independent_dispatches_all_run(void **state)
{
    (void)state;
    enum { K = 8 };
    CUdeviceptr flags = fx_alloc(&F, K * 4);
    fx_sub s;
    fx_sub_init(&s);
    for (uint32_t i = 0; i < K; i++) {
        fx_kernel(&s, &F, FX_SPIN, 1, 32);
        fx_ptr(&s, flags);
        fx_u32(&s, i);
        fx_u32(&s, 100000);
    }
    run_and_wait(&s);
    float got[K];
    fx_get(&F, got, flags, sizeof got);
    for (uint32_t i = 0; i < K; i++)
        assert_true(got[i] == 1.0f);
    fx_free(&F, flags);
}

static void single_dispatch_reuses_a_one_node_graph(void **state)
{
    (void)state;
    if (F.dev->mode != MOX__CUDA_LAUNCH_AUTO)
        skip();
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long g0 = stat(&F.dev->stats.graph_launches);
    unsigned long long s0 = stat(&F.dev->stats.stream_launches);
    for (int r = 0; r < 5; r++) {
        fx_sub s;
        fx_sub_init(&s);
        fx_kernel(&s, &F, FX_SCALE, (N + 255) / 256, 256);
        fx_ptr(&s, in);
        fx_ptr(&s, tmp);
        fx_u32(&s, N);
        run_and_wait(&s);
    }
    assert_true(stat(&F.dev->stats.instantiations) <= inst0 + 1);
    assert_int_equal(stat(&F.dev->stats.graph_launches), g0 + 5);
    assert_int_equal(stat(&F.dev->stats.stream_launches), s0);
}

/* The cache keeps 512 plans; past that the least recently used idle one
 * goes, also while it is the plan its stream found last (the stream
 * compares a launch with that plan first): the shape is made again. */
static void an_evicted_plan_is_made_again(void **state)
{
    (void)state;
    fx_sub s;
    for (int r = 0; r < 2; r++) {
        F.next_queue = 0;
        two_stage(&s, N, N);
        run_and_wait(&s);
    }
    for (uint32_t grid = 1; grid <= 520; grid++) {
        F.next_queue = 1; /* stream 0 launches nothing meanwhile */
        fx_sub_init(&s);
        fx_kernel(&s, &F, FX_SCALE, grid, 32);
        fx_ptr(&s, in);
        fx_ptr(&s, tmp);
        fx_u32(&s, N);
        run_and_wait(&s);
    }
    unsigned long long plans0 = stat(&F.dev->stats.plans);
    F.next_queue = 0;
    two_stage(&s, N, N);
    run_and_wait(&s);
    assert_int_equal(stat(&F.dev->stats.plans), plans0 + 1);
    check_out(N);
}

static void transfers_copy_through_staging(void **state)
{
    (void)state;
    float up[N], down[N];
    for (uint32_t i = 0; i < N; i++)
        up[i] = (float)i * 0.5f;
    /* upload into tmp, finish tmp -> out, download out */
    fx_sub s;
    fx_sub_init(&s);
    fx_transfer(&s, MOX__CMD_UPLOAD, tmp, 0, sizeof up, up);
    fx_kernel(&s, &F, FX_FINISH, (N + 127) / 128, 128);
    fx_ptr(&s, tmp);
    fx_ptr(&s, out);
    fx_u32(&s, N);
    fx_pred(&s, 0);
    fx_transfer(&s, MOX__CMD_DOWNLOAD, out, 0, sizeof down, down);
    fx_pred(&s, 1);
    run_and_wait(&s);
    for (uint32_t i = 0; i < N; i++)
        assert_true(down[i] == up[i] + 1.0f);
    /* A partial download at an offset. */
    float part[10];
    fx_sub r;
    fx_sub_init(&r);
    fx_transfer(&r, MOX__CMD_DOWNLOAD, out, 40, sizeof part, part);
    run_and_wait(&r);
    for (uint32_t i = 0; i < 10; i++)
        assert_true(part[i] == up[10 + i] + 1.0f);
}


static void held_submissions_start_on_release(void **state)
{
    (void)state;
    float zero[N] = {0};
    fx_put(&F, out, zero, sizeof zero);
    F.backend->vt->set_hold(F.backend, true);
    fx_sub a, b;
    two_stage(&a, N, N);
    two_stage(&b, N, N);
    fx_after(&b, &a);
    fx_submit(&F, &a);
    fx_submit(&F, &b);
    float got[N];
    fx_get(&F, got, out, sizeof got);
    assert_true(got[5] == 0.0f); /* nothing ran */
    pthread_mutex_lock(&a.m);
    assert_false(a.done);
    pthread_mutex_unlock(&a.m);
    F.backend->vt->set_hold(F.backend, false);
    fx_wait(&a);
    fx_wait(&b);
    assert_int_equal(a.status, MOX_OK);
    assert_int_equal(b.status, MOX_OK);
    check_out(N);
}

/* A group keeps its first MOX__CUDA_SUCCS_INLINE successors in its own
 * room and the rest in an array: each added once, counted once. */
static void group_successors_outgrow_the_inline_room(void **state)
{
    (void)state;
    enum { K = MOX__CUDA_SUCCS_INLINE + 3 };
    mox__cuda_group *g = mox__cuda_group_new(1);
    mox__cuda_group *later[K];
    assert_non_null(g);
    for (uint32_t i = 0; i < K; i++) {
        later[i] = mox__cuda_group_new(1);
        assert_non_null(later[i]);
        assert_true(mox__cuda_add_succ(g, later[i]));
        assert_true(mox__cuda_add_succ(g, later[i])); /* once per pair */
        assert_int_equal(g->nsucc, i + 1);
        assert_int_equal(later[i]->npred, 1);
    }
    for (uint32_t i = 0; i < K; i++)
        assert_ptr_equal(g->succs[i], later[i]);
    mox__cuda_group_free(g);
    for (uint32_t i = 0; i < K; i++)
        mox__cuda_group_free(later[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_stage_batch_is_correct),
        cmocka_unit_test(repeated_shape_reuses_the_graph),
        cmocka_unit_test(pipelined_submissions_coalesce),
        cmocka_unit_test(independent_dispatches_all_run),
        cmocka_unit_test(single_dispatch_reuses_a_one_node_graph),
        cmocka_unit_test(an_evicted_plan_is_made_again),
        cmocka_unit_test(transfers_copy_through_staging),
        cmocka_unit_test(held_submissions_start_on_release),
        cmocka_unit_test(group_successors_outgrow_the_inline_room),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
