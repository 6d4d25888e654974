/* test_front_dynamic.c - MOX_SHARED_DYNAMIC: the kernel feature
 * "dynamic_shared" (ABI version 2), and where moxc refuses it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

static void test_dynamic_shared_accepted(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/dynamic_shared.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    const mox_abi_kernel *k = front_kernel(run.module, "tiled", NULL);
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED | MOX_KFEAT_DYNAMIC_SHARED | MOX_KFEAT_GATE_DEFERRED);
    assert_int_equal(run.module->abi->version, 2);
    front_run_free(&run);
}

static void test_dynamic_shared_refused(void **state) {
    (void)state;
    const char *src = FIXTURE("reject/dynamic_shared_bad.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:helper",
                          "MOX_SHARED_DYNAMIC 'mine' must be declared in a kernel body, not in a helper function");
    front_expect_error_at(&run, src, "EXPECT:loop",
                          "MOX_SHARED_DYNAMIC 'again' must not be declared inside a loop; declare it at the top of "
                          "the kernel");
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dynamic_shared_accepted),
        cmocka_unit_test(test_dynamic_shared_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
