/* test_gate_defer.c - the deferred gate check (tools/moxc/gate_defer.c,
 * gen_cuda_source.c): which kernels of the corpus tests/moxc/kernels/gate/
 * are eligible and why the others are not (through the front end's API
 * and through `moxc inspect --emit gate`), golden kernels_cuda.cu of one
 * eligible and one ineligible kernel, the text outside the deferred copies
 * unchanged, and nvcc compiling the generated code of every corpus kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

static moxc_module *parse(const char *rel, char **text)
{
    char *source = test_path(rel);
    const char *sources[] = {source};
    moxc_parse_options opts;
    memset(&opts, 0, sizeof opts);
    opts.sources = sources;
    opts.source_count = 1;
    opts.mox_include_dir = MOX_INCLUDE_DIR;
    opts.diagnostics = stderr;
    moxc_module *m = NULL;
    assert_true(moxc_parse(&opts, &m));
    if (text) {
        *text = read_text(source);
        assert_non_null(*text);
    }
    free(source);
    return m;
}

static const moxc_gate_defer *gate_of(const moxc_module *m, const char *kernel)
{
    for (size_t k = 0; k < m->abi->kernel_count; ++k)
        if (strcmp(m->abi->kernels[k].name, kernel) == 0)
            return &m->kernels[k].gate;
    fail_msg("no kernel '%s'", kernel);
    return NULL;
}

/* The 1-based line of the first occurrence of `needle` in `text`. */
static unsigned line_of(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    assert_non_null(at);
    unsigned line = 1;
    for (const char *p = text; p < at; ++p)
        line += *p == '\n';
    return line;
}

static const char *const eligible[] = {"vec_add",        "reduce_shared",  "warp_scan",  "add_offsets",
                                       "particle_update", "count_positive", "clamp_rows", "ramp_positive",
                                       "copy_then_sum"};

/* Each ineligible kernel and the start of its reason. */
static const struct {
    const char *kernel;
    const char *reason;
} ineligible[] = {
    {"histogram", "a value read from memory is used as an index"},
    {"gather", "a value read from memory is used as an index"},
    {"halve_until_small", "a loop whose condition depends on a value read from memory"},
    {"sum_until_negative", "break under control flow that depends on memory"},
    {"barrier_if_positive", "mox_barrier under control flow that depends on memory"},
    {"helper_with_pointer", "call to 'bump', which takes a pointer parameter 'p'"},
    {"store_in_expression", "a store to memory inside a larger expression"},
    {"store_with_increment", "a store, atomic or mox_fail whose target or arguments have side effects"},
    {"pick_source", "a pointer variable assigned a value that depends on memory"},
    {"store_by_macro", "a store, atomic or mox_fail written by a macro"},
    {"shuffle_if_positive", "mox_warp_shuffle_down_f32 under control flow that depends on memory"},
};

static void test_eligible_kernels(void **state)
{
    (void)state;
    moxc_module *m = parse("kernels/gate/eligible.c", NULL);
    assert_int_equal(m->abi->kernel_count, sizeof eligible / sizeof eligible[0]);
    for (size_t i = 0; i < sizeof eligible / sizeof eligible[0]; ++i) {
        const moxc_gate_defer *g = gate_of(m, eligible[i]);
        if (!g->eligible)
            fail_msg("%s: not eligible: %s", eligible[i], g->why_not ? g->why_not : "?");
        /* the name, the parameter and at least one guarded statement */
        assert_true(g->edit_count >= 3);
        assert_true(g->start < g->end && g->start_line <= g->end_line);
        assert_null(g->why_not);
    }
    moxc_module_free(m);
}

static uint32_t features_of(const moxc_module *m, const char *kernel)
{
    for (size_t k = 0; k < m->abi->kernel_count; ++k)
        if (strcmp(m->abi->kernels[k].name, kernel) == 0)
            return m->abi->kernels[k].features;
    fail_msg("no kernel '%s'", kernel);
    return 0;
}

/* With MOXC_GATE_DEFER=1 the ABI marks the kernels whose gated entries are
 * deferred (MOX_KFEAT_GATE_DEFERRED: the runtime then derives the state of
 * a dispatch that stored nothing), and only those; without it none. */
static void test_abi_marks_deferred_kernels(void **state)
{
    (void)state;
    moxc_module *m = parse("kernels/gate/golden.c", NULL);
    assert_true(features_of(m, "vec_add") & MOX_KFEAT_GATE_DEFERRED);
    assert_true(features_of(m, "add_offsets") & MOX_KFEAT_GATE_DEFERRED);
    assert_false(features_of(m, "histogram") & MOX_KFEAT_GATE_DEFERRED);
    for (size_t k = 0; k < m->abi->kernel_count; ++k)
        assert_int_equal(moxc_gate_defer_on(m, k), m->kernels[k].gate.eligible);
    char *json = mox_abi_to_json(m->abi);
    assert_int_equal(count_occurrences(json, "\"gate_deferred\""), 2);
    free(json);
    moxc_module_free(m);
    unsetenv("MOXC_GATE_DEFER");
    m = parse("kernels/gate/golden.c", NULL);
    setenv("MOXC_GATE_DEFER", "1", 1);
    assert_true(gate_of(m, "vec_add")->eligible); /* eligible either way: inspect says so */
    for (size_t k = 0; k < m->abi->kernel_count; ++k) {
        assert_false(m->abi->kernels[k].features & MOX_KFEAT_GATE_DEFERRED);
        assert_false(moxc_gate_defer_on(m, k));
    }
    moxc_module_free(m);
}

static void test_ineligible_reasons(void **state)
{
    (void)state;
    char *text = NULL;
    moxc_module *m = parse("kernels/gate/ineligible.c", &text);
    assert_int_equal(m->abi->kernel_count, sizeof ineligible / sizeof ineligible[0]);
    for (size_t i = 0; i < sizeof ineligible / sizeof ineligible[0]; ++i) {
        const moxc_gate_defer *g = gate_of(m, ineligible[i].kernel);
        assert_false(g->eligible);
        assert_non_null(g->why_not);
        assert_int_equal(g->edit_count, 0);
        char marker[96], where[128];
        snprintf(marker, sizeof marker, "why: %s */", ineligible[i].kernel);
        snprintf(where, sizeof where, "ineligible.c:%u", line_of(text, marker));
        if (strncmp(g->why_not, ineligible[i].reason, strlen(ineligible[i].reason)) != 0 ||
            !strstr(g->why_not, where))
            fail_msg("%s: got \"%s\", expected \"%s ...%s\"", ineligible[i].kernel, g->why_not,
                     ineligible[i].reason, where);
    }
    free(text);
    moxc_module_free(m);
}

static void test_inspect_prints_the_gate(void **state)
{
    (void)state;
    char *source = test_path("kernels/gate/ineligible.c");
    char *output = NULL;
    const char *argv[] = {MOXC_EXECUTABLE, "inspect", "--emit", "gate", "--no-cuda", source, NULL};
    assert_int_equal(run_capture(argv, &output), 0);
    char *text = read_text(source);
    char expected[512];
    snprintf(expected, sizeof expected,
             "histogram: at entry: a value read from memory is used as an index at %s:%u\n", source,
             line_of(text, "why: histogram */"));
    assert_non_null(strstr(output, expected));
    assert_int_equal(count_occurrences(output, ": at entry: "), sizeof ineligible / sizeof ineligible[0]);
    free(output);
    free(text);
    free(source);

    source = test_path("kernels/gate/eligible.c");
    const char *argv2[] = {MOXC_EXECUTABLE, "inspect", "--emit", "gate", "--no-cuda", source, NULL};
    assert_int_equal(run_capture(argv2, &output), 0);
    assert_non_null(strstr(output, "vec_add: deferred: the gate is checked after the kernel's loads"));
    assert_int_equal(count_occurrences(output, ": deferred: "), sizeof eligible / sizeof eligible[0]);
    free(output);
    free(source);
}

static char *gen_cuda(const moxc_module *m, const char *text)
{
    moxc_source_text st = {m->edits[0].path, text, strlen(text)};
    char *cu = moxc_gen_cuda(m, &st, 1);
    assert_non_null(cu);
    return cu;
}

static void test_golden(void **state)
{
    (void)state;
    char *text = NULL;
    moxc_module *m = parse("kernels/gate/golden.c", &text);
    assert_true(gate_of(m, "vec_add")->eligible);
    assert_false(gate_of(m, "histogram")->eligible);
    char *cu = gen_cuda(m, text);
    check_golden("gate/kernels_cuda.cu", cu);
    /* The deferred entries leave without asking: their kernel carries
     * MOX_KFEAT_GATE_DEFERRED. */
    assert_int_equal(count_occurrences(cu, "mox__gate_leave_deferred(&mox__gv, MOX_KFEAT_GATE_DEFERRED);"), 4);
    free(cu);
    moxc_module_free(m);
    /* Parsed without MOXC_GATE_DEFER=1 an eligible kernel's gated entries
     * check the gate at entry, and no copy is generated. */
    unsetenv("MOXC_GATE_DEFER");
    m = parse("kernels/gate/golden.c", NULL);
    setenv("MOXC_GATE_DEFER", "1", 1);
    cu = gen_cuda(m, text);
    assert_null(strstr(cu, "__mox_deferred"));
    assert_non_null(strstr(cu, "if (mox__gate_enter(&mox__gate))"));
    free(cu);
    free(text);
    moxc_module_free(m);
}

/* Removes every deferred copy: from the newline before its comment to the
 * end of the second #line after it (the one that restores the numbers). */
static char *without_copies(const char *cu)
{
    char *out = strdup(cu);
    assert_non_null(out);
    char *at;
    while ((at = strstr(out, " with the gate checked after its loads: the copy")) != NULL) {
        char *start = at;
        while (start > out && start[-1] != '\n')
            --start;
        --start;
        char *end = strstr(strstr(at, "#line ") + 1, "#line ");
        assert_non_null(end);
        end = strchr(end, '\n') + 1;
        memmove(start, end, strlen(end) + 1);
    }
    return out;
}

/* The part of `cu` from `from` to the end of the function it starts. */
static char *section(const char *cu, const char *from)
{
    const char *at = strstr(cu, from);
    assert_non_null(at);
    const char *end = strstr(at, "\n}\n");
    assert_non_null(end);
    return strndup(at, (size_t)(end - at));
}

/* The pasted sources: from the first #line to the one naming kernels_cuda.cu. */
static char *sources_part(const char *cu)
{
    const char *start = strstr(cu, "#line 1 ");
    assert_non_null(start);
    const char *end = strstr(start, "\"kernels_cuda.cu\"");
    assert_non_null(end);
    while (end > start && end[-1] != '\n')
        --end;
    return strndup(start, (size_t)(end - start));
}

/* The kernels whose first guard comes after a barrier or warp operation
 * load the gate's word at entry (mox__gate_view_early), the others read
 * it at their first guard (mox__gate_view_of), whichever comes later in
 * the source: copy_then_sum stores before its barrier. */
static void test_first_guard_after_collective_loads_early(void **state)
{
    (void)state;
    char *text = NULL;
    moxc_module *m = parse("kernels/gate/eligible.c", &text);
    static const char *const early[] = {"reduce_shared", "warp_scan"};
    for (size_t i = 0; i < sizeof eligible / sizeof eligible[0]; ++i) {
        bool want = strcmp(eligible[i], early[0]) == 0 || strcmp(eligible[i], early[1]) == 0;
        if (gate_of(m, eligible[i])->load_early != want)
            fail_msg("%s: load_early %d, want %d", eligible[i], !want, want);
    }
    char *cu = gen_cuda(m, text);
    /* each kernel's two gated entries (general and no-alias) */
    assert_int_equal(count_occurrences(cu, "mox__gate_view_early(&mox__gate);"), 4);
    assert_int_equal(count_occurrences(cu, "mox__gate_view_of(&mox__gate);"),
                     2 * (sizeof eligible / sizeof eligible[0] - 2));
    char *scan = section(cu, "void __launch_bounds__(256) mox_entry_warp_scan(");
    assert_non_null(strstr(scan, "mox__gate_view_early(&mox__gate)"));
    free(scan);
    char *copy = section(cu, "void __launch_bounds__(256) mox_entry_copy_then_sum(");
    assert_non_null(strstr(copy, "mox__gate_view_of(&mox__gate)"));
    free(copy);
    free(cu);
    free(text);
    moxc_module_free(m);
}

/* The sources before the entries, without the copies, and every ungated
 * entry are what they are without the analysis: the copies only add. */
static void test_first_copy_unchanged(void **state)
{
    (void)state;
    char *text = NULL;
    moxc_module *m = parse("kernels/gate/eligible.c", &text);
    char *with = gen_cuda(m, text);
    for (size_t k = 0; k < m->abi->kernel_count; ++k)
        m->kernels[k].gate.eligible = false;
    char *plain = gen_cuda(m, text);
    assert_null(strstr(plain, "mox__g,"));
    char *stripped = without_copies(with);
    char *x = sources_part(stripped), *y = sources_part(plain);
    assert_string_equal(x, y);
    free(x);
    free(y);
    for (size_t k = 0; k < m->abi->kernel_count; ++k) {
        char entry[128];
        snprintf(entry, sizeof entry, "mox_entry_%s__ungated(", m->abi->kernels[k].name);
        char *ours = section(with, entry), *theirs = section(plain, entry);
        assert_string_equal(ours, theirs);
        free(ours);
        free(theirs);
    }
    free(stripped);
    free(plain);
    free(with);
    free(text);
    moxc_module_free(m);
}

static void nvcc_compiles(const char *rel)
{
    const char *nvcc = test_nvcc();
    if (!nvcc)
        skip();
    char *text = NULL;
    moxc_module *m = parse(rel, &text);
    char *cu = gen_cuda(m, text);
    char *dir = test_mkdtemp("gate-nvcc");
    char *src = moxc_path_join(dir, "kernels_cuda.cu"), *out = moxc_path_join(dir, "kernels.fatbin");
    char *kernels = test_path("kernels/gate");
    char *include = NULL;
    assert_true(asprintf(&include, "-I%s", kernels) > 0);
    write_text(src, cu);
    const char *argv[] = {nvcc, "-fatbin", "-x", "cu", "-std=c++17", "-O3", "-gencode", "arch=compute_90,code=sm_90",
                          "-I" MOX_INCLUDE_DIR, include, "-o", out, src, NULL};
    char *output = NULL;
    int rc = run_capture(argv, &output);
    if (rc != 0)
        fail_msg("nvcc failed on the code generated for %s:\n%s", rel, output ? output : "");
    free(output);
    free(include);
    free(kernels);
    free(src);
    free(out);
    test_rmdir(dir);
    free(cu);
    free(text);
    moxc_module_free(m);
}

static void test_nvcc_eligible(void **state)
{
    (void)state;
    nvcc_compiles("kernels/gate/eligible.c");
}

static void test_nvcc_ineligible(void **state)
{
    (void)state;
    nvcc_compiles("kernels/gate/ineligible.c");
}

int main(void)
{
    setenv("MOXC_GATE_DEFER", "1", 1); /* the generator's experiment, off by default */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eligible_kernels),  cmocka_unit_test(test_abi_marks_deferred_kernels),
        cmocka_unit_test(test_ineligible_reasons),
        cmocka_unit_test(test_inspect_prints_the_gate), cmocka_unit_test(test_golden),
        cmocka_unit_test(test_first_copy_unchanged), cmocka_unit_test(test_nvcc_eligible),
        cmocka_unit_test(test_nvcc_ineligible),
        cmocka_unit_test(test_first_guard_after_collective_loads_early),
    };
    return cmocka_run_group_tests_name("moxc_gate_defer", tests, NULL, NULL);
}
