/* test_vectors.c - ABI version 2: vector layouts (CUDA's sizes and
 * alignments) and over-aligned record fields: construction, signatures,
 * the canonical check, the pinned JSON text, the version each ABI needs,
 * and the rejections (a version-1 ABI holding them, odd lanes, bad field
 * alignments). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"

static void assert_signature(const mox_abi_layout *l, const char *expected)
{
    char *sig = mox_abi_layout_signature(l);
    assert_non_null(sig);
    assert_string_equal(sig, expected);
    free(sig);
}

static mox_abi_field field(const char *name, mox_abi_layout *layout, uint64_t align)
{
    mox_abi_field f = {strdup(name), 0, layout, align};
    return f;
}

static void vector_layouts(void **state)
{
    static const struct {
        mox_scalar lane;
        uint32_t lanes;
        uint64_t size, align;
        const char *sig;
    } cases[] = {
        {MOX_SCALAR_F32, 2, 8, 8, "f32x2"},   {MOX_SCALAR_F32, 3, 12, 4, "f32x3"},
        {MOX_SCALAR_F32, 4, 16, 16, "f32x4"}, {MOX_SCALAR_I32, 2, 8, 8, "i32x2"},
        {MOX_SCALAR_I32, 3, 12, 4, "i32x3"},  {MOX_SCALAR_I32, 4, 16, 16, "i32x4"},
        {MOX_SCALAR_U32, 2, 8, 8, "u32x2"},   {MOX_SCALAR_U32, 3, 12, 4, "u32x3"},
        {MOX_SCALAR_U32, 4, 16, 16, "u32x4"}, {MOX_SCALAR_F16, 2, 4, 4, "f16x2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mox_abi_layout *l = mox_abi_layout_vector(cases[i].lane, cases[i].lanes);
        assert_non_null(l);
        assert_int_equal(l->kind, MOX_LAYOUT_VECTOR);
        assert_int_equal(l->size, cases[i].size);
        assert_int_equal(l->align, cases[i].align);
        assert_signature(l, cases[i].sig);
        mox_abi_layout_free(l);
    }
    /* Only CUDA's vectors of the dialect's lane types. */
    assert_null(mox_abi_layout_vector(MOX_SCALAR_F32, 1));
    assert_null(mox_abi_layout_vector(MOX_SCALAR_F32, 5));
    assert_null(mox_abi_layout_vector(MOX_SCALAR_F16, 4));
    assert_null(mox_abi_layout_vector(MOX_SCALAR_U8, 4));
    assert_null(mox_abi_layout_vector(MOX_SCALAR_COUNT_, 2));
    assert_false(mox_abi_vector_supported(MOX_SCALAR_I16, 2));
}

/* Body{pos:f32x4, vel:f32x3, mass:f32}: 16-aligned, 32 bytes. */
static mox_abi_layout *body_record(void)
{
    mox_abi_field *fields = calloc(3, sizeof *fields);
    fields[0] = field("pos", mox_abi_layout_vector(MOX_SCALAR_F32, 4), 0);
    fields[1] = field("vel", mox_abi_layout_vector(MOX_SCALAR_F32, 3), 0);
    fields[2] = field("mass", mox_abi_layout_scalar(MOX_SCALAR_F32), 0);
    return mox_abi_layout_record("Body", fields, 3);
}

static void records_with_vectors(void **state)
{
    mox_abi_layout *body = body_record();
    assert_non_null(body);
    assert_int_equal(body->align, 16);
    assert_int_equal(body->size, 32);
    assert_int_equal(body->fields[1].offset, 16);
    assert_int_equal(body->fields[2].offset, 28);
    assert_signature(body, "Body{pos@0:f32x4,vel@16:f32x3,mass@28:f32}");
    mox_abi_layout *copy = mox_abi_layout_clone(body);
    assert_true(mox_abi_layout_equal(body, copy));
    copy->fields[1].layout->length = 4;
    assert_false(mox_abi_layout_equal(body, copy));
    mox_abi_layout_free(copy);
    mox_abi_layout_free(body);
}

/* {float a; _Alignas(16) float b; float c;} and {_Alignas(16) float v[3]; u8 t;} */
static void aligned_fields(void **state)
{
    mox_abi_field *fields = calloc(3, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_F32), 0);
    fields[1] = field("b", mox_abi_layout_scalar(MOX_SCALAR_F32), 16);
    fields[2] = field("c", mox_abi_layout_scalar(MOX_SCALAR_F32), 0);
    mox_abi_layout *l = mox_abi_layout_record("Gap", fields, 3);
    assert_non_null(l);
    assert_int_equal(l->fields[1].offset, 16);
    assert_int_equal(l->fields[2].offset, 20);
    assert_int_equal(l->size, 32);
    assert_int_equal(l->align, 16);
    assert_signature(l, "Gap{a@0:f32,b@16/16:f32,c@20:f32}");
    mox_abi_layout *copy = mox_abi_layout_clone(l);
    assert_true(mox_abi_layout_equal(l, copy));
    copy->fields[1].align = 32;
    assert_false(mox_abi_layout_equal(l, copy));
    mox_abi_layout_free(copy);
    mox_abi_layout_free(l);

    fields = calloc(2, sizeof *fields);
    fields[0] = field("v", mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_F32), 3), 16);
    fields[1] = field("t", mox_abi_layout_scalar(MOX_SCALAR_U8), 0);
    l = mox_abi_layout_record("Lead", fields, 2);
    assert_non_null(l);
    assert_int_equal(l->fields[1].offset, 12);
    assert_int_equal(l->size, 16);
    assert_int_equal(l->align, 16);
    assert_signature(l, "Lead{v@0/16:[f32;3],t@12:u8}");
    mox_abi_layout_free(l);

    /* An explicit alignment is a power of two above the type's own. */
    static const uint64_t bad[] = {4, 2, 24};
    for (size_t i = 0; i < 3; i++) {
        fields = calloc(1, sizeof *fields);
        fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_F32), bad[i]);
        assert_null(mox_abi_layout_record("Bad", fields, 1));
    }
}

/* One kernel with one value parameter of `layout` (taken over). */
static mox_abi *one_param_abi(mox_abi_layout *layout, uint32_t version)
{
    mox_abi *abi = calloc(1, sizeof *abi);
    abi->version = version;
    abi->kernel_count = 1;
    abi->kernels = calloc(1, sizeof *abi->kernels);
    abi->kernels[0].name = strdup("k");
    abi->kernels[0].param_count = 1;
    abi->kernels[0].params = calloc(1, sizeof *abi->kernels[0].params);
    abi->kernels[0].params[0].name = strdup("v");
    abi->kernels[0].params[0].kind = MOX_PARAM_VALUE;
    abi->kernels[0].params[0].layout = layout;
    return abi;
}

static void versions(void **state)
{
    mox_artifact_error err = {0};
    mox_abi *abi = one_param_abi(mox_abi_layout_scalar(MOX_SCALAR_F32), 1);
    assert_int_equal(mox_abi_required_version(abi), 1);
    assert_true(mox_abi_validate(abi, &err));
    abi->version = 2; /* a newer version may hold an older ABI */
    assert_true(mox_abi_validate(abi, &err));
    mox_abi_free(abi);

    abi = one_param_abi(body_record(), 1);
    assert_int_equal(mox_abi_required_version(abi), 2);
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel k parameter v uses a vector or an over-aligned record field, "
                                        "which need kernel ABI version 2 (this ABI is version 1)"));
    abi->version = 2;
    if (!mox_abi_validate(abi, &err))
        fail_msg("version-2 ABI rejected: %s", err.message);
    mox_abi_free(abi);

    mox_abi_field *fields = calloc(1, sizeof *fields);
    fields[0] = field("b", mox_abi_layout_scalar(MOX_SCALAR_U32), 8);
    abi = one_param_abi(mox_abi_layout_array(mox_abi_layout_record("R", fields, 1), 2), 1);
    assert_int_equal(mox_abi_required_version(abi), 2);
    mox_abi_free(abi);
}

/* Pins the version-2 JSON: "kind":"vector" with "lanes", and "alignment"
 * only on over-aligned fields. */
static const char golden[] =
    "{\"version\":2,\"required_features\":[],\"kernels\":[{\"name\":\"k\",\"required_block\":null,"
    "\"features\":[],\"parameters\":[{\"name\":\"v\",\"binding\":0,\"kind\":\"value\",\"layout\":"
    "{\"size\":32,\"alignment\":16,\"kind\":\"record\",\"name\":\"Pair\",\"fields\":[{\"name\":\"a\","
    "\"offset\":0,\"layout\":{\"size\":8,\"alignment\":8,\"kind\":\"vector\",\"scalar\":\"u32\","
    "\"lanes\":2}},{\"name\":\"b\",\"offset\":16,\"alignment\":16,\"layout\":{\"size\":4,"
    "\"alignment\":4,\"kind\":\"scalar\",\"scalar\":\"f32\"}}]}}]}]}";

static void json_text(void **state)
{
    mox_abi_field *fields = calloc(2, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_vector(MOX_SCALAR_U32, 2), 0);
    fields[1] = field("b", mox_abi_layout_scalar(MOX_SCALAR_F32), 16);
    mox_abi *abi = one_param_abi(mox_abi_layout_record("Pair", fields, 2), 2);
    char *text = mox_abi_to_json(abi);
    assert_string_equal(text, golden);
    mox_abi *back = NULL;
    mox_artifact_error err = {0};
    if (!mox_abi_from_json(text, strlen(text), &back, &err))
        fail_msg("round trip rejected: %s", err.message);
    assert_int_equal(back->version, 2);
    assert_true(mox_abi_layout_equal(abi->kernels[0].params[0].layout, back->kernels[0].params[0].layout));
    free(text);
    mox_abi_free(abi);
    mox_abi_free(back);
}

static void json_rejects(void **state)
{
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"{\"version\":2,", "{\"version\":1,", "need kernel ABI version 2 (this ABI is version 1)"},
        {"\"lanes\":2", "\"lanes\":5", "field \"lanes\" must be an integer from 0 to 4"},
        {"\"lanes\":2", "\"lanes\":1", "unsupported vector type (1 lanes of u32"},
        {"\"scalar\":\"u32\",\"lanes\":2", "\"scalar\":\"u8\",\"lanes\":2", "unsupported vector type (2 lanes of u8"},
        {"\"scalar\":\"u32\",\"lanes\":2", "\"scalar\":\"u64\",\"lanes\":2", "unknown scalar type \"u64\""},
        {"\"size\":8,\"alignment\":8,\"kind\":\"vector\"", "\"size\":8,\"alignment\":4,\"kind\":\"vector\"",
         "(vector u32x2 has size 8 and alignment 4, canonical 8 and 8)"},
        {",\"lanes\":2}", "}", "missing field \"lanes\""},
        {"\"alignment\":16,\"layout\"", "\"alignment\":4,\"layout\"",
         "field Pair.b has alignment 4; an explicit field alignment is a power of two above its type's alignment 4"},
        {"\"alignment\":16,\"layout\"", "\"alignment\":12,\"layout\"", "field Pair.b has alignment 12"},
        {"\"offset\":16,\"alignment\":16", "\"offset\":8,\"alignment\":16", "field Pair.b has offset 8, canonical 16"},
        {"\"alignment\":16,\"layout\"", "\"alignment\":\"16\",\"layout\"", "field \"alignment\" must be a non-negative integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = fx_replace(golden, cases[i].from, cases[i].to);
        mox_abi *abi = (mox_abi *)1;
        mox_artifact_error err = {0};
        if (mox_abi_from_json(text, strlen(text), &abi, &err))
            fail_msg("case %zu accepted; expected \"%s\"", i, cases[i].message);
        assert_null(abi);
        if (!strstr(err.message, cases[i].message))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.message, cases[i].message);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vector_layouts), cmocka_unit_test(records_with_vectors),
        cmocka_unit_test(aligned_fields), cmocka_unit_test(versions),
        cmocka_unit_test(json_text),      cmocka_unit_test(json_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
