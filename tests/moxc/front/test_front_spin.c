/* test_front_spin.c - spin-waits on atomics: a loop that only ends when
 * another thread's atomic store lands never ends on the CPU, which runs a
 * block's threads one after another between barriers. moxc refuses it at
 * the loop and accepts the near cases (CAS retries, bounded loops). */
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

#define SPIN_HEAD "this loop waits for another thread's atomic store (a spin-wait: its exit at "
#define SPIN_TAIL                                                                                       \
    "); threads of a block only wait for each other at mox_barrier, and blocks never wait for each " \
    "other; store before a mox_barrier() and load after it, or split the work into two dispatches"

static void test_spin_waits_rejected(void **state) {
    (void)state;
    const char *src = FIXTURE("reject/spin.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:return", SPIN_HEAD);
    front_expect_error_at(&run, src, "EXPECT:while", SPIN_HEAD);
    front_expect_error_at(&run, src, "EXPECT:while", "reads only mox_atomic_load_u32" SPIN_TAIL);
    front_expect_error_at(&run, src, "EXPECT:do", SPIN_HEAD);
    front_expect_error_at(&run, src, "EXPECT:break", SPIN_HEAD);
    front_expect_error_at(&run, src, "EXPECT:for", SPIN_HEAD);
    size_t count = 0;
    for (const char *p = run.diagnostics; (p = strstr(p, "error: ")) != NULL; p++)
        count++;
    assert_int_equal(count, 5);
    front_run_free(&run);
}

/* A barrier in the loop: not a spin-wait (threads wait there), but a
 * barrier under a condition read from an atomic breaks uniform
 * participation, so that check refuses it instead. */
static void test_barrier_in_loop_is_not_a_spin(void **state) {
    (void)state;
    const char *src = FIXTURE("reject/spin_barrier.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:barrier", "mox_barrier requires uniform participation");
    assert_null(strstr(run.diagnostics, "spin-wait"));
    front_run_free(&run);
}

static void test_near_cases_accepted(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/spin_near.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spin_waits_rejected),
        cmocka_unit_test(test_barrier_in_loop_is_not_a_spin),
        cmocka_unit_test(test_near_cases_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
