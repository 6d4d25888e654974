/* runner_test.c - the runner's summary formulas (runner_stats.c): p10 =
 * sorted[(n-1)/10], p90 = sorted[ceil((n-1)*9/10)], the median the mean of
 * the two middle values for even n; baselines found by suite/name/params. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runner.h"

static void test_odd_count(void **state)
{
    (void)state;
    const double v[] = {9, 1, 8, 2, 7, 3, 6, 4, 5, 10, 11}; /* 1..11 shuffled */
    bench_stats s;
    bench_stats_compute(v, 11, &s);
    assert_true(s.min == 1 && s.max == 11);
    assert_true(s.p10 == 2);  /* sorted[(11-1)/10] = sorted[1] */
    assert_true(s.p90 == 10); /* sorted[ceil(90/10)] = sorted[9] */
    assert_true(s.median == 6);
    assert_true(s.mean == 6);
}

static void test_even_count(void **state)
{
    (void)state;
    const double v[] = {4, 1, 3, 2};
    bench_stats s;
    bench_stats_compute(v, 4, &s);
    assert_true(s.median == 2.5);
    assert_true(s.p10 == 1);  /* sorted[0] */
    assert_true(s.p90 == 4);  /* sorted[ceil(27/10)] = sorted[3] */
    assert_true(s.mean == 2.5);
    /* The midpoint never overflows. */
    const double big[] = {1.5e308, 1.7e308};
    bench_stats_compute(big, 2, &s);
    assert_true(s.median == 1.6e308);
}

static void test_single_and_empty(void **state)
{
    (void)state;
    const double one = 42;
    bench_stats s;
    bench_stats_compute(&one, 1, &s);
    assert_true(s.min == 42 && s.p10 == 42 && s.median == 42 && s.p90 == 42 && s.max == 42);
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_case *c = bench_case_add(&r, "s", "n", "v", "us");
    assert_false(bench_stats_of(c, &s)); /* a case without samples has no summary */
    bench_report_free(&r);
}

static void test_baseline_lookup(void **state)
{
    (void)state;
    bench_report r;
    memset(&r, 0, sizeof r);
    bench_case *ref = bench_case_add(&r, "quality", "vec-add", "ref", "us");
    bench_case *gen = bench_case_add(&r, "quality", "vec-add", "gen", "us");
    bench_case *other = bench_case_add(&r, "quality", "scan", "ref", "us");
    snprintf(gen->baseline, sizeof gen->baseline, "ref");
    assert_ptr_equal(bench_case_baseline(&r, gen), ref);
    assert_null(bench_case_baseline(&r, ref));
    (void)other;
    for (int i = 0; i < 100; i++)
        bench_case_sample(gen, i);
    assert_int_equal(gen->count, 100);
    bench_case_fail(&r, gen, "first %d", 1);
    bench_case_fail(&r, gen, "second");
    assert_string_equal(gen->error, "first 1");
    assert_int_equal(r.failures, 1);
    r.config.filter = "quality/sc";
    assert_true(bench_wants(&r, "quality", "scan"));
    assert_false(bench_wants(&r, "quality", "vec-add"));
    bench_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_odd_count),
        cmocka_unit_test(test_even_count),
        cmocka_unit_test(test_single_and_empty),
        cmocka_unit_test(test_baseline_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
