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

/* Parses the test kernel source `rel` with moxc's diagnostics to `diag`:
 * whether it parsed, the module in *out. */
static bool parse_to(const char *rel, FILE *diag, moxc_module **out)
{
    char *source = test_path(rel);
    const char *sources[] = {source};
    moxc_parse_options opts;
    memset(&opts, 0, sizeof opts);
    opts.sources = sources;
    opts.source_count = 1;
    opts.mox_include_dir = MOX_INCLUDE_DIR;
    opts.diagnostics = diag;
    *out = NULL;
    bool ok = moxc_parse(&opts, out);
    free(source);
    return ok;
}

static moxc_module *parse(const char *rel, char **text)
{
    moxc_module *m = NULL;
    assert_true(parse_to(rel, stderr, &m));
    if (text) {
        char *source = test_path(rel);
        *text = read_text(source);
        assert_non_null(*text);
        free(source);
    }
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
                                       "copy_then_sum", "last_thread_total", "lane_partials", "first_or_rest",
                                       "drift_bodies"};

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
    {"helper_with_pointer", "a pointer argument of 'bump' that is not the address of a local or shared array"},
    {"store_in_expression", "a store to memory inside a larger expression"},
    {"store_with_increment", "a store, atomic or mox_fail whose target or arguments have side effects"},
    {"pick_source", "a pointer variable assigned a value that depends on memory"},
    {"store_by_macro", "a store, atomic or mox_fail written by a macro"},
    {"shuffle_if_positive", "mox_warp_shuffle_down_f32 under control flow that depends on memory"},
    {"loop_in_helper", "a loop whose condition depends on a value read from memory"},
    {"index_in_helper", "a value read from memory is used as an index"},
    {"barrier_in_helper", "a barrier or warp operation in a helper that is not pure"},
    {"index_through_helper", "a value read from memory is used as an index"},
    {"cast_const_in_helper", "a store to memory, atomic or mox_fail in a helper function"},
    {"const_passed_on", "a pointer argument of 'set_one' that is not the address of a local or shared array"},
    {"retarget_in_helper", "a helper assigning its pointer parameter"},
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
    setenv("MOXC_GATE_DEFER", "0", 1);
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
    setenv("MOXC_GATE_DEFER", "0", 1);
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

/* Whether the ABI marks `kernel` deferred, and its general gated entry
 * runs the deferred copy (true) or checks the gate at entry (false). */
static void expect_deferred(const moxc_module *m, const char *cu, const char *kernel, bool want)
{
    size_t k = 0;
    while (k < m->abi->kernel_count && strcmp(m->abi->kernels[k].name, kernel) != 0)
        ++k;
    assert_true(k < m->abi->kernel_count);
    bool marked = (m->abi->kernels[k].features & MOX_KFEAT_GATE_DEFERRED) != 0;
    if (marked != want)
        fail_msg("%s: gate_deferred %d, want %d", kernel, marked, want);
    char head[160];
    snprintf(head, sizeof head, " mox_entry_%s(mox_gate mox__gate", kernel);
    char *entry = section(cu, head);
    assert_int_equal(strstr(entry, "mox__gate_view_of(&mox__gate)") != NULL, want);
    assert_int_equal(strstr(entry, "if (mox__gate_enter(&mox__gate))") != NULL, !want);
    free(entry);
}

/* The kernel's __gate1 entry: none (`want` 0), checking at entry (1), or
 * deferred through the view of one dependency (2). */
static void expect_one_dep_entry(const char *cu, const char *kernel, int want)
{
    char head[160];
    snprintf(head, sizeof head, " mox_entry_%s__gate1(mox_gate mox__gate", kernel);
    if (!strstr(cu, head)) {
        if (want != 0)
            fail_msg("%s: no __gate1 entry, want %s", kernel, want == 1 ? "the check at entry" : "deferred");
        return;
    }
    if (want == 0)
        fail_msg("%s: a __gate1 entry, want none", kernel);
    char *entry = section(cu, head);
    assert_int_equal(strstr(entry, "if (mox__gate_enter_one(&mox__gate))") != NULL, want == 1);
    assert_int_equal(strstr(entry, "mox__gate_view_of_one(&mox__gate)") != NULL, want == 2);
    free(entry);
}

static bool listed(const char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; i < count; ++i)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* MOXC_GATE_DEFER unset (or "auto"): an eligible kernel gets the deferred
 * entries when its first guard comes before any barrier or warp operation
 * (copy_then_sum stores before its barrier), or when each of its guards
 * after one is reached by one thread of the block (reduce_shared's
 * `if (t == 0)`, last_thread_total's), and then also deferred __gate1
 * entries; warp_scan, lane_partials and first_or_rest keep the check at
 * entry. "1": every eligible kernel; "0": none; any other value is an
 * error. */
static void test_default_defers_kernels_guarding_before_collectives(void **state)
{
    (void)state;
    /* The kernels whose first guard comes after a barrier or warp
     * operation, and those of them with a guard after one that more than
     * one thread reaches; every kernel of eligible.c is eligible. */
    static const char *const after[] = {"reduce_shared", "warp_scan", "last_thread_total", "lane_partials",
                                        "first_or_rest"};
    static const char *const wide[] = {"warp_scan", "lane_partials", "first_or_rest"};
    static const struct {
        const char *setting; /* NULL: unset */
        int mode;            /* 0 none, 1 all, 2 the rule */
    } modes[] = {{NULL, 2}, {"", 2}, {"auto", 2}, {"1", 1}, {"0", 0}};
    char *text = NULL;
    moxc_module_free(parse("kernels/gate/eligible.c", &text));
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i) {
        if (modes[i].setting)
            setenv("MOXC_GATE_DEFER", modes[i].setting, 1);
        else
            unsetenv("MOXC_GATE_DEFER");
        moxc_module *m = parse("kernels/gate/eligible.c", NULL);
        char *cu = gen_cuda(m, text);
        for (size_t k = 0; k < sizeof eligible / sizeof eligible[0]; ++k) {
            bool late = listed(after, sizeof after / sizeof after[0], eligible[k]);
            bool spread = listed(wide, sizeof wide / sizeof wide[0], eligible[k]);
            const moxc_gate_defer *gate = gate_of(m, eligible[k]);
            if (gate->guard_after_collective != late || gate->wide_guard_after_collective != spread)
                fail_msg("%s: guard after a collective %d (want %d), by more than one thread %d (want %d)",
                         eligible[k], gate->guard_after_collective, late, gate->wide_guard_after_collective,
                         spread);
            bool want = modes[i].mode == 1 || (modes[i].mode == 2 && (!late || !spread));
            expect_deferred(m, cu, eligible[k], want);
            expect_one_dep_entry(cu, eligible[k], !want ? 1 : late ? 2 : 0);
        }
        assert_int_equal(strstr(cu, "__mox_deferred") != NULL, modes[i].mode != 0);
        free(cu);
        moxc_module_free(m);
    }
    free(text);
    setenv("MOXC_GATE_DEFER", "1", 1);
}

/* A value MOXC_GATE_DEFER does not know fails the parse with a message
 * naming it, rather than choosing silently. */
static void test_unknown_defer_setting_is_an_error(void **state)
{
    (void)state;
    setenv("MOXC_GATE_DEFER", "yes", 1);
    char *log = NULL;
    size_t log_size = 0;
    FILE *diag = open_memstream(&log, &log_size);
    assert_non_null(diag);
    moxc_module *m = NULL;
    assert_false(parse_to("kernels/gate/eligible.c", diag, &m));
    fclose(diag);
    assert_non_null(strstr(log, "MOXC_GATE_DEFER=yes: expected 0, 1 or auto"));
    free(log);
    moxc_module_free(m);
    setenv("MOXC_GATE_DEFER", "1", 1);
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
    setenv("MOXC_GATE_DEFER", "1", 1); /* every eligible kernel deferred (the default: some) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eligible_kernels),  cmocka_unit_test(test_abi_marks_deferred_kernels),
        cmocka_unit_test(test_ineligible_reasons),
        cmocka_unit_test(test_inspect_prints_the_gate), cmocka_unit_test(test_golden),
        cmocka_unit_test(test_first_copy_unchanged), cmocka_unit_test(test_nvcc_eligible),
        cmocka_unit_test(test_nvcc_ineligible),
        cmocka_unit_test(test_default_defers_kernels_guarding_before_collectives),
        cmocka_unit_test(test_unknown_defer_setting_is_an_error),
    };
    return cmocka_run_group_tests_name("moxc_gate_defer", tests, NULL, NULL);
}
