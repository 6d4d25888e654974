/* front_types.c - libclang type queries of moxc's front end: typedef and
 * attribute sugar, canonical names, the dialect's types (mox_f16, vectors,
 * atomics), and the device features and double precision a type involves. */
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

CXType moxc__strip_elaborated(CXType t) {
    for (int guard = 0; guard < 64; guard++) {
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Attributed)
            t = clang_Type_getModifiedType(t);
        else
            break;
    }
    return t;
}

char *moxc__canonical_name(CXType t) {
    char *s = moxc__cxstr(clang_getTypeSpelling(clang_getCanonicalType(t)));
    if (!s)
        return NULL;
    static const char *const drop[] = {"const ", "volatile ", "restrict ", "struct "};
    bool again = true;
    while (again) {
        again = false;
        for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++) {
            if (moxc__starts_with(s, drop[i])) {
                memmove(s, s + strlen(drop[i]), strlen(s) - strlen(drop[i]) + 1);
                again = true;
            }
        }
    }
    return s;
}

static bool record_named(CXType t, const char *name) {
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return false;
    char *n = moxc__canonical_name(c);
    bool eq = n && strcmp(n, name) == 0;
    free(n);
    return eq;
}

bool moxc__is_f16(CXType t) {
    return record_named(t, "mox_f16");
}

/* The dialect's vector types (mox/vector_types.h) by their struct tags. */
static const struct {
    const char *name;
    mox_scalar lane;
    unsigned lanes;
} vector_types[] = {
    {"mox_float2", MOX_SCALAR_F32, 2}, {"mox_float3", MOX_SCALAR_F32, 3}, {"mox_float4", MOX_SCALAR_F32, 4},
    {"mox_int2", MOX_SCALAR_I32, 2},   {"mox_int3", MOX_SCALAR_I32, 3},   {"mox_int4", MOX_SCALAR_I32, 4},
    {"mox_uint2", MOX_SCALAR_U32, 2},  {"mox_uint3", MOX_SCALAR_U32, 3},  {"mox_uint4", MOX_SCALAR_U32, 4},
    {"mox_half2", MOX_SCALAR_F16, 2},
};

bool moxc__vector_of(CXType t, mox_scalar *lane, unsigned *lanes) {
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Record)
        return false;
    char *n = moxc__canonical_name(c);
    for (size_t i = 0; n && i < sizeof vector_types / sizeof vector_types[0]; i++) {
        if (strcmp(n, vector_types[i].name) == 0) {
            if (lane)
                *lane = vector_types[i].lane;
            if (lanes)
                *lanes = vector_types[i].lanes;
            free(n);
            return true;
        }
    }
    free(n);
    return false;
}

bool moxc__is_atomic(CXType t, mox_scalar *element) {
    if (record_named(t, "mox_atomic_u32")) {
        if (element)
            *element = MOX_SCALAR_U32;
        return true;
    }
    if (record_named(t, "mox_atomic_i32")) {
        if (element)
            *element = MOX_SCALAR_I32;
        return true;
    }
    return false;
}

static CXType strip_pointers_arrays(CXType t) {
    t = clang_getCanonicalType(t);
    for (int guard = 0; guard < 64; guard++) {
        if (t.kind == CXType_Pointer)
            t = clang_getCanonicalType(clang_getPointeeType(t));
        else if (t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray ||
                 t.kind == CXType_VariableArray || t.kind == CXType_DependentSizedArray)
            t = clang_getCanonicalType(clang_getArrayElementType(t));
        else
            break;
    }
    return t;
}

bool moxc__involves_double(CXType t) {
    CXType c = strip_pointers_arrays(t);
    if (c.kind == CXType_Complex)
        c = clang_getCanonicalType(clang_getElementType(c));
    return c.kind == CXType_Double || c.kind == CXType_LongDouble || c.kind == CXType_Float128;
}

typedef struct field_features {
    uint32_t features;
    int depth;
} field_features;

static uint32_t type_features_depth(CXType t, bool fields, int depth);

static enum CXVisitorResult feature_field(CXCursor field, CXClientData data) {
    field_features *ff = data;
    ff->features |= type_features_depth(clang_getCursorType(field), true, ff->depth + 1);
    return CXVisit_Continue;
}

static uint32_t type_features_depth(CXType t, bool fields, int depth) {
    CXType c = strip_pointers_arrays(t);
    if (c.kind != CXType_Record || depth > 16)
        return 0;
    mox_scalar lane;
    if (moxc__is_f16(c) || (moxc__vector_of(c, &lane, NULL) && lane == MOX_SCALAR_F16))
        return MOX_KFEAT_F16;
    if (moxc__is_atomic(c, NULL))
        return MOX_KFEAT_ATOMICS;
    if (!fields)
        return 0;
    field_features ff = {0, depth};
    clang_Type_visitFields(c, feature_field, &ff);
    return ff.features;
}

uint32_t moxc__type_features(CXType t, bool fields) {
    return type_features_depth(t, fields, 0);
}

bool moxc__is_const_object(CXType t) {
    CXType c = clang_getCanonicalType(t);
    /* a const array's qualifier may sit on the array or on its elements */
    for (int guard = 0; guard < 64; guard++) {
        if (clang_isConstQualifiedType(c))
            return true;
        if (c.kind != CXType_ConstantArray && c.kind != CXType_IncompleteArray &&
            c.kind != CXType_VariableArray)
            break;
        c = clang_getCanonicalType(clang_getArrayElementType(c));
    }
    return false;
}
