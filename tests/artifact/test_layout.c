/* test_layout.c - SHA-256 vectors, canonical layouts of the reference's
 * examples, constructor limits, clone/equal, and signature text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "sha256.h"

static void sha256_vectors(void **state)
{
    char hex[65];
    assert_true(mox_sha256_hex("abc", 3, hex));
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_true(mox_sha256_hex(NULL, 0, hex));
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_true(mox_sha256_hex(two, strlen(two), hex));
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_true(mox_sha256_is_hex(hex));
}

static void sha256_is_hex(void **state)
{
    assert_true(mox_sha256_is_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    assert_false(mox_sha256_is_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
    assert_false(mox_sha256_is_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a"));
    assert_false(mox_sha256_is_hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0"));
    assert_false(mox_sha256_is_hex("ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    assert_false(mox_sha256_is_hex(""));
    assert_false(mox_sha256_is_hex(NULL));
}

static void scalars(void **state)
{
    static const struct {
        const char *name;
        uint32_t size;
    } expected[MOX_SCALAR_COUNT_] = {{"f32", 4}, {"f16", 2}, {"u32", 4}, {"i32", 4},
                                     {"u16", 2}, {"i16", 2}, {"u8", 1},  {"i8", 1}};
    for (int s = 0; s < MOX_SCALAR_COUNT_; s++) {
        assert_string_equal(mox_scalar_name((mox_scalar)s), expected[s].name);
        assert_int_equal(mox_scalar_size((mox_scalar)s), expected[s].size);
        mox_scalar back;
        assert_true(mox_scalar_from_name(expected[s].name, &back));
        assert_int_equal(back, s);
        mox_abi_layout *l = mox_abi_layout_scalar((mox_scalar)s);
        assert_int_equal(l->size, expected[s].size);
        assert_int_equal(l->align, expected[s].size);
        char *sig = mox_abi_layout_signature(l);
        assert_string_equal(sig, expected[s].name);
        free(sig);
        mox_abi_layout_free(l);
    }
    mox_scalar out;
    assert_false(mox_scalar_from_name("f64", &out));
    assert_false(mox_scalar_from_name("bool", &out));
    assert_null(mox_scalar_name(MOX_SCALAR_COUNT_));
    assert_null(mox_abi_layout_scalar(MOX_SCALAR_COUNT_));
}

static mox_abi_field field(const char *name, mox_abi_layout *layout)
{
    mox_abi_field f = {strdup(name), 0, layout, 0};
    return f;
}

static void assert_signature(const mox_abi_layout *l, const char *expected)
{
    char *sig = mox_abi_layout_signature(l);
    assert_non_null(sig);
    assert_string_equal(sig, expected);
    free(sig);
}

/* (u8, u32, [u16;3]) from the reference: size 16, align 4. */
static void record_with_padding(void **state)
{
    mox_abi_field *fields = calloc(3, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_U8));
    fields[1] = field("b", mox_abi_layout_scalar(MOX_SCALAR_U32));
    fields[2] = field("c", mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_U16), 3));
    mox_abi_layout *l = mox_abi_layout_record("Mixed", fields, 3);
    assert_non_null(l);
    assert_int_equal(l->size, 16);
    assert_int_equal(l->align, 4);
    assert_int_equal(l->fields[0].offset, 0);
    assert_int_equal(l->fields[1].offset, 4);
    assert_int_equal(l->fields[2].offset, 8);
    assert_int_equal(l->fields[2].layout->size, 6);
    assert_signature(l, "Mixed{a@0:u8,b@4:u32,c@8:[u16;3]}");
    mox_abi_layout_free(l);
}

static void particle_records(void **state)
{
    mox_abi_layout *motion = fx_motion();
    assert_int_equal(motion->size, 16);
    assert_int_equal(motion->align, 4);
    assert_signature(motion, "Motion{position@0:[f32;2],velocity@8:[f32;2]}");

    mox_abi_layout *particle = fx_particle();
    assert_int_equal(particle->size, 28);
    assert_int_equal(particle->align, 4);
    static const uint64_t offsets[] = {0, 2, 4, 8, 24};
    for (int i = 0; i < 5; i++)
        assert_int_equal(particle->fields[i].offset, offsets[i]);
    assert_signature(particle, "Particle{tag@0:u8,flags@2:u16,id@4:u32,motion@8:Motion{position@0:"
                               "[f32;2],velocity@8:[f32;2]},color@24:[u8;3]}");

    mox_abi_layout *config = fx_config();
    assert_int_equal(config->size, 12);
    assert_int_equal(config->align, 4);
    assert_signature(config, "Config{dt@0:f32,acceleration@4:[f32;2]}");

    /* [(u32,u8);2] is 16 bytes: the record pads to 8. */
    mox_abi_field *fields = calloc(2, sizeof *fields);
    fields[0] = field("x", mox_abi_layout_scalar(MOX_SCALAR_U32));
    fields[1] = field("y", mox_abi_layout_scalar(MOX_SCALAR_U8));
    mox_abi_layout *pairs = mox_abi_layout_array(mox_abi_layout_record("Pair", fields, 2), 2);
    assert_int_equal(pairs->size, 16);
    assert_signature(pairs, "[Pair{x@0:u32,y@4:u8};2]");

    /* (u8, [f16;2]) is 6 bytes. */
    fields = calloc(2, sizeof *fields);
    fields[0] = field("tag", mox_abi_layout_scalar(MOX_SCALAR_U8));
    fields[1] = field("half", mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_F16), 2));
    mox_abi_layout *halves = mox_abi_layout_record("Halves", fields, 2);
    assert_int_equal(halves->size, 6);
    assert_int_equal(halves->align, 2);

    mox_abi_layout_free(motion);
    mox_abi_layout_free(particle);
    mox_abi_layout_free(config);
    mox_abi_layout_free(pairs);
    mox_abi_layout_free(halves);
}

static void nested_array_signature(void **state)
{
    mox_abi_layout *l = mox_abi_layout_array(
        mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_I8), 3), 2);
    assert_int_equal(l->size, 6);
    assert_int_equal(l->align, 1);
    assert_signature(l, "[[i8;3];2]");
    mox_abi_layout_free(l);
}

static void constructor_rejects(void **state)
{
    /* Length 0 and size overflow free the element and give NULL. */
    assert_null(mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_U32), 0));
    assert_null(mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_U32), UINT64_MAX / 2));
    assert_null(mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_U32), 0x40000000));
    assert_null(mox_abi_layout_array(NULL, 3));
    mox_abi_layout *big = mox_abi_layout_array(mox_abi_layout_scalar(MOX_SCALAR_U8), 0xFFFFFFFF);
    assert_non_null(big);
    assert_int_equal(big->size, 0xFFFFFFFFu);
    /* A record past 4 GiB: the u8 makes the total overflow the limit. */
    mox_abi_field *fields = calloc(2, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_U8));
    fields[1] = field("b", big);
    assert_null(mox_abi_layout_record("Huge", fields, 2));

    /* Empty record, duplicate names, bad identifiers. */
    fields = calloc(1, sizeof *fields);
    assert_null(mox_abi_layout_record("Empty", fields, 0));
    fields = calloc(2, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_U8));
    fields[1] = field("a", mox_abi_layout_scalar(MOX_SCALAR_U8));
    assert_null(mox_abi_layout_record("Dup", fields, 2));
    fields = calloc(1, sizeof *fields);
    fields[0] = field("a", mox_abi_layout_scalar(MOX_SCALAR_U8));
    assert_null(mox_abi_layout_record("1bad", fields, 1));
    fields = calloc(1, sizeof *fields);
    fields[0] = field("int", mox_abi_layout_scalar(MOX_SCALAR_U8));
    assert_null(mox_abi_layout_record("Kw", fields, 1));
    fields = calloc(1, sizeof *fields);
    fields[0] = field("a-b", mox_abi_layout_scalar(MOX_SCALAR_U8));
    assert_null(mox_abi_layout_record("Dash", fields, 1));
}

static void clone_and_equal(void **state)
{
    mox_abi_layout *a = fx_particle();
    mox_abi_layout *b = mox_abi_layout_clone(a);
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
    assert_true(mox_abi_layout_equal(a, b));
    b->fields[3].layout->fields[1].offset = 12;
    assert_false(mox_abi_layout_equal(a, b));
    b->fields[3].layout->fields[1].offset = 8;
    assert_true(mox_abi_layout_equal(a, b));
    b->fields[4].layout->length = 4;
    assert_false(mox_abi_layout_equal(a, b));
    b->fields[4].layout->length = 3;
    b->fields[0].name[0] = 'T';
    assert_false(mox_abi_layout_equal(a, b));
    mox_abi_layout *c = fx_config();
    assert_false(mox_abi_layout_equal(a, c));
    assert_false(mox_abi_layout_equal(a, NULL));
    assert_true(mox_abi_layout_equal(NULL, NULL));
    mox_abi_layout_free(a);
    mox_abi_layout_free(b);
    mox_abi_layout_free(c);
    mox_abi_layout_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),   cmocka_unit_test(sha256_is_hex),
        cmocka_unit_test(scalars),          cmocka_unit_test(record_with_padding),
        cmocka_unit_test(particle_records), cmocka_unit_test(nested_array_signature),
        cmocka_unit_test(constructor_rejects), cmocka_unit_test(clone_and_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
