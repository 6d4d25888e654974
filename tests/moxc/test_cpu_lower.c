/* test_cpu_lower.c - moxc's CPU lowering (cpu_lower*.c) through the real
 * front end: golden files of the work-group functions of a barrier kernel,
 * a warp kernel and a kernel with barriers in a uniform loop
 * (kernels/wg/, golden/wg/), what the variable analysis kept per thread,
 * and the note of each construct that keeps a kernel on its old
 * executor. The generated code running is tests/cpu's and the dialect
 * tests' job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

static moxc_module *parse(const char *rel)
{
    char *path = test_path(rel);
    const char *sources[] = {path};
    moxc_parse_options o = {
        .sources = sources,
        .source_count = 1,
        .mox_include_dir = MOX_INCLUDE_DIR,
        .diagnostics = stderr,
    };
    moxc_module *m = NULL;
    if (!moxc_parse(&o, &m))
        fail_msg("%s does not parse", rel);
    free(path);
    return m;
}

static const moxc_kernel_info *info_of(const moxc_module *m, const char *name, size_t *index)
{
    for (size_t k = 0; k < m->abi->kernel_count; ++k)
        if (strcmp(m->abi->kernels[k].name, name) == 0) {
            if (index)
                *index = k;
            return &m->kernels[k];
        }
    fail_msg("no kernel %s", name);
    return NULL;
}

static void golden(const char *kernel_file, const char *golden_file)
{
    moxc_module *m = parse(kernel_file);
    char *cpu = moxc_gen_cpu(m, "0000000000000000000000000000000000000000000000000000000000000000");
    assert_non_null(cpu);
    check_golden(golden_file, cpu);
    free(cpu);
    moxc_module_free(m);
}

static void test_golden_barrier(void **state)
{
    (void)state;
    golden("kernels/wg/barrier.c", "wg/barrier.c");
}

static void test_golden_warp(void **state)
{
    (void)state;
    golden("kernels/wg/warp.c", "wg/warp.c");
}

static void test_golden_loop(void **state)
{
    (void)state;
    golden("kernels/wg/loop.c", "wg/loop.c");
}

/* Grid-stride loops (for and while forms) walked side by side; one that
 * breaks out stays each thread's own loop. */
static void test_golden_stride(void **state)
{
    (void)state;
    golden("kernels/wg/stride.c", "wg/stride.c");
}

/* Only what lives across a barrier is kept per thread. */
static void test_what_is_privatized(void **state)
{
    (void)state;
    moxc_module *m = parse("kernels/wg/loop.c");
    const moxc_cpu_stats *s = &info_of(m, "tiled", NULL)->cpu.stats;
    /* acc; tx, ty, row, col are recomputed, steps and s block-level */
    assert_int_equal(s->locals, 7);
    assert_int_equal(s->privatized, 1);
    assert_int_equal(s->private_bytes, 4);
    assert_int_equal(s->block_level, 2);
    assert_int_equal(s->rematerialized, 4);
    assert_int_equal(s->regions, 4);
    moxc_module_free(m);
    m = parse("kernels/wg/barrier.c");
    s = &info_of(m, "tree_sum", NULL)->cpu.stats;
    assert_int_equal(s->privatized, 0);
    assert_int_equal(s->warp_steps, 0);
    moxc_module_free(m);
    m = parse("kernels/wg/warp.c");
    s = &info_of(m, "warp_scan", NULL)->cpu.stats;
    assert_int_equal(s->warp_steps, 3);
    moxc_module_free(m);
}

static void expect_note(const moxc_module *m, const char *kernel, moxc_cpu_executor executor, const char *text)
{
    size_t k;
    const moxc_kernel_info *info = info_of(m, kernel, &k);
    assert_null(info->cpu.body);
    assert_non_null(info->cpu.note);
    if (!strstr(info->cpu.note, text))
        fail_msg("kernel %s: note \"%s\" lacks \"%s\"", kernel, info->cpu.note, text);
    assert_non_null(strstr(info->cpu.note, "fallback.c:"));
    assert_int_equal(moxc_cpu_executor_of(m, k, true), executor);
}

static void test_fallback_notes(void **state)
{
    (void)state;
    moxc_module *m = parse("kernels/wg/fallback.c");
    expect_note(m, "in_switch", MOXC_CPU_FIBERS, "a barrier or warp operation inside a switch statement");
    expect_note(m, "in_helper", MOXC_CPU_FIBERS, "inside the called function 'sync_then' at");
    expect_note(m, "in_helpers", MOXC_CPU_FIBERS,
                "inside the called functions 'sync_then', 'warp_total' at");
    expect_note(m, "in_macro", MOXC_CPU_FIBERS, "a warp operation written by a macro");
    expect_note(m, "in_conditional", MOXC_CPU_FIBERS, "a warp operation inside &&, ||, ?: or a comma");
    expect_note(m, "nested_warp", MOXC_CPU_FIBERS, "a warp operation inside the argument of another");
    expect_note(m, "with_goto", MOXC_CPU_FIBERS, "goto or a label");
    size_t k;
    assert_non_null(info_of(m, "plain_macro_use", &k)->cpu.body);
    assert_int_equal(moxc_cpu_executor_of(m, k, true), MOXC_CPU_LOOPS);
    /* without plans (moxc's fallback when work-group functions fail to
     * compile) a barrier-free kernel calls the kernel per thread */
    assert_int_equal(moxc_cpu_executor_of(m, k, false), MOXC_CPU_THREAD_CALLS);
    char *cpu = moxc_gen_cpu_unplanned(m, "0000000000000000000000000000000000000000000000000000000000000000");
    assert_non_null(strstr(cpu, "mox__group_plain_macro_use, MOX_KFEAT_GATE_DEFERRED, MOX_CPU_EXEC_THREAD_CALLS"));
    assert_null(strstr(cpu, "mox__wg_plain_macro_use"));
    free(cpu);
    moxc_module_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_barrier),     cmocka_unit_test(test_golden_warp),
        cmocka_unit_test(test_golden_loop),        cmocka_unit_test(test_golden_stride),        cmocka_unit_test(test_what_is_privatized),
        cmocka_unit_test(test_fallback_notes),
    };
    return cmocka_run_group_tests_name("moxc_cpu_lower", tests, NULL, NULL);
}
