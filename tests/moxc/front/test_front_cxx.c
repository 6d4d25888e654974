/* test_front_cxx.c - what the CUDA translation unit (C++, nvcc) cannot
 * compile although C11 can, and CUDA's block limits: moxc refuses it on a
 * machine without nvcc, at the source line, and accepts the near cases. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

#define CXX(name) FIXTURE("reject/cxx/" name)

#define VLA_TAIL "is not supported in kernel sources (the CUDA translation unit is C++, which has none); use a constant size"
#define PARAM_TAIL "is not supported in kernel sources (the CUDA translation unit is C++, which has none); "
#define KW_TAIL "is a C++ keyword; the CUDA translation unit is C++, rename it"
#define VOID_TAIL "is not supported in kernel sources (the CUDA translation unit is C++, which needs a cast); write "

static void test_vla(void **state) {
    (void)state;
    const char *src = CXX("vla.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:helper", "variable-length array type 'float[n]' of 'copy' " VLA_TAIL);
    front_expect_error_at(&run, src, "EXPECT:local", "variable-length array type 'float[n]' of 't' " VLA_TAIL);
    front_expect_error_at(&run, src, "EXPECT:typedef",
                          "variable-length array type 'float[n]' of typedef 'row' " VLA_TAIL);
    front_expect_error_at(&run, src, "EXPECT:sizeof", "sizeof of a variable-length array " VLA_TAIL);
    front_expect_error_at(&run, src, "EXPECT:cast", "variable-length array type 'float (*)[n]' " VLA_TAIL);
    front_run_free(&run);
}

/* An array parameter of variable size: C adjusts it to a pointer but still
 * evaluates the size; C++ has no such parameter. Reported at the parameter's
 * name (file:line:col), in helpers, prototypes and kernels alike. */
static void test_vla_parameter(void **state) {
    (void)state;
    const char *src = CXX("vla_param.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:prototype",
                          "variable-length array type 'const float[*]' of parameter 'a' " PARAM_TAIL
                          "write 'const float a[]' or 'const float *a' (a parameter is a pointer)");
    front_expect_error_at(&run, src, "EXPECT:helper",
                          "variable-length array type 'const float[n]' of parameter 'a' " PARAM_TAIL
                          "write 'const float a[]' or 'const float *a' (a parameter is a pointer)");
    /* two dimensions: the first may stay empty */
    front_expect_error_at(&run, src, "EXPECT:device",
                          "variable-length array type 'float[n][4]' of parameter 'a' " PARAM_TAIL
                          "write 'float a[][4]' (a parameter is a pointer; the inner sizes stay constant)");
    front_expect_error_at(&run, src, "EXPECT:kernel",
                          "variable-length array type 'const float[n]' of parameter 'in' " PARAM_TAIL
                          "write 'const float in[]' or 'const float *in' (a parameter is a pointer)");
    const char *decl = "static float last(uint32_t n, const float a[n])";
    size_t col = front_offset_of(src, "a[n]) /* EXPECT:helper") - front_offset_of(src, decl) + 1;
    char where[PATH_MAX + 64];
    snprintf(where, sizeof where, "%s:%u:%zu: error: variable-length array", src,
             front_marker_line(src, "EXPECT:helper"), col);
    if (!strstr(run.diagnostics, where))
        fail_msg("no diagnostic at '%s' in:\n%s", where, run.diagnostics);
    front_run_free(&run);
}

static void test_void_pointer_conversion(void **state) {
    (void)state;
    const char *src = CXX("void_ptr.c");
    front_run run = front_parse1(src);
    const char *plain = "implicit conversion from 'void *' to 'float *' " VOID_TAIL "'(float *)'";
    front_expect_error_at(&run, src, "EXPECT:return", plain);
    front_expect_error_at(&run, src, "EXPECT:init", plain);
    front_expect_error_at(&run, src, "EXPECT:assign", plain);
    front_expect_error_at(&run, src, "EXPECT:arg",
                          "implicit conversion from 'const void *' to 'const float *' " VOID_TAIL "'(const float *)'");
    front_run_free(&run);
}

static void test_cxx_keyword_names(void **state) {
    (void)state;
    const char *src = CXX("names.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:tag", "struct tag 'this' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:member", "member 'template' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:typedef", "typedef 'typename' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:enum", "enum tag 'virtual' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:enum", "enum constant 'nullptr' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:union", "union tag 'friend' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:function", "function 'delete' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:function", "parameter 'operator' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:param", "parameter 'and' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:class", "variable 'class' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:new", "variable 'new' " KW_TAIL);
    front_expect_error_at(&run, src, "EXPECT:label", "label 'try' " KW_TAIL);
    front_run_free(&run);
}

/* A kernel parameter named 'new' keeps its own message, once. */
static void test_keyword_parameter_reported_once(void **state) {
    (void)state;
    const char *src = FIXTURE("reject/keyword_param.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:keyword", "parameter 'new' of kernel 'keyword' is a C++ keyword");
    assert_null(strstr(run.diagnostics, "error: parameter 'new' is a C++ keyword"));
    front_run_free(&run);
}

static void test_static_shared_above_48k(void **state) {
    (void)state;
    front_expect_rejected(CXX("big_shared.c"), "EXPECT:shared",
                          "kernel 'big_shared' has 49156 bytes of static shared memory (the largest, MOX_SHARED "
                          "'a', 32768); CUDA allows at most 49152 bytes per block: use MOX_SHARED_DYNAMIC for more");
}

static void test_block_limits(void **state) {
    (void)state;
    const char *src = CXX("block_limits.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:threads",
                          "MOX_BLOCK of kernel 'too_wide' has 2048 x 1 x 1 threads; a block has at most 1024 "
                          "threads, at most 1024 x 1024 x 64 in each dimension");
    front_expect_error_at(&run, src, "EXPECT:depth", "MOX_BLOCK of kernel 'too_deep' has 1 x 1 x 128 threads");
    front_run_free(&run);
}

static void test_incomplete_record_unqualified(void **state) {
    (void)state;
    front_expect_rejected(CXX("incomplete.c"), "EXPECT:incomplete",
                          "record 'struct inc' is incomplete (no definition visible)");
}

static void test_f16_by_value(void **state) {
    (void)state;
    const char *src = CXX("f16_value.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:float16",
                          "_Float16 is not supported on this target; use mox_f16 for half precision");
    front_expect_error_at(&run, src, "EXPECT:fp16",
                          "parameters cannot have __fp16 type; did you forget * ?; use mox_f16 for half precision");
    front_run_free(&run);
}

#define CHAR_TAIL "of a character literal differs between the backends: it is an int in C (the CPU) but a char in C++"
#define BOOL_TAIL "of a comparison or logical operator differs between the backends: its result is an int in C"

/* Conversions C only warns about are errors: nvcc's C++ refuses them, so
 * the source would build without nvcc and fail with it. */
static void test_cxx_conversions(void **state) {
    (void)state;
    const char *src = CXX("conversions.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:atomic",
                          "incompatible pointer types passing 'uint32_t *'");
    front_expect_error_at(&run, src, "EXPECT:atomic",
                          "the CUDA translation unit (C++) refuses this conversion, C only warns");
    front_expect_error_at(&run, src, "EXPECT:const", "discards qualifiers");
    front_run_free(&run);
}

/* sizeof('a') is 4 on the CPU and 1 in the CUDA translation unit: moxc
 * refuses every way the literal's (or a comparison's) type becomes a value. */
static void test_char_literal_type(void **state) {
    (void)state;
    const char *src = CXX("char_type.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:typedef", "__typeof__ " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:sizeof", "sizeof " CHAR_TAIL " (the CUDA translation unit); write "
                                                      "the type you mean (sizeof(int) or sizeof(char))");
    front_expect_error_at(&run, src, "EXPECT:parens", "sizeof " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:alignof", "_Alignof " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:macro", "sizeof " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:conditional", "sizeof " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:compare", "sizeof " BOOL_TAIL);
    front_expect_error_at(&run, src, "EXPECT:not", "sizeof " BOOL_TAIL);
    front_expect_error_at(&run, src, "EXPECT:typeof", "__typeof__ " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:typeof_macro", "__typeof__ " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:cast", "__typeof__ " BOOL_TAIL);
    front_expect_error_at(&run, src, "EXPECT:sizeof_typeof", "sizeof " CHAR_TAIL);
    front_expect_error_at(&run, src, "EXPECT:generic",
                          "_Generic is not supported in kernel sources (the CUDA translation unit is C++, which "
                          "has none); write one function per type");
    front_expect_error_at(&run, src, "EXPECT:generic_call", "_Generic is not supported in kernel sources");
    /* the conditional's two arms: two errors on that line, nothing else */
    size_t count = 0;
    for (const char *p = run.diagnostics; (p = strstr(p, "error: ")) != NULL; p++)
        count++;
    assert_int_equal(count, 15);
    front_run_free(&run);
}

#define C11_TAIL "is not supported in kernel sources (the CUDA translation unit is C++, "

/* C11 that C++ refuses and kernel_cuda.h cannot map: at the place, with
 * what to write instead (the outside user's c06 c08 c10 c11 c15 c16). */
static void test_c11_only(void **state) {
    (void)state;
    const char *src = CXX("c11_only.c");
    front_run run = front_parse1(src);
    front_expect_error_at(&run, src, "EXPECT:nested", "'Inner' is declared inside struct 'Outer' (at ");
    front_expect_error_at(&run, src, "EXPECT:nested", "and used outside it, which " C11_TAIL
                          "where the name belongs to 'Outer'); declare it before 'Outer'");
    front_expect_error_at(&run, src, "EXPECT:enum_init", "implicit conversion from 'uint32_t' to enum type "
                          "'enum Mode' " C11_TAIL "which needs a cast); write '(enum Mode)', or use an integer");
    front_expect_error_at(&run, src, "EXPECT:enum_inc",
                          "arithmetic assignment to a variable of enum type 'enum Mode' " C11_TAIL
                          "which has no ++, -- or += on enums); use an integer type (uint32_t) for the variable");
    front_expect_error_at(&run, src, "EXPECT:enum_add", "arithmetic assignment to a variable of enum type");
    front_expect_error_at(&run, src, "EXPECT:enum_arg", "implicit conversion from 'int' to enum type 'Level'");
    front_expect_error_at(&run, src, "EXPECT:const", "const variable 'z' has no initializer, which " C11_TAIL
                          "which requires one); initialise it, or drop const");
    front_expect_error_at(&run, src, "EXPECT:string",
                          "string literal of 3 characters initialises an array of 3, leaving no room for its "
                          "terminating NUL, which " C11_TAIL "which refuses it); make the array one element longer");
    front_expect_error_at(&run, src, "EXPECT:enumerator", "'KIND_Y' is declared inside struct 'Outer'");
    front_expect_error_at(&run, src, "EXPECT:goto", "goto 'done' jumps past the initialisation of 'x' (at ");
    front_expect_error_at(&run, src, "EXPECT:goto", "into its scope, which " C11_TAIL
                          "which refuses it); declare 'x' before the goto, or put it in braces { } that close "
                          "before the label");
    size_t count = 0;
    for (const char *p = run.diagnostics; (p = strstr(p, "error: ")) != NULL; p++)
        count++;
    assert_int_equal(count, 9);
    front_run_free(&run);
}

static void test_near_cases_accepted(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/cxx_near.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    const mox_abi_kernel *k = front_kernel(run.module, "near_casts", NULL);
    assert_int_equal(k->required_block[0], 1024);
    k = front_kernel(run.module, "near_shared", NULL);
    assert_int_equal(k->required_block[0] * k->required_block[1] * k->required_block[2], 1024);
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED);
    front_run_free(&run);
    static const char *const near[] = {"accept/char_type_near.c", "accept/cxx_c11_near.c"};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", FRONT_FIXTURES, near[i]);
        run = front_parse1(path);
        if (!run.ok)
            fail_msg("%s rejected:\n%s", near[i], run.diagnostics);
        front_run_free(&run);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vla),
        cmocka_unit_test(test_vla_parameter),
        cmocka_unit_test(test_void_pointer_conversion),
        cmocka_unit_test(test_cxx_keyword_names),
        cmocka_unit_test(test_keyword_parameter_reported_once),
        cmocka_unit_test(test_static_shared_above_48k),
        cmocka_unit_test(test_block_limits),
        cmocka_unit_test(test_incomplete_record_unqualified),
        cmocka_unit_test(test_f16_by_value),
        cmocka_unit_test(test_cxx_conversions),
        cmocka_unit_test(test_char_literal_type),
        cmocka_unit_test(test_c11_only),
        cmocka_unit_test(test_near_cases_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
