/* test_front_uniform.c - uniform participation: barriers and warp
 * operations under control flow that depends on the thread index are
 * rejected at the call, naming the condition's line; the cooperative
 * patterns of real kernels are accepted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

/* Each fixture marks the rejected call with ERROR, the condition that
 * makes it divergent with COND and the root of the variation with SRC (and
 * WRITE, ADDRESS where the reason names those). In `reason`, "@SRC" etc.
 * stand for "path:line" of the marker. */
static char *with_places(const char *path, const char *reason) {
    static const char *const markers[] = {"SRC", "COND", "WRITE", "ADDRESS"};
    char *text = strdup(reason);
    for (size_t m = 0; m < sizeof markers / sizeof markers[0]; m++) {
        char key[16], comment[24];
        snprintf(key, sizeof key, "@%s", markers[m]);
        snprintf(comment, sizeof comment, "/* %s */", markers[m]);
        char *at;
        while ((at = strstr(text, key)) != NULL) {
            char place[1200];
            snprintf(place, sizeof place, "%s:%u", path, front_marker_line(path, comment));
            size_t n = strlen(text) - strlen(key) + strlen(place) + 1;
            char *next = malloc(n);
            snprintf(next, n, "%.*s%s%s", (int)(at - text), text, place, at + strlen(key));
            free(text);
            text = next;
        }
    }
    return text;
}

static void expect_divergent(const char *name, const char *what, const char *reason) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", FIXTURE("uniform"), name);
    char *why = with_places(path, reason);
    char text[2800];
    snprintf(text, sizeof text, "%s requires uniform participation: control flow at %s:%u depends on %s", what,
             path, front_marker_line(path, "/* COND */"), why);
    free(why);
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, "/* ERROR */", text);
    front_run_free(&run);
}

#define THREAD_INDEX "the thread index (mox_thread_idx() at @SRC)"

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
    expect_divergent("if_barrier.c", "mox_barrier",
                     THREAD_INDEX " through 't'");
}

static void test_barrier_in_thread_dependent_loop(void **state) {
    (void)state;
    expect_divergent("loop_barrier.c", "mox_barrier",
                     THREAD_INDEX " through 'i'");
}

static void test_barrier_in_loop_over_loaded_bound(void **state) {
    (void)state;
    expect_divergent("while_data.c", "mox_barrier",
                     "a value read from buffer 'limits' (at @SRC)");
}

static void test_barrier_in_do_while(void **state) {
    (void)state;
    expect_divergent("do_while.c", "mox_barrier",
                     "a value read from buffer 'data' (at @SRC)");
}

static void test_barrier_after_early_return(void **state) {
    (void)state;
    expect_divergent("early_return.c", "mox_barrier",
                     THREAD_INDEX " through 'i'");
}

static void test_barrier_after_varying_break(void **state) {
    (void)state;
    expect_divergent("break_loop.c", "mox_barrier",
                     "a value read from buffer 'limits' (at @SRC)");
}

static void test_barrier_skipped_by_goto(void **state) {
    (void)state;
    expect_divergent("goto_skip.c", "mox_barrier",
                     THREAD_INDEX);
}

static void test_barrier_in_switch(void **state) {
    (void)state;
    expect_divergent("switch_lane.c", "mox_barrier",
                     THREAD_INDEX);
}

static void test_helper_with_barrier(void **state) {
    (void)state;
    expect_divergent("helper_barrier.c", "call to 'sync_block' (which uses mox_barrier)",
                     "the lane index (mox_lane_id() at @SRC)");
}

static void test_varying_through_variables(void **state) {
    (void)state;
    expect_divergent("data_flow.c", "mox_barrier",
                     THREAD_INDEX " through 'go', 'scaled', 't'");
}

static void test_varying_through_control_dependence(void **state) {
    (void)state;
    expect_divergent("implicit_flow.c", "mox_barrier",
                     THREAD_INDEX " through 'flag' (assigned under control flow at @SRC)");
}

static void test_varying_through_pointer(void **state) {
    (void)state;
    expect_divergent("pointer_alias.c", "mox_barrier",
                     "'x', whose address is taken at @SRC (moxc does not follow pointers)");
}

static void test_varying_helper_parameter(void **state) {
    (void)state;
    expect_divergent("helper_param.c", "mox_barrier",
                     THREAD_INDEX " through parameter 'k' of 'maybe_sync'");
}

static void test_varying_helper_result(void **state) {
    (void)state;
    expect_divergent("helper_return.c", "mox_barrier",
                     THREAD_INDEX " through the result of 'my_index'");
}

static void test_branch_from_macro(void **state) {
    (void)state;
    expect_divergent("macro_branch.c", "mox_barrier",
                     THREAD_INDEX);
}

static void test_warp_op_under_lane_condition(void **state) {
    (void)state;
    expect_divergent("warp_lane.c", "mox_warp_sum_f32",
                     "the lane index (mox_lane_id() at @SRC)");
}

/* CUDA's warp index, t / 32, under a warp operation: the message says to
 * use mox_warp_id() (porting-cuda.md). */
static void test_warp_op_under_divided_thread_index(void **state) {
    (void)state;
    expect_divergent("warp_by_division.c", "mox_warp_sum_f32",
                     THREAD_INDEX " through 'wid', 't'; to branch per warp use mox_warp_id(), which moxc "
                     "knows is the same on every lane of a warp (not arithmetic on the thread index such "
                     "as t / 32)");
}

static void test_barrier_under_warp_uniform_condition(void **state) {
    (void)state;
    expect_divergent("warp_id_barrier.c", "mox_barrier",
                     "the warp index (mox_warp_id() at @SRC), which is the same only within a warp");
}

/* A root ending in a ", which ..." clause, then the variables: a comma
 * before "through". */
static void test_barrier_under_warp_vote_through_variable(void **state) {
    (void)state;
    expect_divergent("warp_vote_barrier.c", "mox_barrier",
                     "the warp-wide result of mox_warp_any (at @SRC), which is the same only within a warp, "
                     "through 'any'");
}

static void test_warp_op_in_conditional_operator(void **state) {
    (void)state;
    expect_divergent("ternary.c", "mox_warp_max_f32",
                     THREAD_INDEX " through 't'");
}

static void test_warp_op_after_short_circuit(void **state) {
    (void)state;
    expect_divergent("short_circuit.c", "mox_warp_any",
                     THREAD_INDEX " through 't'");
}

static void test_shared_bound_accepted(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("uniform/shared_bound.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    front_run_free(&run);
}

static void test_shared_rewritten_in_loop(void **state) {
    (void)state;
    expect_divergent("shared_rewritten.c", "mox_barrier",
                     "a value read from shared memory 'n_s' (at @SRC), which moxc cannot prove every thread reads "
                     "alike: the write at @WRITE is not separated from it by a mox_barrier() statement in the same "
                     "block of statements");
}

static void test_shared_address_taken(void **state) {
    (void)state;
    expect_divergent("shared_escape.c", "mox_barrier",
                     "a value read from shared memory 'go' (at @SRC), which moxc cannot prove every thread reads "
                     "alike: its address is taken at @ADDRESS");
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
        cmocka_unit_test(test_warp_op_under_divided_thread_index),
        cmocka_unit_test(test_barrier_under_warp_uniform_condition),
        cmocka_unit_test(test_barrier_under_warp_vote_through_variable),
        cmocka_unit_test(test_warp_op_in_conditional_operator),
        cmocka_unit_test(test_warp_op_after_short_circuit),
        cmocka_unit_test(test_shared_bound_accepted),
        cmocka_unit_test(test_shared_rewritten_in_loop),
        cmocka_unit_test(test_shared_address_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
