/* test_front_accept.c - kernels moxc must accept, with the exact ABI it
 * extracts: parameter kinds, access, layouts, required blocks, features,
 * C spellings, CUDA edit offsets and dependencies. */
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

static void expect_param(const mox_abi_kernel *k, size_t i, const char *name, mox_param_kind kind,
                         mox_param_access access, const char *signature) {
    assert_true(i < k->param_count);
    const mox_abi_param *p = &k->params[i];
    assert_string_equal(p->name, name);
    assert_int_equal(p->binding, i);
    assert_int_equal(p->kind, kind);
    if (kind == MOX_PARAM_BUFFER)
        assert_int_equal(p->access, access);
    char *sig = front_signature(p->layout);
    assert_string_equal(sig, signature);
    free(sig);
}

static void expect_spelling(const moxc_module *m, size_t kernel, size_t param, const char *c) {
    assert_non_null(m->kernels[kernel].params[param].c_spelling);
    assert_string_equal(m->kernels[kernel].params[param].c_spelling, c);
}

static void expect_no_block(const mox_abi_kernel *k) {
    assert_false(k->has_required_block);
}

static void expect_block(const mox_abi_kernel *k, uint32_t x, uint32_t y, uint32_t z) {
    assert_true(k->has_required_block);
    assert_int_equal(k->required_block[0], x);
    assert_int_equal(k->required_block[1], y);
    assert_int_equal(k->required_block[2], z);
}

static bool has_dependency(const moxc_module *m, const char *real) {
    for (size_t i = 0; i < m->dependency_count; i++)
        if (strcmp(m->dependencies[i], real) == 0)
            return true;
    return false;
}

static void test_vec_add(void **state) {
    (void)state;
    const char *src = FIXTURE("accept/vec_add.c");
    front_run run = front_parse1(src);
    assert_true(run.ok);
    moxc_module *m = run.module;
    assert_int_equal(m->abi->version, 1); /* no version-2 constructs */
    assert_int_equal(m->abi->kernel_count, 1);
    assert_int_equal(m->abi->required_features, 0);
    const mox_abi_kernel *k = &m->abi->kernels[0];
    assert_string_equal(k->name, "vec_add");
    assert_int_equal(k->param_count, 4);
    expect_param(k, 0, "a", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32");
    expect_param(k, 1, "b", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32");
    expect_param(k, 2, "out", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32");
    expect_param(k, 3, "n", MOX_PARAM_VALUE, MOX_PARAM_READ, "u32");
    expect_spelling(m, 0, 0, "float");
    expect_spelling(m, 0, 3, "uint32_t");
    expect_no_block(k);
    assert_int_equal(k->features, MOX_KFEAT_GATE_DEFERRED);
    assert_int_equal(m->record_count, 0);

    char *real = front_real(src);
    assert_string_equal(m->kernels[0].file, real);
    assert_int_equal(m->kernels[0].line, front_marker_line(src, "void vec_add("));

    assert_int_equal(m->edit_count, 1);
    assert_string_equal(m->edits[0].path, real);
    assert_int_equal(m->edits[0].offset_count, 1);
    assert_int_equal(m->edits[0].offsets[0], front_offset_of(src, "MOX_KERNEL\n"));

    /* dependencies: absolute, sorted, unique, with the source and kernel.h */
    assert_true(has_dependency(m, real));
    char *kernel_h = front_real(MOX_INCLUDE_DIR "/mox/kernel.h");
    assert_true(has_dependency(m, kernel_h));
    for (size_t i = 0; i < m->dependency_count; i++) {
        assert_int_equal(m->dependencies[i][0], '/');
        if (i)
            assert_true(strcmp(m->dependencies[i - 1], m->dependencies[i]) < 0);
    }
    free(kernel_h);
    free(real);
    front_run_free(&run);
}

static void test_scale_blocks_helpers_fail(void **state) {
    (void)state;
    const char *src = FIXTURE("accept/scale.c");
    front_run run = front_parse1(src);
    assert_true(run.ok);
    moxc_module *m = run.module;
    assert_int_equal(m->abi->kernel_count, 3);
    assert_string_equal(m->abi->kernels[0].name, "scale_128");
    assert_string_equal(m->abi->kernels[1].name, "scale_256");
    assert_string_equal(m->abi->kernels[2].name, "finish");
    expect_block(&m->abi->kernels[0], 128, 1, 1);
    expect_block(&m->abi->kernels[1], 256, 1, 1); /* MOX_BLOCK(WIDE, 1, 1) */
    expect_block(&m->abi->kernels[2], 8, 4, 2);
    /* deferred: affine, which reads a file-scope table, is followed into */
    assert_int_equal(m->abi->kernels[0].features, MOX_KFEAT_GATE_DEFERRED);
    assert_int_equal(m->abi->kernels[1].features, MOX_KFEAT_GATE_DEFERRED);
    assert_int_equal(m->abi->kernels[2].features, MOX_KFEAT_FAIL | MOX_KFEAT_GATE_DEFERRED);
    expect_param(&m->abi->kernels[2], 0, "data", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32");
    expect_param(&m->abi->kernels[2], 2, "code", MOX_PARAM_VALUE, MOX_PARAM_READ, "i32");
    expect_spelling(m, 2, 2, "int32_t");

    /* __device__ goes before the constant, the macro-made helper, the
     * helper, and each kernel's MOX_KERNEL */
    const char *starts[] = {"static const float offsets", "DECLARE_HELPER(twice)",
                            "static float affine", "MOX_KERNEL MOX_BLOCK(128",
                            "MOX_KERNEL MOX_BLOCK(WIDE", "MOX_KERNEL MOX_BLOCK(8"};
    assert_int_equal(m->edit_count, 1);
    assert_int_equal(m->edits[0].offset_count, 6);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(m->edits[0].offsets[i], front_offset_of(src, starts[i]));
    front_run_free(&run);
}

static void test_reduce(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/reduce.c"));
    assert_true(run.ok);
    const mox_abi_kernel *k = front_kernel(run.module, "reduce", NULL);
    expect_block(k, 256, 1, 1);
    /* deferred: its one guard, after the barriers, is thread 0's */
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED | MOX_KFEAT_GATE_DEFERRED);
    expect_param(k, 0, "input", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32");
    expect_param(k, 1, "partials", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32");
    expect_param(k, 2, "n", MOX_PARAM_VALUE, MOX_PARAM_READ, "u32");
    assert_int_equal(run.module->abi->required_features, 0);
    front_run_free(&run);
}

static void test_matmul(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/matmul.c"));
    assert_true(run.ok);
    const mox_abi_kernel *k = front_kernel(run.module, "matmul", NULL);
    expect_block(k, 16, 16, 1);
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED);
    assert_int_equal(k->param_count, 6);
    expect_param(k, 2, "c", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32");
    expect_param(k, 5, "inner", MOX_PARAM_VALUE, MOX_PARAM_READ, "u32");
    front_run_free(&run);
}

static void test_histogram_atomics(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/histogram.c"));
    assert_true(run.ok);
    size_t idx;
    const mox_abi_kernel *k = front_kernel(run.module, "histogram", &idx);
    expect_param(k, 0, "values", MOX_PARAM_BUFFER, MOX_PARAM_READ, "u32");
    expect_param(k, 1, "bins", MOX_PARAM_BUFFER, MOX_PARAM_ATOMIC, "u32");
    expect_param(k, 2, "balance", MOX_PARAM_BUFFER, MOX_PARAM_ATOMIC, "i32");
    expect_spelling(run.module, idx, 1, "mox_atomic_u32");
    expect_spelling(run.module, idx, 2, "mox_atomic_i32");
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_ATOMICS | MOX_KFEAT_SHARED);
    assert_int_equal(run.module->abi->required_features, MOX_FEAT_ATOMICS);
    front_run_free(&run);
}

static void test_block_scan_warp_ops(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/block_scan.c"));
    assert_true(run.ok);
    const mox_abi_kernel *k = front_kernel(run.module, "block_scan", NULL);
    expect_block(k, 256, 1, 1);
    assert_int_equal(k->features, MOX_KFEAT_BARRIER | MOX_KFEAT_WARP | MOX_KFEAT_SHARED);
    assert_int_equal(run.module->abi->required_features, MOX_FEAT_WARP_OPS);
    /* the helper is a function declaration of the source too */
    assert_int_equal(run.module->edits[0].offset_count, 2);
    front_run_free(&run);
}

static void test_multiple_sources(void **state) {
    (void)state;
    const char *sources[] = {FIXTURE("accept/vec_add.c"), FIXTURE("accept/scale.c")};
    front_run run = front_parse(sources, 2, NULL, NULL);
    assert_true(run.ok);
    moxc_module *m = run.module;
    assert_int_equal(m->abi->kernel_count, 4);
    const char *names[] = {"vec_add", "scale_128", "scale_256", "finish"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(m->abi->kernels[i].name, names[i]);
    char *a = front_real(sources[0]), *b = front_real(sources[1]);
    assert_string_equal(m->kernels[0].file, a);
    assert_string_equal(m->kernels[3].file, b);
    assert_int_equal(m->edit_count, 2);
    assert_string_equal(m->edits[0].path, a);
    assert_string_equal(m->edits[1].path, b);
    assert_int_equal(m->edits[0].offset_count, 1);
    assert_int_equal(m->edits[1].offset_count, 6);
    assert_true(has_dependency(m, a));
    assert_true(has_dependency(m, b));
    for (size_t i = 1; i < m->dependency_count; i++)
        assert_true(strcmp(m->dependencies[i - 1], m->dependencies[i]) < 0);
    free(a);
    free(b);
    front_run_free(&run);
}

static void test_include_dirs_and_defines(void **state) {
    (void)state;
    const char *sources[] = {FIXTURE("accept/options.c")};
    const char *includes[] = {FIXTURE("accept/include"), NULL};
    const char *defines[] = {"BLOCK_X=32", "BLOCK_Y", NULL};
    front_run run = front_parse(sources, 1, includes, defines);
    assert_true(run.ok);
    const mox_abi_kernel *k = front_kernel(run.module, "options", NULL);
    expect_block(k, 32, 2, 1); /* MOX_BLOCK(BLOCK_X, BLOCK_Y * 2, (3 - 2)) with BLOCK_Y=1 */
    char *extra = front_real(FIXTURE("accept/include/extra.h"));
    assert_true(has_dependency(run.module, extra));
    free(extra);
    front_run_free(&run);

    /* without the define the block text is not a number */
    front_run bad = front_parse(sources, 1, includes, NULL);
    front_expect_error_at(&bad, sources[0], "MOX_BLOCK(", "must be three integer constants");
    front_run_free(&bad);
}

static void test_parameter_spellings(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/spellings.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    moxc_module *m = run.module;
    const mox_abi_kernel *k = front_kernel(m, "spellings", NULL);
    assert_int_equal(k->param_count, 17);
    static const struct {
        const char *name;
        mox_param_kind kind;
        mox_param_access access;
        const char *signature, *c;
    } want[] = {
        {"a", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32", "float"},
        {"b", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32", "float"},
        {"c", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32", "float"},
        {"d", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32", "float"},
        {"e", MOX_PARAM_BUFFER, MOX_PARAM_READ, "f32", "float"},
        {"n", MOX_PARAM_VALUE, MOX_PARAM_READ, "u32", "uint32_t"},
        {"h", MOX_PARAM_VALUE, MOX_PARAM_READ, "f16", "mox_f16"},
        {"dims", MOX_PARAM_VALUE, MOX_PARAM_READ, "mox_dim3{x@0:u32,y@4:u32,z@8:u32}", "mox_dim3"},
        {"t", MOX_PARAM_VALUE, MOX_PARAM_READ, "Tuning{gain@0:f32,bias@4:f16}", "struct Tuning"},
        {"ts", MOX_PARAM_BUFFER, MOX_PARAM_READ, "Tuning{gain@0:f32,bias@4:f16}", "struct Tuning"},
        {"u8", MOX_PARAM_VALUE, MOX_PARAM_READ, "u8", "uint8_t"},
        {"i8", MOX_PARAM_VALUE, MOX_PARAM_READ, "i8", "int8_t"},
        {"i16", MOX_PARAM_VALUE, MOX_PARAM_READ, "i16", "int16_t"},
        {"u16", MOX_PARAM_VALUE, MOX_PARAM_READ, "u16", "uint16_t"},
        {"i32", MOX_PARAM_VALUE, MOX_PARAM_READ, "i32", "int32_t"},
        {"u32", MOX_PARAM_VALUE, MOX_PARAM_READ, "u32", "uint32_t"},
        {"v", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, "f32", "float"},
    };
    for (size_t i = 0; i < 17; i++) {
        expect_param(k, i, want[i].name, want[i].kind, want[i].access, want[i].signature);
        expect_spelling(m, 0, i, want[i].c);
    }
    assert_int_equal(k->features, MOX_KFEAT_F16 | MOX_KFEAT_GATE_DEFERRED);
    /* one record per name: struct Tuning and Tuning are the same record */
    assert_int_equal(m->record_count, 2);
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vec_add),
        cmocka_unit_test(test_scale_blocks_helpers_fail),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_histogram_atomics),
        cmocka_unit_test(test_block_scan_warp_ops),
        cmocka_unit_test(test_multiple_sources),
        cmocka_unit_test(test_include_dirs_and_defines),
        cmocka_unit_test(test_parameter_spellings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
