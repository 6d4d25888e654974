/* types.c - the built-in element types: their signatures are exactly the
 * artifact layer's canonical layout signatures of the scalars, so a buffer
 * type matches an ABI element by string comparison. And a descriptor is a
 * type only when its size and alignment are the ones its signature lays
 * out (src/core/type_check.c, docs/abi.md): what mox_type_equal and every
 * place a user's type enters rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/types.h>

#include "artifact/abi.h"
#include "core/type_check.h"

static void scalar_signatures_match_the_abi(void **state)
{
    (void)state;
    const mox_type *types[MOX_SCALAR_COUNT_] = {
        [MOX_SCALAR_F32] = &mox_type_f32, [MOX_SCALAR_F16] = &mox_type_f16,
        [MOX_SCALAR_U32] = &mox_type_u32, [MOX_SCALAR_I32] = &mox_type_i32,
        [MOX_SCALAR_U16] = &mox_type_u16, [MOX_SCALAR_I16] = &mox_type_i16,
        [MOX_SCALAR_U8] = &mox_type_u8,   [MOX_SCALAR_I8] = &mox_type_i8,
    };
    for (int s = 0; s < MOX_SCALAR_COUNT_; s++) {
        mox_abi_layout *l = mox_abi_layout_scalar((mox_scalar)s);
        assert_non_null(l);
        char *sig = mox_abi_layout_signature(l);
        assert_non_null(sig);
        assert_string_equal(types[s]->signature, sig);
        assert_string_equal(types[s]->name, mox_scalar_name((mox_scalar)s));
        assert_int_equal(types[s]->size, l->size);
        assert_int_equal(types[s]->align, l->align);
        assert_int_equal(types[s]->size, mox_scalar_size((mox_scalar)s));
        free(sig);
        mox_abi_layout_free(l);
    }
}

static void equality_is_by_signature(void **state)
{
    (void)state;
    mox_type a = {"A", "[u16;3]", 6, 2}, b = {"B", "[u16;3]", 6, 2}, c = {"C", "[u16;4]", 8, 2};
    assert_true(mox_type_equal(&a, &b));
    assert_false(mox_type_equal(&a, &c));
    mox_type nosig = {"n", NULL, 4, 4};
    assert_false(mox_type_equal(&nosig, &mox_type_f32));
    assert_false(mox_type_equal(&nosig, &nosig)); /* no type: equal to nothing, itself included */
}

/* A size or alignment its signature does not give, or a signature that does
 * not parse: such a descriptor is no type and equals nothing, though the
 * signatures are equal. */
static void inconsistent_descriptors_equal_nothing(void **state)
{
    (void)state;
    mox_type f32_1 = {"f32", "f32", 1, 1}, f32_a2 = {"f32", "f32", 4, 2};
    assert_false(mox_type_equal(&f32_1, &mox_type_f32));
    assert_false(mox_type_equal(&mox_type_f32, &f32_a2));
    assert_false(mox_type_equal(&f32_1, &f32_1));
    mox_type pair = {"Pair", "Pair{x@0:u32,y@4:u8}", 8, 4}, pair_again = pair;
    mox_type pair2 = {"Pair", "Pair{x@0:u32,y@4:u8}", 2, 4};
    assert_true(mox_type_equal(&pair, &pair_again));
    assert_false(mox_type_equal(&pair, &pair2));
    assert_false(mox_type_equal(&pair2, &pair2));
    mox_type junk = {"junk", "not a signature", 4, 4}, junk2 = junk;
    assert_false(mox_type_equal(&junk, &junk2));
    assert_false(mox_type_equal(&junk, &junk));
}

/* Every layout of docs/abi.md's tables: the signature the artifact layer
 * writes, with the size and alignment it computes, is a type. */
static void abi_layouts_are_types(void **state)
{
    (void)state;
    const mox_type ok[] = {
        {"a", "f16", 2, 2},
        {"a", "[u16;3]", 6, 2},
        {"a", "[[i8;3];2]", 6, 1},
        {"a", "f32x3", 12, 4},
        {"a", "f16x2", 4, 4},
        {"a", "[f32x4;2]", 32, 16},
        {"a", "Motion{position@0:[f32;2],velocity@8:[f32;2]}", 16, 4},
        {"a", "Particle{tag@0:u8,flags@2:u16,id@4:u32,motion@8:Motion{position@0:[f32;2],velocity@8:[f32;2]},"
              "color@24:[u8;3]}", 28, 4},
        {"a", "Body{pos@0:f32x4,vel@16:f32x3,mass@28:f32}", 32, 16},
        {"a", "Gap{a@0:f32,b@16/16:f32,c@20:f32}", 32, 16},
        {"a", "V{v@0/16:[f32;3],t@12:u8}", 16, 16},
        {"a", "[u8;4294967295]", 0xFFFFFFFFu, 1},
    };
    char why[400];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!mox__type_check(&ok[i], why, sizeof why))
            fail_msg("%s refused: %s", ok[i].signature, why);
}

/* What is wrong is said: the size (or alignment) against the signature's,
 * or where the signature stops parsing and why. */
static void refusals_say_why(void **state)
{
    (void)state;
    static const struct {
        mox_type t;
        const char *why;
    } bad[] = {
        {{"f32", "f32", 1, 1}, "its size is 1 bytes, but its signature f32 has size 4 (docs/abi.md)"},
        {{"Pair", "Pair{x@0:u32,y@4:u8}", 2, 4}, "its size is 2 bytes, but its signature Pair{x@0:u32,y@4:u8} has size 8"},
        {{"Pair", "Pair{x@0:u32,y@4:u8}", 8, 1}, "its alignment is 1, but its signature Pair{x@0:u32,y@4:u8} has alignment 4"},
        {{"x", "not a signature", 4, 4}, "'not a signature' is not a type signature (an unknown scalar type at character 1"},
        {{"x", "", 4, 4}, "(expected a type at character 1"},
        {{"x", "f32 ", 4, 4}, "(text after the type at character 4"},
        {{"x", "u16x2", 4, 4}, "a vector type that does not exist"},
        {{"x", "f16x4", 8, 8}, "a vector type that does not exist"},
        {{"x", "[f32;0]", 4, 4}, "an array of 0 elements"},
        {{"x", "[f32;03]", 12, 4}, "a number with a leading zero"},
        {{"x", "[f32;3", 12, 4}, "expected ']' after an array's length at character 7"},
        {{"x", "[u8;4294967296]", 1, 1}, "a number past the 4 GiB limit"},
        {{"x", "[[u8;65536];65536]", 1, 1}, "an array past the 4 GiB limit"},
        {{"P", "P{x@0:u32,y@2:u8}", 8, 4}, "a field at offset 2 where the layout rules place it at 4 at character 11"},
        {{"P", "P{x@0:u32,y@4/1:u8}", 8, 4}, "a field alignment that is not a power of two above its type's"},
        {{"P", "P{x@0:u32,y@8/3:u8}", 12, 4}, "a field alignment that is not a power of two above its type's"},
        {{"P", "P{x@0:u32;}", 4, 4}, "expected ',' or '}' after a field"},
        {{"P", "P{}", 1, 1}, "expected a field name"},
        {{"P", "P{x:u32}", 4, 4}, "expected '@' after a field name"},
        {{"P", "int{x@0:u32}", 4, 4}, "a record named by a reserved word"},
        {{"n", NULL, 4, 4}, "it has no signature"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[400] = "";
        if (mox__type_check(&bad[i].t, why, sizeof why))
            fail_msg("'%s' (size %u) accepted", bad[i].t.signature, bad[i].t.size);
        if (!strstr(why, bad[i].why))
            fail_msg("'%s': %s\n  does not say: %s", bad[i].t.signature, why, bad[i].why);
    }
    /* 33 levels of arrays: the ABI's nesting limit. */
    char deep[200] = "";
    for (int i = 0; i < 33; i++)
        strcat(deep, "[");
    strcat(deep, "u8");
    for (int i = 0; i < 33; i++)
        strcat(deep, ";1]");
    mox_type t = {"d", deep, 1, 1};
    char why[400];
    assert_false(mox__type_check(&t, why, sizeof why));
    assert_non_null(strstr(why, "nested more than 32 levels deep"));
    deep[0] = ' '; /* 32 levels are allowed */
    t.signature = deep + 1;
    deep[strlen(deep) - 3] = '\0';
    assert_true(mox__type_check(&t, why, sizeof why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_signatures_match_the_abi),
        cmocka_unit_test(equality_is_by_signature),
        cmocka_unit_test(inconsistent_descriptors_equal_nothing),
        cmocka_unit_test(abi_layouts_are_types),
        cmocka_unit_test(refusals_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
