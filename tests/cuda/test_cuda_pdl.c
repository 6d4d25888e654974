/* tests/cuda/test_cuda_pdl.c - programmatic dependent launch (MOX_CUDA_PDL,
 * docs/cuda-backend.md): with it on, graph edges into kernels whose module
 * carries the grid-wait marker are programmatic (counted by the backend's
 * programmatic_edges counter), from the port the setting names; results and
 * failure gating stay what they are without it, and the entries without the
 * gate check run where the marker says they wait too (2). End by default; a
 * module whose marker reads 1 keeps the gated entries; one without the
 * marker, or whose marker reads 0, gets ordinary edges; a driver
 * that refuses programmatic edges, at adding or at instantiating, gets
 * ordinary ones and the setting turns off for the device; a bad value is
 * MOX_ERR_CONFIG. Cases that steer the simulated driver (MOX_SIM_*) run on
 * it only. Exits 77 without a GPU. */
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

static bool on_simulator(void)
{
    const char *lib = getenv("MOX_CUDA_LIBRARY");
    return lib && strstr(lib, "simcuda") != NULL;
}

static unsigned long long edges(void)
{
    return atomic_load(&F.dev->stats.programmatic_edges);
}

/* Opens the backend with MOX_CUDA_PDL=pdl and one MOX_SIM_* knob set. */
static void open_with(const char *pdl, const char *knob, const char *value)
{
    unsetenv("MOX_SIM_GRID_WAIT");
    unsetenv("MOX_SIM_REFUSE_PDL");
    if (pdl)
        setenv("MOX_CUDA_PDL", pdl, 1);
    else
        unsetenv("MOX_CUDA_PDL");
    if (knob)
        setenv(knob, value, 1);
    fx_open(&F);
    in = fx_alloc(&F, N * 4);
    tmp = fx_alloc(&F, N * 4);
    out = fx_alloc(&F, N * 4);
    for (uint32_t i = 0; i < N; i++)
        host_in[i] = (float)(i % 1024) * 0.25f;
    fx_put(&F, in, host_in, sizeof host_in);
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("MOX_CUDA_PDL");
    unsetenv("MOX_SIM_GRID_WAIT");
    unsetenv("MOX_SIM_REFUSE_PDL");
    if (!F.backend)
        return 0; /* skipped before opening */
    fx_free(&F, in);
    fx_free(&F, tmp);
    fx_free(&F, out);
    fx_close(&F);
    return 0;
}

/* scale(in -> tmp) then finish(tmp -> out): one edge, run and checked. */
static void run_two_stage(void)
{
    fx_sub s;
    fx_sub_init(&s);
    fx_kernel(&s, &F, FX_SCALE, (N + 255) / 256, 256);
    fx_ptr(&s, in);
    fx_ptr(&s, tmp);
    fx_u32(&s, N);
    fx_kernel(&s, &F, FX_FINISH, (N + 127) / 128, 128);
    fx_ptr(&s, tmp);
    fx_ptr(&s, out);
    fx_u32(&s, N);
    fx_pred(&s, 0);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(s.status, MOX_OK);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_OK);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_OK);
    float got[N];
    fx_get(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < N; i++)
        assert_true(got[i] == host_in[i] * 4.0f + 3.0f + 1.0f);
}

static void skip_without_pdl_gpu(void)
{
    if (F.dev->pdl == MOX__CUDA_PDL_OFF) {
        print_message("skipped: this GPU or driver has no programmatic dependent launch\n");
        skip();
    }
}

static void start_makes_the_dependent_edge_programmatic(void **state)
{
    (void)state;
    open_with("start", NULL, NULL);
    skip_without_pdl_gpu();
    run_two_stage();
    assert_int_equal(edges(), 1);
    for (int i = 0; i < 5; i++)
        run_two_stage(); /* the cached graph: no new edges */
    assert_int_equal(edges(), 1);
    assert_false(atomic_load(&F.dev->pdl_refused));
    /* The entries without the gate check wait too (the marker reads 2):
     * nothing in it can fail, so both nodes run them. */
    assert_non_null(F.mod->kernels[FX_FINISH].fn_ungated);
    assert_int_equal(atomic_load(&F.dev->stats.ungated_nodes), 2);
}

static void end_makes_the_dependent_edge_programmatic(void **state)
{
    (void)state;
    open_with("end", NULL, NULL);
    skip_without_pdl_gpu();
    assert_int_equal(F.dev->pdl, MOX__CUDA_PDL_END);
    run_two_stage();
    assert_int_equal(edges(), 1);
}

/* MOX_CUDA_PDL=value means off: ordinary edges only. */
static void expect_off(const char *value)
{
    open_with(value, NULL, NULL);
    assert_int_equal(F.dev->pdl, MOX__CUDA_PDL_OFF);
    run_two_stage();
    assert_int_equal(edges(), 0);
    /* Nothing in it can fail: both nodes run the entries without the check. */
    assert_int_equal(atomic_load(&F.dev->stats.ungated_nodes), 2);
}

/* Unset means end (measured on the H200: docs/cuda-backend.md). */
static void end_by_default(void **state)
{
    (void)state;
    open_with(NULL, NULL, NULL);
    skip_without_pdl_gpu();
    assert_int_equal(F.dev->pdl, MOX__CUDA_PDL_END);
    run_two_stage();
    assert_int_equal(edges(), 1);
}

static void off_when_set_off(void **state)
{
    (void)state;
    expect_off("off");
}

/* maybe_fail(a) fails, finish(a -> b) after it is gated, under PDL too. */
static void gating_follows_a_failure_across_a_programmatic_edge(void **state)
{
    (void)state;
    open_with("start", NULL, NULL);
    skip_without_pdl_gpu();
    fx_sub s;
    fx_sub_init(&s);
    fx_kernel(&s, &F, FX_MAYBE_FAIL, 1, 64);
    fx_ptr(&s, tmp);
    fx_u32(&s, 9);
    fx_u32(&s, 0);
    fx_kernel(&s, &F, FX_FINISH, 1, 64);
    fx_ptr(&s, tmp);
    fx_ptr(&s, out);
    fx_u32(&s, 1);
    fx_pred(&s, 0);
    fx_submit(&F, &s);
    fx_wait(&s);
    assert_int_equal(edges(), 1);
    assert_int_equal(fx_state(&s, 0), MOX_DISPATCH_FAILED);
    assert_int_equal(fx_code(&s, 0), 9);
    assert_int_equal(fx_state(&s, 1), MOX_DISPATCH_GATED);
}

static void sim_case(const char *knob, const char *value)
{
    if (!on_simulator()) {
        print_message("skipped: steers the simulated driver\n");
        skip();
    }
    open_with("start", knob, value);
    run_two_stage();
}

static void a_module_without_the_marker_gets_ordinary_edges(void **state)
{
    (void)state;
    sim_case("MOX_SIM_GRID_WAIT", "absent");
    assert_int_equal(edges(), 0);
}

/* A module whose entries without the gate check lack the wait (built
 * before they had it): programmatic edges, into gated entries only. */
static void a_marker_reading_one_keeps_the_gated_entries(void **state)
{
    (void)state;
    sim_case("MOX_SIM_GRID_WAIT", "1");
    assert_int_equal(edges(), 1);
    assert_null(F.mod->kernels[FX_FINISH].fn_ungated);
    assert_int_equal(atomic_load(&F.dev->stats.ungated_nodes), 0);
}

static void a_marker_reading_zero_gets_ordinary_edges(void **state)
{
    (void)state;
    sim_case("MOX_SIM_GRID_WAIT", "0");
    assert_int_equal(edges(), 0);
}

static void refused_edges_become_ordinary_ones(void **state)
{
    (void)state;
    sim_case("MOX_SIM_REFUSE_PDL", "edges");
    assert_int_equal(edges(), 0);
    assert_true(atomic_load(&F.dev->pdl_refused));
    run_two_stage();
    assert_int_equal(edges(), 0);
}

static void a_refused_instantiation_rebuilds_the_graph_without_them(void **state)
{
    (void)state;
    sim_case("MOX_SIM_REFUSE_PDL", "instantiate");
    assert_int_equal(edges(), 1); /* added, then dropped with the rebuilt graph */
    assert_true(atomic_load(&F.dev->pdl_refused));
    run_two_stage();
    assert_int_equal(edges(), 1);
}

static void a_bad_value_is_a_config_error(void **state)
{
    (void)state;
    mox_error *err = fx_open_error("MOX_CUDA_PDL", "fast");
    assert_non_null(err);
    assert_int_equal(mox_error_code(err), MOX_ERR_CONFIG);
    assert_non_null(strstr(mox_error_message(err), "MOX_CUDA_PDL must be off, end or start (got 'fast')"));
    mox_error_release(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_bad_value_is_a_config_error),
        cmocka_unit_test_teardown(start_makes_the_dependent_edge_programmatic, teardown),
        cmocka_unit_test_teardown(end_makes_the_dependent_edge_programmatic, teardown),
        cmocka_unit_test_teardown(end_by_default, teardown),
        cmocka_unit_test_teardown(off_when_set_off, teardown),
        cmocka_unit_test_teardown(gating_follows_a_failure_across_a_programmatic_edge, teardown),
        cmocka_unit_test_teardown(a_module_without_the_marker_gets_ordinary_edges, teardown),
        cmocka_unit_test_teardown(a_marker_reading_one_keeps_the_gated_entries, teardown),
        cmocka_unit_test_teardown(a_marker_reading_zero_gets_ordinary_edges, teardown),
        cmocka_unit_test_teardown(refused_edges_become_ordinary_ones, teardown),
        cmocka_unit_test_teardown(a_refused_instantiation_rebuilds_the_graph_without_them, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
