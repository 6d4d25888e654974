/* test_front_tables.c - MOX_TABLE parameters: their ABI (kind "table", an
 * array layout, ABI version 2), uniform reads at uniform indices, and the
 * tables moxc refuses (no elements, atomics, more parameter bytes than
 * CUDA passes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

static void test_tables_accepted(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/tables.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    size_t ki;
    const mox_abi_kernel *k = front_kernel(run.module, "tabled", &ki);
    assert_int_equal(run.module->abi->version, 2);
    assert_int_equal(k->params[2].kind, MOX_PARAM_TABLE);
    char *sig = front_signature(k->params[2].layout);
    assert_string_equal(sig, "[f32;9]");
    free(sig);
    assert_int_equal(k->params[3].kind, MOX_PARAM_TABLE);
    sig = front_signature(k->params[3].layout);
    assert_string_equal(sig, "[Body{pos@0:f32x4,vel@16:f32x3,mass@28:f32};4]");
    free(sig);
    assert_int_equal(k->params[3].layout->size, 128);
    assert_string_equal(run.module->kernels[ki].params[3].c_spelling, "Body");
    assert_int_equal(k->params[4].layout->length, 4);
    front_run_free(&run);
}

static void test_tables_refused(void **state) {
    (void)state;
    const char *src = FIXTURE("reject/tables_bad.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:zero",
                          "MOX_TABLE 'w' of kernel 'zero_count' must have a positive integer constant count, got (0)");
    front_expect_error_at(&run, src, "EXPECT:atomic", "MOX_TABLE 'hits' of kernel 'atomic_table' holds atomics; a table is read-only");
    front_expect_error_at(&run, src, "EXPECT:too_big",
                          "kernel 'too_big' has 36056 bytes of parameters (the largest, table 'huge', 36000); CUDA "
                          "passes at most 32764 bytes of kernel parameters, where values and tables live");
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_accepted),
        cmocka_unit_test(test_tables_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
