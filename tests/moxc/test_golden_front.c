/* test_golden_front.c - the generators on a module the real front end
 * parsed (tests/moxc/kernels/features.c): golden files of every output
 * (tests/moxc/golden/features/), so each construct's generated code is
 * pinned end to end. MOXC_UPDATE_GOLDEN=1 rewrites them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

#define ARTIFACT_DIR "/artifacts/features/0123456789abcdef"

static void test_features_golden(void **state)
{
    (void)state;
    char *source = test_path("kernels/features.c");
    const char *sources[] = {source};
    moxc_parse_options opts;
    memset(&opts, 0, sizeof opts);
    opts.sources = sources;
    opts.source_count = 1;
    opts.mox_include_dir = MOX_INCLUDE_DIR;
    opts.diagnostics = stderr;
    moxc_module *m = NULL;
    assert_true(moxc_parse(&opts, &m));
    assert_true(moxc_gen_check(m, "features", stderr));
    char *json = NULL, sha[65];
    assert_true(moxc_gen_abi(m, &json, sha));
    char *text = read_text(source);
    assert_non_null(text);
    moxc_source_text st = {m->edits[0].path, text, strlen(text)};
    char *h = moxc_gen_bindings_h(m, "features"), *c = moxc_gen_bindings_c(m, "features", ARTIFACT_DIR);
    char *cpu = moxc_gen_cpu(m, sha), *cuda = moxc_gen_cuda(m, &st, 1);
    assert_non_null(h);
    assert_non_null(c);
    assert_non_null(cpu);
    assert_non_null(cuda);
    check_golden("features/abi.json", json);
    check_golden("features/features.h", h);
    check_golden("features/features.c", c);
    check_golden("features/kernels_cpu.c", cpu);
    check_golden("features/kernels_cuda.cu", cuda);
    free(json);
    free(text);
    free(h);
    free(c);
    free(cpu);
    free(cuda);
    free(source);
    moxc_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_features_golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
