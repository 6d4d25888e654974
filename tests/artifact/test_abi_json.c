/* test_abi_json.c - the ABI's JSON form: a pinned golden text, round trips,
 * every validation rule rejected with its message (as JSON mutations and as
 * in-memory edits), and truncated text always rejected without a crash. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"

/* Pins the format: key order, feature order, null block, compact text. */
static const char golden[] =
    "{\"version\":1,\"required_features\":[\"atomics\"],\"kernels\":[{\"name\":\"count\","
    "\"required_block\":[64,2,1],\"features\":[\"atomics\",\"fail\"],\"parameters\":["
    "{\"name\":\"hits\",\"binding\":0,\"kind\":\"buffer\",\"access\":\"atomic\",\"element\":"
    "{\"size\":4,\"alignment\":4,\"kind\":\"scalar\",\"scalar\":\"u32\"},\"stride\":4},"
    "{\"name\":\"cfg\",\"binding\":1,\"kind\":\"value\",\"layout\":{\"size\":6,\"alignment\":2,"
    "\"kind\":\"record\",\"name\":\"Cfg\",\"fields\":[{\"name\":\"tag\",\"offset\":0,\"layout\":"
    "{\"size\":1,\"alignment\":1,\"kind\":\"scalar\",\"scalar\":\"u8\"}},{\"name\":\"pair\","
    "\"offset\":2,\"layout\":{\"size\":4,\"alignment\":2,\"kind\":\"array\",\"element\":{\"size\":2,"
    "\"alignment\":2,\"kind\":\"scalar\",\"scalar\":\"i16\"},\"length\":2,\"stride\":2}}]}}]},"
    "{\"name\":\"noop\",\"required_block\":null,\"features\":[],\"parameters\":[]}]}";

static void golden_text(void **state)
{
    mox_abi *abi = NULL;
    mox_artifact_error err = {0};
    if (!mox_abi_from_json(golden, strlen(golden), &abi, &err))
        fail_msg("golden ABI rejected: %s", err.message);
    assert_int_equal(abi->kernel_count, 2);
    const mox_abi_kernel *k = &abi->kernels[0];
    assert_string_equal(k->name, "count");
    assert_true(k->has_required_block);
    assert_int_equal(k->required_block[0], 64);
    assert_int_equal(k->required_block[1], 2);
    assert_int_equal(k->features, MOX_KFEAT_ATOMICS | MOX_KFEAT_FAIL);
    assert_int_equal(k->params[0].access, MOX_PARAM_ATOMIC);
    assert_int_equal(k->params[1].kind, MOX_PARAM_VALUE);
    char *sig = mox_abi_layout_signature(k->params[1].layout);
    assert_string_equal(sig, "Cfg{tag@0:u8,pair@2:[i16;2]}");
    free(sig);
    assert_false(abi->kernels[1].has_required_block);
    assert_int_equal(abi->required_features, MOX_FEAT_ATOMICS);
    char *text = mox_abi_to_json(abi);
    assert_string_equal(text, golden);
    free(text);
    mox_abi_free(abi);
}

/* The kernel feature moxc sets for kernels whose gated CUDA entries defer
 * the gate check (MOX_KFEAT_GATE_DEFERRED): read, written back in bit order
 * after the others; the golden text without it reads without the bit. */
static void gate_deferred_feature(void **state)
{
    (void)state;
    char *text = fx_replace(golden, "\"features\":[],", "\"features\":[\"fail\",\"gate_deferred\"],");
    mox_abi *abi = NULL;
    mox_artifact_error err = {0};
    if (!mox_abi_from_json(text, strlen(text), &abi, &err))
        fail_msg("ABI with gate_deferred rejected: %s", err.message);
    assert_int_equal(abi->kernels[1].features, MOX_KFEAT_FAIL | MOX_KFEAT_GATE_DEFERRED);
    assert_int_equal(MOX_KFEAT_GATE_DEFERRED, 1u << 7); /* the earlier bits keep their values */
    char *back = mox_abi_to_json(abi);
    assert_string_equal(back, text);
    free(back);
    mox_abi_free(abi);
    free(text);
    assert_true(mox_abi_from_json(golden, strlen(golden), &abi, &err));
    for (size_t k = 0; k < abi->kernel_count; k++)
        assert_false(abi->kernels[k].features & MOX_KFEAT_GATE_DEFERRED);
    mox_abi_free(abi);
}

static void params_equal(const mox_abi_param *a, const mox_abi_param *b)
{
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->binding, b->binding);
    assert_int_equal(a->kind, b->kind);
    if (a->kind == MOX_PARAM_BUFFER)
        assert_int_equal(a->access, b->access);
    assert_true(mox_abi_layout_equal(a->layout, b->layout));
}

static void round_trip(void **state)
{
    mox_abi *abi = fx_abi();
    char *text = mox_abi_to_json(abi);
    char *again = mox_abi_to_json(abi);
    assert_string_equal(text, again); /* deterministic */
    mox_abi *back = NULL;
    mox_artifact_error err = {0};
    if (!mox_abi_from_json(text, strlen(text), &back, &err))
        fail_msg("round trip rejected: %s", err.message);
    assert_int_equal(back->version, abi->version);
    assert_int_equal(back->required_features, abi->required_features);
    assert_int_equal(back->kernel_count, abi->kernel_count);
    for (size_t k = 0; k < abi->kernel_count; k++) {
        const mox_abi_kernel *a = &abi->kernels[k], *b = &back->kernels[k];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->features, b->features);
        assert_int_equal(a->has_required_block, b->has_required_block);
        assert_memory_equal(a->required_block, b->required_block, sizeof a->required_block);
        assert_int_equal(a->param_count, b->param_count);
        for (size_t p = 0; p < a->param_count; p++)
            params_equal(&a->params[p], &b->params[p]);
    }
    char *third = mox_abi_to_json(back);
    assert_string_equal(third, text);
    /* Whitespace and key order do not matter on input; output is canonical. */
    char *spaced = fx_replace(text, "{\"version\":1,\"required_features\"",
                              "{ \"required_features\"");
    char *moved = fx_replace(spaced, "\"kernels\"", "\"version\" : 1 ,\n \"kernels\"");
    mox_abi *reordered = NULL;
    if (!mox_abi_from_json(moved, strlen(moved), &reordered, &err))
        fail_msg("reordered ABI rejected: %s", err.message);
    char *fourth = mox_abi_to_json(reordered);
    assert_string_equal(fourth, text);
    free(text);
    free(again);
    free(third);
    free(fourth);
    free(spaced);
    free(moved);
    mox_abi_free(abi);
    mox_abi_free(back);
    mox_abi_free(reordered);
}

static void expect_reject_text(const char *text, const char *message)
{
    mox_abi *abi = (mox_abi *)1;
    mox_artifact_error err = {0};
    if (mox_abi_from_json(text, strlen(text), &abi, &err))
        fail_msg("accepted an ABI that should fail with \"%s\"", message);
    assert_null(abi);
    if (!strstr(err.message, message))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, message);
}

/* Replaces `from` with `to` in the fixture's JSON and expects `message`. */
static void expect_mutation(const char *from, const char *to, const char *message)
{
    char *text = fx_abi_json();
    char *mutated = fx_replace(text, from, to);
    expect_reject_text(mutated, message);
    free(mutated);
    free(text);
}

static void mutations(void **state)
{
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"{\"version\":1,", "{\"version\":999,", "unsupported kernel ABI version 999"},
        {"{\"version\":1,", "{\"version\":3,", "unsupported kernel ABI version 3 (this mox reads versions 1 to 2)"},
        {"{\"version\":1,", "{\"version\":\"1\",", "field \"version\" must be an integer"},
        {"\"name\":\"output\",\"binding\":1", "\"name\":\"output\",\"binding\":31",
         "kernel scale_256 has a nonsequential binding"},
        {"\"name\":\"n\",\"binding\":2", "\"name\":\"n\",\"binding\":1",
         "kernel scale_256 has a nonsequential binding"},
        {"},\"stride\":4},{\"name\":\"output\"", "},\"stride\":0},{\"name\":\"output\"",
         "kernel scale_256 parameter input: buffer stride 0 differs from its element size 4"},
        {"\"name\":\"input\",\"binding\":0,\"kind\":\"buffer\",\"access\":\"read\",\"element\":{\"size\":4,",
         "\"name\":\"input\",\"binding\":0,\"kind\":\"buffer\",\"access\":\"read\",\"element\":{\"size\":9223372036854775807,",
         "kernel scale_256 parameter input element: layout size 9223372036854775807 exceeds"},
        {"\"name\":\"input\",\"binding\":0,\"kind\":\"buffer\",\"access\":\"read\",\"element\":{\"size\":4,",
         "\"name\":\"input\",\"binding\":0,\"kind\":\"buffer\",\"access\":\"read\",\"element\":{\"size\":18446744073709551615,",
         "is not valid JSON"},
        {"\"name\":\"dt\",\"offset\":0,\"layout\":{\"size\":4,\"alignment\":4",
         "\"name\":\"dt\",\"offset\":0,\"layout\":{\"size\":4,\"alignment\":3",
         "kernel update_particles parameter config field Config.dt: layout differs from its "
         "canonical size, alignment, offsets, or stride"},
        {"\"access\":\"atomic\",\"element\":{\"size\":4,\"alignment\":4,\"kind\":\"scalar\",\"scalar\":\"u32\"}",
         "\"access\":\"atomic\",\"element\":{\"size\":4,\"alignment\":4,\"kind\":\"scalar\",\"scalar\":\"f32\"}",
         "kernel update_particles requires integer atomic elements"},
        {"\"required_block\":[256,1,1]", "\"required_block\":[256,0,1]",
         "kernel scale_256 has an invalid block requirement"},
        {"\"required_block\":[256,1,1]", "\"required_block\":[65536,65536,1]",
         "kernel scale_256 has an invalid block requirement"},
        {"\"required_block\":[256,1,1]", "\"required_block\":[4294967296,1,1]",
         "kernel scale_256 has an invalid block requirement"},
        {"\"required_block\":[256,1,1]", "\"required_block\":[256,1]",
         "kernel scale_256: field \"required_block\" must be null or an array of 3 integers"},
        {"\"features\":[\"atomics\",\"fail\"]", "\"features\":[\"atomics\",\"fail\",\"teleport\"]",
         "kernel update_particles: unknown feature \"teleport\""},
        {"\"features\":[\"atomics\",\"fail\"]", "\"features\":[\"atomics\",\"atomics\"]",
         "kernel update_particles: duplicate feature \"atomics\""},
        {"\"required_features\":[\"atomics\",\"warp_ops\"]",
         "\"required_features\":[\"atomics\",\"warp_ops\",\"ray_tracing\"]",
         "ABI: unknown feature \"ray_tracing\""},
        {"\"required_features\":[\"atomics\",\"warp_ops\"]", "\"required_features\":[\"atomics\"]",
         "required_features must list \"warp_ops\": kernel warp_total needs it"},
        {"\"features\":[\"barrier\",\"warp\",\"atomics\",\"shared\",\"f16\"]",
         "\"features\":[\"barrier\",\"atomics\",\"shared\",\"f16\"]",
         "required_features lists \"warp_ops\" but no kernel needs it"},
        {"\"features\":[\"barrier\",\"warp\",\"atomics\",\"shared\",\"f16\"]",
         "\"features\":[\"barrier\",\"warp\",\"shared\",\"f16\"]",
         "kernel warp_total has the atomic buffer parameter totals but does not list the \"atomics\" feature"},
        {"\"name\":\"warp_total\"", "\"name\":\"scale_256\"", "duplicate kernel name \"scale_256\""},
        {"\"name\":\"warp_total\"", "\"name\":\"class\"", "kernel name \"class\" is not a valid identifier"},
        {"{\"version\":1,", "{\"version\":1,\"ignored\":true,", "ABI: unknown field \"ignored\""},
        {"\"name\":\"n\",\"binding\":2,\"kind\":\"value\",", "\"name\":\"n\",\"binding\":2,\"kind\":\"value\",\"offset\":0,",
         "kernel scale_256 parameter 2: unknown field \"offset\""},
        {"\"name\":\"n\",\"binding\":2,\"kind\":\"value\",", "\"name\":\"n\",\"binding\":2,\"kind\":\"value\",\"access\":\"read\",",
         "kernel scale_256 parameter 2: unknown field \"access\""},
        {"\"scalar\":\"f32\"", "\"scalar\":\"f64\"", "unknown scalar type \"f64\""},
        {"\"name\":\"id\",\"offset\":4", "\"name\":\"id\",\"offset\":5",
         "kernel update_particles parameter particles element: layout differs from its canonical "
         "size, alignment, offsets, or stride (field Particle.id has offset 5, canonical 4)"},
        {"{\"size\":28,\"alignment\":4,\"kind\":\"record\"", "{\"size\":32,\"alignment\":4,\"kind\":\"record\"",
         "(record Particle has size 32 and alignment 4, canonical 28 and 4)"},
        {"},\"stride\":28}", "},\"stride\":32}", "buffer stride 32 differs from its element size 28"},
        {"},\"stride\":28}", "}}", "kernel update_particles parameter 0: missing field \"stride\""},
        {"\"length\":2,\"stride\":4}},{\"name\":\"velocity\"",
         "\"length\":2,\"stride\":8}},{\"name\":\"velocity\"",
         "field Motion.position: layout differs from its canonical size, alignment, offsets, or "
         "stride (array stride 8 differs from its element size 4)"},
        {"\"length\":3,\"stride\":1}}]}", "\"length\":0,\"stride\":1}}]}",
         "field Particle.color: array length must be at least 1"},
        {"\"name\":\"input\"", "\"name\":\"in put\"",
         "kernel scale_256 parameter name \"in put\" is not a valid identifier"},
        {"\"name\":\"output\"", "\"name\":\"input\"", "kernel scale_256 has a duplicate parameter name \"input\""},
        {"\"name\":\"tag\"", "\"name\":\"flags\"", "record Particle has a duplicate field name \"flags\""},
        {"\"name\":\"Particle\"", "\"name\":\"Par-ticle\"", "record name \"Par-ticle\" is not a valid identifier"},
        {"\"access\":\"read\"", "\"access\":\"readwrite\"", "kernel scale_256 parameter input: unknown access \"readwrite\""},
        {"\"kind\":\"value\"", "\"kind\":\"pointer\"", "kernel scale_256 parameter 2: unknown parameter kind \"pointer\""},
        {"\"kind\":\"scalar\",\"scalar\":\"f32\"", "\"kind\":\"tuple\",\"scalar\":\"f32\"", "unknown layout kind \"tuple\""},
        {"\"binding\":0", "\"binding\":\"0\"", "kernel scale_256 parameter 0: field \"binding\" must be an integer"},
        {"\"binding\":0", "\"binding\":-1", "field \"binding\" must be an integer from 0 to 4294967295"},
        {"\"binding\":0", "\"binding\":0.0", "field \"binding\" must be an integer"},
        {"\"features\":[]", "\"features\":{}", "kernel scale_256: field \"features\" must be an array of strings"},
        {"\"features\":[]", "\"features\":[1]", "kernel scale_256: field \"features\" must be an array of strings"},
        {"\"parameters\":[", "\"parameters\":[[],", "kernel scale_256 parameter 0 must be a JSON object"},
        {"{\"version\":1,", "{\"version\":1,\"version\":1,", "is not valid JSON: duplicate object key"},
        {"\"name\":\"scale_256\",", "", "kernel 0: missing field \"name\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_mutation(cases[i].from, cases[i].to, cases[i].message);
}

static void structural_rejects(void **state)
{
    expect_reject_text("{\"version\":1,\"required_features\":[],\"kernels\":[]}",
                       "artifact contains no kernels");
    expect_reject_text("{\"version\":1,\"required_features\":[]}", "ABI: missing field \"kernels\"");
    expect_reject_text("{\"required_features\":[],\"kernels\":[]}", "ABI: missing field \"version\"");
    expect_reject_text("[1]", "the ABI must be a JSON object");
    expect_reject_text("", "is not valid JSON");
    expect_reject_text(golden + 1, "is not valid JSON");
    /* An empty record: the value parameter's layout rewritten by hand. */
    const char *start = strstr(golden, "\"layout\":{\"size\":6");
    const char *end = strstr(golden, "]}}]},{\"name\":\"noop\"");
    assert_non_null(start);
    assert_non_null(end);
    char *text = malloc(sizeof golden + 128);
    sprintf(text, "%.*s\"layout\":{\"size\":0,\"alignment\":1,\"kind\":\"record\","
            "\"name\":\"Cfg\",\"fields\":[%s", (int)(start - golden), golden, end);
    expect_reject_text(text, "kernel count parameter cfg: record Cfg has no fields");
    free(text);
    /* Trailing bytes after the object. */
    size_t n = strlen(golden);
    char *trailing = malloc(n + 3);
    memcpy(trailing, golden, n);
    memcpy(trailing + n, " x", 3);
    expect_reject_text(trailing, "is not valid JSON");
    free(trailing);
    mox_abi *abi = (mox_abi *)1;
    mox_artifact_error err = {0};
    assert_false(mox_abi_from_json(NULL, 0, &abi, &err));
    assert_null(abi);
}

/* Nesting deeper than MOX_ABI_MAX_LAYOUT_DEPTH is refused, not recursed. */
static void deep_nesting(void **state)
{
    size_t depth = 200;
    char *text = malloc(depth * 128 + 512);
    size_t n = (size_t)sprintf(text, "{\"version\":1,\"required_features\":[],\"kernels\":[{\"name\":\"k\","
                               "\"required_block\":null,\"features\":[],\"parameters\":[{\"name\":\"v\","
                               "\"binding\":0,\"kind\":\"value\",\"layout\":");
    for (size_t i = 0; i < depth; i++)
        n += (size_t)sprintf(text + n, "{\"size\":1,\"alignment\":1,\"kind\":\"array\",\"length\":1,"
                             "\"stride\":1,\"element\":");
    n += (size_t)sprintf(text + n, "{\"size\":1,\"alignment\":1,\"kind\":\"scalar\",\"scalar\":\"u8\"}");
    for (size_t i = 0; i < depth; i++)
        text[n++] = '}';
    sprintf(text + n, "}]}]}");
    expect_reject_text(text, "kernel k parameter v nests arrays and records more than 32 levels deep "
                             "(array at level 33); the ABI allows at most 32");
    free(text);
}

static void truncation(void **state)
{
    char *text = fx_abi_json();
    size_t n = strlen(text);
    for (size_t cut = 0; cut < n; cut++) {
        mox_abi *abi = NULL;
        mox_artifact_error err = {0};
        if (mox_abi_from_json(text, cut, &abi, &err))
            fail_msg("ABI text cut at byte %zu was accepted", cut);
        assert_null(abi);
        assert_true(err.message[0] != '\0');
    }
    free(text);
}

/* Rules that JSON cannot express directly, checked on the model. */
static void validate_model(void **state)
{
    mox_artifact_error err = {0};
    mox_abi *abi = fx_abi();
    assert_true(mox_abi_validate(abi, &err));

    /* 32 parameters. */
    mox_abi_kernel *k = &abi->kernels[0];
    mox_abi_param *params = calloc(32, sizeof *params);
    for (uint32_t i = 0; i < 32; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%u", i);
        params[i].name = strdup(name);
        params[i].binding = i;
        params[i].kind = MOX_PARAM_VALUE;
        params[i].layout = mox_abi_layout_scalar(MOX_SCALAR_U32);
    }
    mox_abi_param *saved = k->params;
    size_t saved_count = k->param_count;
    k->params = params;
    k->param_count = 32;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel scale_256 exceeds 31 parameters"));
    /* ... which to_json still writes, and from_json rejects the same way. */
    char *text = mox_abi_to_json(abi);
    expect_reject_text(text, "kernel scale_256 exceeds 31 parameters");
    free(text);
    k->param_count = 31;
    assert_true(mox_abi_validate(abi, &err));
    k->param_count = 32;
    for (uint32_t i = 0; i < 32; i++) {
        free(params[i].name);
        mox_abi_layout_free(params[i].layout);
    }
    free(params);
    k->params = saved;
    k->param_count = saved_count;

    k->required_block[0] = 0x10000;
    k->required_block[1] = 0x10000;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel scale_256 has an invalid block requirement"));
    k->required_block[0] = 0xFFFFFFFF;
    k->required_block[1] = 1;
    assert_true(mox_abi_validate(abi, &err));
    k->required_block[0] = 256;

    abi->version = 999;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "unsupported kernel ABI version 999"));
    abi->version = 1;

    k->features |= 1u << 12;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel scale_256 has unknown feature bits 0x1000"));
    k->features = 0;

    mox_abi_layout *config = abi->kernels[1].params[1].layout;
    size_t fields = config->field_count;
    config->field_count = 0;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel update_particles parameter config: record Config has no fields"));
    config->field_count = fields;

    mox_abi_layout *element = abi->kernels[1].params[0].layout;
    element->size = UINT64_MAX;
    assert_false(mox_abi_validate(abi, &err));
    assert_non_null(strstr(err.message, "kernel update_particles parameter particles element: layout size"));
    assert_null(mox_abi_to_json(abi)); /* beyond the JSON integer range */
    element->size = 28;

    size_t kernels = abi->kernel_count;
    abi->kernel_count = 0;
    assert_false(mox_abi_validate(abi, &err));
    assert_string_equal(err.message, "artifact contains no kernels");
    abi->kernel_count = kernels;

    assert_true(mox_abi_validate(abi, &err));
    assert_false(mox_abi_validate(NULL, &err));
    assert_false(mox_abi_validate(NULL, NULL)); /* err is optional */
    mox_abi_free(abi);
    mox_abi_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_text),        cmocka_unit_test(gate_deferred_feature),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(mutations),          cmocka_unit_test(structural_rejects),
        cmocka_unit_test(deep_nesting),       cmocka_unit_test(truncation),
        cmocka_unit_test(validate_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
