/* test_front_uniform.c - uniform participation: barriers and warp
 * operations under control flow that depends on the thread index are
 * rejected at the call, naming the condition's line; the cooperative
 * patterns of real kernels are accepted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

/* Each fixture marks the rejected call with ERROR and the condition that
 * makes it divergent with COND. */
static void expect_divergent(const char *name, const char *what) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FIXTURE("uniform"), name);
    char text[1400];
    snprintf(text, sizeof text,
             "%s requires uniform participation: control flow at %s:%u depends on the thread index",
             what, path, front_marker_line(path, "/* COND */"));
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, "/* ERROR */", text);
    front_run_free(&run);
}

static void test_accepted_patterns(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("uniform/accepted.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    const mox_abi_kernel *k = front_kernel(run.module, "patterns", NULL);
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP | MOX_KFEAT_SHARED);
    front_run_free(&run);
}

static void test_barrier_under_if(void **state) {
    (void)state;
    expect_divergent("if_barrier.c", "mox_barrier");
}

static void test_barrier_in_thread_dependent_loop(void **state) {
    (void)state;
    expect_divergent("loop_barrier.c", "mox_barrier");
}

static void test_barrier_in_loop_over_loaded_bound(void **state) {
    (void)state;
    expect_divergent("while_data.c", "mox_barrier");
}

static void test_barrier_in_do_while(void **state) {
    (void)state;
    expect_divergent("do_while.c", "mox_barrier");
}

static void test_barrier_after_early_return(void **state) {
    (void)state;
    expect_divergent("early_return.c", "mox_barrier");
}

static void test_barrier_after_varying_break(void **state) {
    (void)state;
    expect_divergent("break_loop.c", "mox_barrier");
}

static void test_barrier_skipped_by_goto(void **state) {
    (void)state;
    expect_divergent("goto_skip.c", "mox_barrier");
}

static void test_barrier_in_switch(void **state) {
    (void)state;
    expect_divergent("switch_lane.c", "mox_barrier");
}

static void test_helper_with_barrier(void **state) {
    (void)state;
    expect_divergent("helper_barrier.c", "call to 'sync_block' (which uses mox_barrier)");
}

static void test_varying_through_variables(void **state) {
    (void)state;
    expect_divergent("data_flow.c", "mox_barrier");
}

static void test_varying_through_control_dependence(void **state) {
    (void)state;
    expect_divergent("implicit_flow.c", "mox_barrier");
}

static void test_varying_through_pointer(void **state) {
    (void)state;
    expect_divergent("pointer_alias.c", "mox_barrier");
}

static void test_varying_helper_parameter(void **state) {
    (void)state;
    expect_divergent("helper_param.c", "mox_barrier");
}

static void test_varying_helper_result(void **state) {
    (void)state;
    expect_divergent("helper_return.c", "mox_barrier");
}

static void test_branch_from_macro(void **state) {
    (void)state;
    expect_divergent("macro_branch.c", "mox_barrier");
}

static void test_warp_op_under_lane_condition(void **state) {
    (void)state;
    expect_divergent("warp_lane.c", "mox_warp_sum_f32");
}

static void test_barrier_under_warp_uniform_condition(void **state) {
    (void)state;
    expect_divergent("warp_id_barrier.c", "mox_barrier");
}

static void test_warp_op_in_conditional_operator(void **state) {
    (void)state;
    expect_divergent("ternary.c", "mox_warp_max_f32");
}

static void test_warp_op_after_short_circuit(void **state) {
    (void)state;
    expect_divergent("short_circuit.c", "mox_warp_any");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepted_patterns),
        cmocka_unit_test(test_barrier_under_if),
        cmocka_unit_test(test_barrier_in_thread_dependent_loop),
        cmocka_unit_test(test_barrier_in_loop_over_loaded_bound),
        cmocka_unit_test(test_barrier_in_do_while),
        cmocka_unit_test(test_barrier_after_early_return),
        cmocka_unit_test(test_barrier_after_varying_break),
        cmocka_unit_test(test_barrier_skipped_by_goto),
        cmocka_unit_test(test_barrier_in_switch),
        cmocka_unit_test(test_helper_with_barrier),
        cmocka_unit_test(test_varying_through_variables),
        cmocka_unit_test(test_varying_through_control_dependence),
        cmocka_unit_test(test_varying_through_pointer),
        cmocka_unit_test(test_varying_helper_parameter),
        cmocka_unit_test(test_varying_helper_result),
        cmocka_unit_test(test_branch_from_macro),
        cmocka_unit_test(test_warp_op_under_lane_condition),
        cmocka_unit_test(test_barrier_under_warp_uniform_condition),
        cmocka_unit_test(test_warp_op_in_conditional_operator),
        cmocka_unit_test(test_warp_op_after_short_circuit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
