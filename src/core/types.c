/* types.c - the built-in scalar and vector element types. Their signatures equal
 * mox_abi_layout_signature() of the scalar layouts, so a buffer of
 * mox_type_f32 matches an ABI element "f32" by plain string comparison. */
#include <string.h>

#include <mox/types.h>

#include "type_check.h"

const mox_type mox_type_f32 = {"f32", "f32", 4, 4};
const mox_type mox_type_f16 = {"f16", "f16", 2, 2};
const mox_type mox_type_u32 = {"u32", "u32", 4, 4};
const mox_type mox_type_i32 = {"i32", "i32", 4, 4};
const mox_type mox_type_u16 = {"u16", "u16", 2, 2};
const mox_type mox_type_i16 = {"i16", "i16", 2, 2};
const mox_type mox_type_u8 = {"u8", "u8", 1, 1};
const mox_type mox_type_i8 = {"i8", "i8", 1, 1};
const mox_type mox_type_f32x2 = {"f32x2", "f32x2", 8, 8};
const mox_type mox_type_f32x3 = {"f32x3", "f32x3", 12, 4};
const mox_type mox_type_f32x4 = {"f32x4", "f32x4", 16, 16};
const mox_type mox_type_i32x2 = {"i32x2", "i32x2", 8, 8};
const mox_type mox_type_i32x3 = {"i32x3", "i32x3", 12, 4};
const mox_type mox_type_i32x4 = {"i32x4", "i32x4", 16, 16};
const mox_type mox_type_u32x2 = {"u32x2", "u32x2", 8, 8};
const mox_type mox_type_u32x3 = {"u32x3", "u32x3", 12, 4};
const mox_type mox_type_u32x4 = {"u32x4", "u32x4", 16, 16};
const mox_type mox_type_f16x2 = {"f16x2", "f16x2", 4, 4};

/* A descriptor that is no type (its size or alignment is not what its
 * signature lays out, or its signature does not parse: type_check.h)
 * equals nothing, itself included: equal signatures would otherwise pass
 * a {"f32", size 1} as f32. */
int mox_type_equal(const mox_type *a, const mox_type *b)
{
    char why[8]; /* unused: only whether */
    if (!a || !b)
        return 0;
    if (a == b)
        return mox__type_check(a, why, sizeof why);
    if (!a->signature || !b->signature || a->size != b->size || a->align != b->align ||
        strcmp(a->signature, b->signature) != 0)
        return 0;
    return mox__type_check(a, why, sizeof why); /* b has the same signature, size and alignment */
}
