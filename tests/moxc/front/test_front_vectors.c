/* test_front_vectors.c - the dialect's vector types (mox/vector_types.h) as
 * buffer elements, values and record members, records with _Alignas
 * members, and the records whose layout still differs from the canonical
 * one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

static void expect_param(const mox_abi_kernel *k, size_t i, const char *signature, uint64_t size,
                         uint64_t align) {
    char *sig = front_signature(k->params[i].layout);
    if (strcmp(sig, signature) != 0)
        fail_msg("kernel %s parameter %zu: signature %s, expected %s", k->name, i, sig, signature);
    free(sig);
    assert_int_equal(k->params[i].layout->size, size);
    assert_int_equal(k->params[i].layout->align, align);
}

static void test_vector_params(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/vectors.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    moxc_module *m = run.module;
    assert_int_equal(m->abi->version, 2);
    size_t ki;
    const mox_abi_kernel *k = front_kernel(m, "scale4", &ki);
    expect_param(k, 0, "f32x4", 16, 16);
    assert_int_equal(k->params[0].access, MOX_PARAM_READ);
    expect_param(k, 1, "f32x4", 16, 16);
    assert_int_equal(k->params[1].access, MOX_PARAM_WRITE);
    expect_param(k, 2, "f32x4", 16, 16);
    assert_int_equal(k->params[2].kind, MOX_PARAM_VALUE);
    assert_string_equal(m->kernels[ki].params[0].c_spelling, "mox_float4");
    assert_int_equal(k->features, MOX_KFEAT_GATE_DEFERRED);

    k = front_kernel(m, "every_vector", &ki);
    static const struct {
        const char *sig;
        uint64_t size, align;
    } want[] = {{"f32x2", 8, 8},  {"f32x3", 12, 4}, {"i32x2", 8, 8},  {"i32x3", 12, 4}, {"i32x4", 16, 16},
                {"u32x2", 8, 8},  {"u32x3", 12, 4}, {"u32x4", 16, 16}, {"f16x2", 4, 4},  {"i32x2", 8, 8}};
    assert_int_equal(k->param_count, 10);
    for (size_t i = 0; i < 10; i++)
        expect_param(k, i, want[i].sig, want[i].size, want[i].align);
    assert_string_equal(m->kernels[ki].params[8].c_spelling, "mox_half2");
    assert_true(k->features & MOX_KFEAT_F16);
    front_run_free(&run);
}

static void test_vector_records(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/vectors.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    const mox_abi_kernel *k = front_kernel(run.module, "bodies", NULL);
    expect_param(k, 0, "Body{pos@0:f32x4,vel@16:f32x3,mass@28:f32}", 32, 16);
    expect_param(k, 2, "Gapped{a@0:f32,b@16/16:f32,c@24:u32x2}", 32, 16);
    expect_param(k, 3, "Lead{v@0/16:[f32;3],tag@12:u8}", 16, 16);
    expect_param(k, 4, "Halves{h@0:f16x2,n@4:u16}", 8, 4);
    assert_true(k->features & MOX_KFEAT_F16);
    front_run_free(&run);
}

static void test_packed_vector(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("reject/records/vector_packed.c"));
    front_expect_error_at(&run, FIXTURE("reject/records/vector_packed.h"), "EXPECT:packed_vector",
                          "record 'PackedVec' is not canonical: member 'v' is at offset 1, the canonical offset is 16");
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_params),
        cmocka_unit_test(test_vector_records),
        cmocka_unit_test(test_packed_vector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
