/* test_front_records.c - records (C structs) in the ABI: layouts read from
 * clang equal the canonical ones, names follow the spelling (typedef name
 * or struct tag), each record is listed once with its header; and every
 * record moxc must reject, at the member or declaration at fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

#define RECORDS(name) FIXTURE("reject/records/" name)

static const moxc_record *find_record(const moxc_module *m, const char *name) {
    for (size_t i = 0; i < m->record_count; i++)
        if (strcmp(m->records[i].name, name) == 0)
            return &m->records[i];
    fail_msg("record %s not listed", name);
    return NULL;
}

static void expect_signature(const mox_abi_layout *layout, const char *expected) {
    char *sig = front_signature(layout);
    assert_string_equal(sig, expected);
    free(sig);
}

static void test_particles(void **state) {
    (void)state;
    front_run run = front_parse1(FIXTURE("accept/particles.c"));
    if (!run.ok)
        fail_msg("rejected:\n%s", run.diagnostics);
    moxc_module *m = run.module;
    size_t ki;
    const mox_abi_kernel *k = front_kernel(m, "particle_update", &ki);
    const char *particle =
        "Particle{tag@0:u8,flags@2:u16,id@4:u32,motion@8:Motion{position@0:[f32;2],"
        "velocity@8:[f32;2]},color@24:[u8;3]}";
    assert_int_equal(k->params[0].kind, MOX_PARAM_BUFFER);
    assert_int_equal(k->params[0].access, MOX_PARAM_READ);
    expect_signature(k->params[0].layout, particle);
    assert_int_equal(k->params[0].layout->size, 28);
    assert_int_equal(k->params[0].layout->align, 4);
    assert_int_equal(k->params[1].access, MOX_PARAM_WRITE);
    expect_signature(k->params[1].layout, particle);
    assert_int_equal(k->params[2].kind, MOX_PARAM_VALUE);
    expect_signature(k->params[2].layout, "Config{dt@0:f32,acceleration@4:[f32;2]}");
    assert_string_equal(m->kernels[ki].params[0].c_spelling, "Particle");
    assert_string_equal(m->kernels[ki].params[2].c_spelling, "Config");
    assert_false(k->has_required_block == false);
    assert_int_equal(k->required_block[0], 64);
    /* deferred: advance(&p, ...) writes only the caller's local */
    assert_int_equal(k->features, MOX_KFEAT_GATE_DEFERRED);

    const mox_abi_kernel *s = front_kernel(m, "samples", &ki);
    expect_signature(s->params[0].layout, "sample{tag@0:u8,half@2:[f16;2],grid@6:[[i16;3];2]}");
    assert_int_equal(s->params[0].layout->size, 18);
    assert_int_equal(s->params[0].layout->align, 2);
    expect_signature(s->params[1].layout, "f16");
    assert_int_equal(s->params[1].access, MOX_PARAM_WRITE);
    assert_int_equal(s->params[2].kind, MOX_PARAM_VALUE);
    assert_string_equal(m->kernels[ki].params[0].c_spelling, "struct sample");
    assert_string_equal(m->kernels[ki].params[1].c_spelling, "mox_f16");
    assert_int_equal(s->features, MOX_KFEAT_F16 | MOX_KFEAT_GATE_DEFERRED);

    /* every record once, nested ones included, with the header's real path */
    assert_int_equal(m->record_count, 4);
    char *header = front_real(FIXTURE("accept/particles.h"));
    const char *names[] = {"Motion", "Particle", "Config", "sample"};
    const char *spellings[] = {"Motion", "Particle", "Config", "struct sample"};
    for (size_t i = 0; i < 4; i++) {
        const moxc_record *r = find_record(m, names[i]);
        assert_string_equal(r->c_spelling, spellings[i]);
        assert_string_equal(r->header, header);
    }
    free(header);
    front_run_free(&run);
}

static void test_pointer_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_pointer.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:pointer",
                          "record 'WithPointer' has a pointer member 'data'");
    front_run_free(&run);
}

/* Every member's problem is reported, not only the first one's. */
static void test_every_member_problem(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_two_problems.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:two_first",
                          "record 'TwoProblems' has a bit-field 'flags'");
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:two_second",
                          "record 'TwoProblems' has a pointer member 'values'");
    front_run_free(&run);
}

static void test_bit_field(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_bitfield.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:bitfield",
                          "record 'WithBitField' has a bit-field 'low'");
    front_run_free(&run);
}

static void test_packed(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_packed.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:packed",
                          "record 'Packed' is not canonical: member 'value' is at offset 1, the canonical offset is 4");
    front_run_free(&run);
}

static void test_aligned(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_aligned.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:aligned",
                          "record 'Aligned' is not canonical: its size is 16, the canonical size is 8");
    front_run_free(&run);
}

static void test_union_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_union.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:union",
                          "record 'WithUnion' has a union member 'value'");
    front_run_free(&run);
}

static void test_flexible_array(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_flexible.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:flexible",
                          "record 'Flexible' has a flexible array member 'items'");
    front_run_free(&run);
}

static void test_empty(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_empty.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:empty",
                          "record 'Empty' has no fields");
    front_run_free(&run);
}

static void test_64bit_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_wide.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:wide",
                          "record 'Wide' member 'big' has unsupported type 'uint64_t': 64-bit integers");
    front_run_free(&run);
}

static void test_double_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_double.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:double",
                          "record 'Precise' member 'precise' has unsupported type 'double': double precision");
    front_run_free(&run);
}

static void test_bool_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_bool.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:bool",
                          "record 'WithBool' member 'on' has unsupported type");
    front_run_free(&run);
}

static void test_unnamed_nested_record(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_unnamed.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:unnamed",
                          "a record used by kernel 'use_unnamed' has no name");
    front_run_free(&run);
}

static void test_anonymous_member(void **state) {
    (void)state;
    front_run run = front_parse1(RECORDS("record_anonymous.c"));
    front_expect_error_at(&run, RECORDS("bad_records.h"), "EXPECT:anonymous",
                          "record 'AnonymousMember' has an anonymous member");
    front_run_free(&run);
}

static void test_record_in_source(void **state) {
    (void)state;
    front_expect_rejected(RECORDS("record_in_source.c"), "EXPECT:source",
                          "record 'Local' used by kernel 'use_local' must be declared in a header");
}

static void test_same_name_two_layouts(void **state) {
    (void)state;
    const char *sources[] = {RECORDS("conflict_a.c"), RECORDS("conflict_b.c")};
    front_run run = front_parse(sources, 2, NULL, NULL);
    char text[1200];
    char *first = front_real(RECORDS("conflict_a.h"));
    snprintf(text, sizeof text, "record 'Settings' has a different layout here than in %s", first);
    front_expect_error_at(&run, RECORDS("conflict_b.h"), "EXPECT:conflict", text);
    free(first);
    front_run_free(&run);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_particles),
        cmocka_unit_test(test_pointer_member),
        cmocka_unit_test(test_bit_field),
        cmocka_unit_test(test_every_member_problem),
        cmocka_unit_test(test_packed),
        cmocka_unit_test(test_aligned),
        cmocka_unit_test(test_union_member),
        cmocka_unit_test(test_flexible_array),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_64bit_member),
        cmocka_unit_test(test_double_member),
        cmocka_unit_test(test_bool_member),
        cmocka_unit_test(test_unnamed_nested_record),
        cmocka_unit_test(test_anonymous_member),
        cmocka_unit_test(test_record_in_source),
        cmocka_unit_test(test_same_name_two_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
