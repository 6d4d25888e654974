/* test_front_reject.c - every rejection of a kernel source, with the
 * file:line it names and its message; malformed input never crashes. One
 * fixture per diagnostic, its line marked with an EXPECT comment. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

#define REJECT(name) FIXTURE("reject/" name)

/* Diagnostics print in source order, whichever check found them first. */
static void test_diagnostics_in_line_order(void **state) {
    (void)state;
    const char *path = REJECT("diag_order.c");
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, "MARK barrier", "mox_barrier requires uniform participation");
    front_expect_error_at(&run, path, "MARK double", "double precision is not supported");
    const char *barrier = strstr(run.diagnostics, "mox_barrier requires");
    const char *dbl = strstr(run.diagnostics, "double precision");
    assert_true(barrier && dbl);
    if (barrier > dbl)
        fail_msg("line %u's error printed after line %u's:\n%s",
                 front_marker_line(path, "MARK barrier"), front_marker_line(path, "MARK double"),
                 run.diagnostics);
    front_run_free(&run);
}

static void test_syntax_error(void **state) {
    (void)state;
    front_expect_rejected(REJECT("malformed.c"), "EXPECT:syntax", "expected expression");
}

static void test_missing_include(void **state) {
    (void)state;
    front_expect_rejected(REJECT("missing_include.c"), "EXPECT:include",
                          "'no_such_header.h' file not found");
}

static void test_missing_source(void **state) {
    (void)state;
    const char *path = REJECT("missing_source.c");
    front_run run = front_parse1(path);
    assert_false(run.ok);
    char expected[1200];
    snprintf(expected, sizeof expected, "%s: error: cannot read kernel source", path);
    assert_non_null(strstr(run.diagnostics, expected));
    front_run_free(&run);
}

static void test_no_kernels(void **state) {
    (void)state;
    const char *sources[] = {REJECT("no_kernels.c"), FIXTURE("reject/records/bad_records.h")};
    front_run run = front_parse(sources, 2, NULL, NULL);
    assert_false(run.ok);
    char expected[2400];
    snprintf(expected, sizeof expected, "error: no MOX_KERNEL functions in %s, %s", sources[0],
             sources[1]);
    if (!strstr(run.diagnostics, expected))
        fail_msg("missing '%s' in:\n%s", expected, run.diagnostics);
    front_run_free(&run);
}

static void test_non_void_kernel(void **state) {
    (void)state;
    front_expect_rejected(REJECT("nonvoid.c"), "EXPECT:nonvoid",
                          "kernel 'returns_value' must return void, not 'float'");
}

static void test_variadic_kernel(void **state) {
    (void)state;
    front_expect_rejected(REJECT("variadic.c"), "EXPECT:variadic", "kernel 'varargs' is variadic");
}

static void test_kernel_without_prototype(void **state) {
    (void)state;
    front_expect_rejected(REJECT("noproto.c"), "EXPECT:noproto",
                          "kernel 'old_style' has no prototype");
}

static void test_duplicate_kernel_across_sources(void **state) {
    (void)state;
    const char *sources[] = {REJECT("dup_a.c"), REJECT("dup_b.c")};
    front_run run = front_parse(sources, 2, NULL, NULL);
    char text[1200];
    snprintf(text, sizeof text, "duplicate kernel 'twin' (first defined at %s:%u)", sources[0],
             front_marker_line(sources[0], "void twin("));
    front_expect_error_at(&run, sources[1], "EXPECT:duplicate", text);
    front_run_free(&run);
}

static void test_block_zero(void **state) {
    (void)state;
    front_expect_rejected(REJECT("block_zero.c"), "EXPECT:zero", "has a zero dimension (64,0,1)");
}

static void test_block_not_an_integer(void **state) {
    (void)state;
    front_expect_rejected(REJECT("block_text.c"), "EXPECT:text",
                          "must be three integer constants, got (WIDTH,1,1)");
}

static void test_block_overflow(void **state) {
    (void)state;
    front_expect_rejected(REJECT("block_overflow.c"), "EXPECT:overflow",
                          "has 65536 x 65536 x 1 threads, which overflows 32 bits");
}

static void test_block_twice(void **state) {
    (void)state;
    front_expect_rejected(REJECT("block_twice.c"), "EXPECT:twice",
                          "kernel 'twice_block' has more than one MOX_BLOCK");
}

static void test_too_many_parameters(void **state) {
    (void)state;
    front_expect_rejected(REJECT("too_many_params.c"), "EXPECT:params",
                          "kernel 'crowded' has 32 parameters; at most 31 are supported");
}

static void test_unnamed_parameter(void **state) {
    (void)state;
    front_expect_rejected(REJECT("unnamed_param.c"), "EXPECT:unnamed",
                          "parameter 2 of kernel 'anonymous' has no name");
}

static void test_keyword_parameter(void **state) {
    (void)state;
    front_expect_rejected(REJECT("keyword_param.c"), "EXPECT:keyword",
                          "parameter 'new' of kernel 'keyword' is a C++ keyword");
}

static void test_kernel_in_header(void **state) {
    (void)state;
    front_run run = front_parse1(REJECT("kernel_in_header.c"));
    front_expect_error_at(&run, REJECT("kernel_in_header.h"), "EXPECT:header",
                          "kernel 'header_kernel' must be defined in a kernel source file");
    front_run_free(&run);
}

static void test_unsupported_parameter_types(void **state) {
    (void)state;
    static const struct {
        const char *marker, *text;
    } cases[] = {
        {"EXPECT:char", "unsupported parameter type 'const char *' for parameter 'text': plain 'char'"},
        {"EXPECT:bool", "unsupported parameter type '_Bool' for parameter 'flag'"},
        {"EXPECT:double", "unsupported parameter type 'const double *' for parameter 'x': double precision"},
        {"EXPECT:long", "unsupported parameter type 'long' for parameter 'x': 64-bit integers"},
        {"EXPECT:u64", "unsupported parameter type 'uint64_t *' for parameter 'x': 64-bit integers"},
        {"EXPECT:size", "unsupported parameter type 'size_t' for parameter 'n': 64-bit integers"},
        {"EXPECT:ptrptr", "unsupported parameter type 'float **' for parameter 'rows': pointers to pointers"},
        {"EXPECT:voidptr", "unsupported parameter type 'void *' for parameter 'raw'"},
        {"EXPECT:fnptr", "unsupported parameter type 'void (*)(float)' for parameter 'callback': function pointers"},
        {"EXPECT:union", "unsupported parameter type 'Bits' for parameter 'bits': unions are not supported"},
        {"EXPECT:enum", "unsupported parameter type 'enum mode' for parameter 'm': enums"},
        {"EXPECT:arrayptr", "unsupported parameter type 'float (*)[4]' for parameter 'rows': pointers to arrays"},
        {"EXPECT:atomicvalue", "unsupported parameter type 'mox_atomic_u32' for parameter 'counter': atomics are only supported as buffers"},
        {"EXPECT:constatomic", "atomic buffer parameter 'counter' must not be const ('const mox_atomic_u32 *')"},
        {"EXPECT:volatile", "unsupported parameter type 'volatile float *' for parameter 'x': volatile"},
    };
    const char *path = REJECT("param_types.c");
    front_run run = front_parse1(path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        front_expect_error_at(&run, path, cases[i].marker, cases[i].text);
    /* a kernel's double parameter: its type's error, not a second one */
    front_expect_error_at(&run, path, "EXPECT:doublevalue", "unsupported parameter type 'double' for parameter 'd'");
    char *real = front_real(path), at[PATH_MAX + 32];
    snprintf(at, sizeof at, "%s:%u:", real, front_marker_line(path, "EXPECT:doublevalue"));
    size_t count = 0;
    for (const char *p = run.diagnostics; (p = strstr(p, at)) != NULL; p++)
        count++;
    assert_int_equal(count, 1);
    free(real);
    front_run_free(&run);
}

static void test_direct_recursion(void **state) {
    (void)state;
    front_expect_rejected(REJECT("recursion.c"), "EXPECT:recursion",
                          "recursion is not supported in kernels: fact -> fact");
}

static void test_mutual_recursion(void **state) {
    (void)state;
    front_expect_rejected(REJECT("recursion_mutual.c"), "EXPECT:mutual",
                          "recursion is not supported in kernels: is_even -> is_odd -> is_even");
}

static void test_call_through_function_pointer(void **state) {
    (void)state;
    front_expect_rejected(REJECT("fnptr_call.c"), "EXPECT:call",
                          "calls through function pointers are not supported in kernels");
}

static void test_function_address(void **state) {
    (void)state;
    front_expect_rejected(REJECT("fn_address.c"), "EXPECT:address",
                          "taking the address of function 'negate' is not supported");
    front_expect_rejected(REJECT("fnptr_call.c"), "EXPECT:address",
                          "taking the address of function 'square' is not supported");
}

static void test_call_without_definition(void **state) {
    (void)state;
    front_expect_rejected(REJECT("undefined_call.c"), "EXPECT:undefined",
                          "call to 'external_helper' which has no definition visible to moxc");
}

static void test_shared_in_loop(void **state) {
    (void)state;
    front_expect_rejected(REJECT("shared_loop.c"), "EXPECT:loop",
                          "MOX_SHARED 'tile' must not be declared inside a loop");
}

static void test_shared_in_helper(void **state) {
    (void)state;
    front_expect_rejected(REJECT("shared_helper.c"), "EXPECT:helper",
                          "MOX_SHARED 'tile' must be declared in a kernel body, not in a helper function");
}

static void test_shared_at_file_scope(void **state) {
    (void)state;
    front_expect_rejected(REJECT("shared_file.c"), "EXPECT:file",
                          "MOX_SHARED 'tile' must be declared in a kernel body, not at file scope");
}

static void test_double_precision(void **state) {
    (void)state;
    const char *path = REJECT("double_math.c");
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, "EXPECT:variable", "double precision is not supported in kernels");
    front_expect_error_at(&run, path, "EXPECT:arithmetic", "double precision is not supported in kernels");
    front_expect_error_at(&run, path, "EXPECT:helper", "double precision is not supported in kernels");
    front_expect_error_at(&run, path, "EXPECT:libm",
                          "unknown function 'sqrt' in a kernel; the dialect has sqrtf (kernels are single precision)");
    front_expect_error_at(&run, path, "EXPECT:libm", "unknown function 'fabs' in a kernel; the dialect has fabsf");
    char where[1200];
    snprintf(where, sizeof where, "%s:%u:", path, front_marker_line(path, "EXPECT:libm"));
    size_t on_line = 0;
    for (const char *p = run.diagnostics; (p = strstr(p, where)) != NULL; p++)
        on_line++;
    assert_int_equal(on_line, 2); /* not also "double precision ..." at the same places */
    front_run_free(&run);
}

static void test_file_scope_mutable(void **state) {
    (void)state;
    const char *path = REJECT("global_mutable.c");
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, "EXPECT:global",
                          "file-scope mutable variables are not supported in kernel sources: 'calls'");
    front_expect_error_at(&run, path, "EXPECT:pointer",
                          "file-scope mutable variables are not supported in kernel sources: 'const_but_mutable_pointer'");
    front_run_free(&run);
    front_expect_rejected(REJECT("global_header.c"), "EXPECT:header",
                          "file-scope mutable variables are not supported in kernel sources: 'header_scale'");
}

/* A helper defined in a header needs MOX_DEVICE when a kernel calls it,
 * directly or through another helper; one no kernel calls does not. */
static void test_header_helper_without_marker(void **state) {
    (void)state;
    const char *path = REJECT("helper_header.c");
    const char *header = REJECT("helper_header.h");
    front_run run = front_parse1(path);
    front_expect_error_at(&run, header, "EXPECT:unmarked",
                          "helper 'twice' is defined in a header without MOX_DEVICE; kernels call it");
    front_expect_error_at(&run, header, "EXPECT:callee",
                          "helper 'inner' is defined in a header without MOX_DEVICE; kernels call it");
    assert_null(strstr(run.diagnostics, "'thrice'"));
    assert_null(strstr(run.diagnostics, "'host_only'"));
    front_run_free(&run);
}

static void test_static_local(void **state) {
    (void)state;
    front_expect_rejected(REJECT("static_local.c"), "EXPECT:static",
                          "static local variable 'seen' is not supported in kernels");
}

static void test_macro_declaring_two_functions(void **state) {
    (void)state;
    front_expect_rejected(REJECT("macro_two_functions.c"), "EXPECT:pair",
                          "one macro use declares both 'scale_low' and 'scale_high'");
}

static void test_errors_from_several_sources_are_all_reported(void **state) {
    (void)state;
    const char *sources[] = {REJECT("nonvoid.c"), REJECT("malformed.c"), REJECT("variadic.c")};
    front_run run = front_parse(sources, 3, NULL, NULL);
    front_expect_error_at(&run, sources[0], "EXPECT:nonvoid", "must return void");
    front_expect_error_at(&run, sources[1], "EXPECT:syntax", "expected expression");
    front_expect_error_at(&run, sources[2], "EXPECT:variadic", "is variadic");
    front_run_free(&run);
}

static void test_bad_options(void **state) {
    (void)state;
    moxc_module *m = (moxc_module *)&m;
    assert_false(moxc_parse(NULL, &m));
    moxc_parse_options opts;
    memset(&opts, 0, sizeof opts);
    assert_false(moxc_parse(&opts, NULL));
    m = (moxc_module *)&m;
    assert_false(moxc_parse(&opts, &m)); /* no sources: an error, no crash */
    assert_null(m);
    moxc_module_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagnostics_in_line_order),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_missing_include),
        cmocka_unit_test(test_missing_source),
        cmocka_unit_test(test_no_kernels),
        cmocka_unit_test(test_non_void_kernel),
        cmocka_unit_test(test_variadic_kernel),
        cmocka_unit_test(test_kernel_without_prototype),
        cmocka_unit_test(test_duplicate_kernel_across_sources),
        cmocka_unit_test(test_block_zero),
        cmocka_unit_test(test_block_not_an_integer),
        cmocka_unit_test(test_block_overflow),
        cmocka_unit_test(test_block_twice),
        cmocka_unit_test(test_too_many_parameters),
        cmocka_unit_test(test_unnamed_parameter),
        cmocka_unit_test(test_keyword_parameter),
        cmocka_unit_test(test_kernel_in_header),
        cmocka_unit_test(test_unsupported_parameter_types),
        cmocka_unit_test(test_direct_recursion),
        cmocka_unit_test(test_mutual_recursion),
        cmocka_unit_test(test_call_through_function_pointer),
        cmocka_unit_test(test_function_address),
        cmocka_unit_test(test_call_without_definition),
        cmocka_unit_test(test_shared_in_loop),
        cmocka_unit_test(test_shared_in_helper),
        cmocka_unit_test(test_shared_at_file_scope),
        cmocka_unit_test(test_double_precision),
        cmocka_unit_test(test_file_scope_mutable),
        cmocka_unit_test(test_header_helper_without_marker),
        cmocka_unit_test(test_static_local),
        cmocka_unit_test(test_macro_declaring_two_functions),
        cmocka_unit_test(test_errors_from_several_sources_are_all_reported),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
