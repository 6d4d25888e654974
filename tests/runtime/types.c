/* types.c - the built-in element types: their signatures are exactly the
 * artifact layer's canonical layout signatures of the scalars, so a buffer
 * type matches an ABI element by string comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/types.h>

#include "artifact/abi.h"

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
    assert_true(mox_type_equal(&nosig, &nosig)); /* the same descriptor */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_signatures_match_the_abi),
        cmocka_unit_test(equality_is_by_signature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
