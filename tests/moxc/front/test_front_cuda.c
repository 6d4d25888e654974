/* test_front_cuda.c - what a CUDA programmer's first attempt gets: each
 * CUDA spelling one error line at its place, with the dialect's
 * equivalent; calls without a declaration are "unknown function" errors
 * with no spurious double-precision lines; records may not take CUDA's
 * type names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

#define CUDA(name) FIXTURE("cuda/" name)

static size_t count_lines_with(const char *text, const char *what) {
    size_t n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static void test_builtins(void **state) {
    (void)state;
    const char *src = CUDA("builtins.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:blockIdx",
                          "use of undeclared identifier 'blockIdx'; the dialect has mox_block_idx() (a mox_dim3)");
    front_expect_error_at(&run, src, "EXPECT:threadIdx",
                          "use of undeclared identifier 'threadIdx'; the dialect has mox_thread_idx() (a mox_dim3)");
    front_expect_error_at(&run, src, "EXPECT:syncthreads",
                          "unknown function '__syncthreads' in a kernel; the dialect has mox_barrier()");
    front_expect_error_at(&run, src, "EXPECT:rsqrtf", "unknown function 'rsqrtf' in a kernel; the dialect has mox_rsqrtf");
    front_expect_error_at(&run, src, "EXPECT:atomicAdd",
                          "unknown function 'atomicAdd' in a kernel; the dialect has mox_atomic_add_u32 / "
                          "mox_atomic_add_i32 on mox_atomic_u32 / mox_atomic_i32 elements; for float, a "
                          "mox_atomic_cas_u32 loop on the bits (mox_f32_to_bits) in a buffer of u32");
    front_expect_error_at(&run, src, "EXPECT:float4", "use of undeclared identifier 'float4'; the dialect has mox_float4");
    front_expect_error_at(&run, src, "EXPECT:fdividef",
                          "unknown function '__fdividef' in a kernel; the dialect has mox_fast_divf");
    front_expect_error_at(&run, src, "EXPECT:printf", "unknown function 'printf' in a kernel; kernels cannot print");
    assert_int_equal(count_lines_with(run.diagnostics, "double precision"), 0);
    front_run_free(&run);
}

static void test_qualifiers(void **state) {
    (void)state;
    const char *src = CUDA("qualifiers.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:constant",
                          "unknown type name '__constant__'; the dialect has the kernel parameter "
                          "MOX_TABLE(type, name, count)");
    front_expect_error_at(&run, src, "EXPECT:extern_shared",
                          "unknown type name '__shared__'; the dialect has MOX_SHARED_DYNAMIC(type, name) for "
                          "shared memory sized at launch");
    front_expect_error_at(&run, src, "EXPECT:template",
                          "unknown type name 'template'; kernel sources are C: write one function per type");
    front_expect_error_at(&run, src, "EXPECT:device", "unknown type name '__device__'; helpers in kernel sources need no marker");
    front_expect_error_at(&run, src, "EXPECT:shared",
                          "use of undeclared identifier '__shared__'; the dialect has MOX_SHARED(type, name, count)");
    front_run_free(&run);
}

static void test_declared_functions(void **state) {
    (void)state;
    const char *src = CUDA("declared.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:expf", "unknown function '__expf' in a kernel; the dialect has mox_fast_expf");
    front_expect_error_at(&run, src, "EXPECT:logf", "unknown function '__logf' in a kernel; the dialect has mox_fast_logf");
    front_run_free(&run);
}

/* Exactly one line: the unknown function, nothing about doubles. */
static void test_one_line_per_unknown_function(void **state) {
    (void)state;
    const char *src = CUDA("only_rsqrtf.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:rsqrtf", "unknown function 'rsqrtf' in a kernel; the dialect has mox_rsqrtf");
    assert_int_equal(count_lines_with(run.diagnostics, "\n"), 1);
    front_run_free(&run);
}

static void test_record_with_cuda_name(void **state) {
    (void)state;
    front_run run = front_parse1(CUDA("record_name.c"));
    front_expect_error_at(&run, CUDA("record_name.h"), "EXPECT:float2",
                          "record name 'float2' is a CUDA built-in type, which CUDA's headers define in the CUDA "
                          "translation unit; rename it (the dialect has mox_float2)");
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_qualifiers),
        cmocka_unit_test(test_declared_functions),
        cmocka_unit_test(test_one_line_per_unknown_function),
        cmocka_unit_test(test_record_with_cuda_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
