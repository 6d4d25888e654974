/* parse_scalar.c - the scalar element types of kernel parameters and
 * record members: the ABI's f32, f16 (mox_f16), 8/16/32-bit integers, and
 * for every other C type the reason it is not one (plain char, bool, enums,
 * 64-bit integers, double, pointers to pointers ...). */
#include <stdlib.h>

#include "front_internal.h"

bool moxc__scalar_of(CXType type, mox_scalar *out, char **why) {
    CXType t = clang_getCanonicalType(type);
    const char *reason = NULL;
    switch (t.kind) {
    case CXType_Float: *out = MOX_SCALAR_F32; return true;
    case CXType_UInt: *out = MOX_SCALAR_U32; return true;
    case CXType_Int: *out = MOX_SCALAR_I32; return true;
    case CXType_UShort: *out = MOX_SCALAR_U16; return true;
    case CXType_Short: *out = MOX_SCALAR_I16; return true;
    case CXType_UChar: *out = MOX_SCALAR_U8; return true;
    case CXType_SChar: *out = MOX_SCALAR_I8; return true;
    case CXType_Record:
        if (moxc__is_f16(t)) {
            *out = MOX_SCALAR_F16;
            return true;
        }
        reason = "not a scalar";
        break;
    case CXType_Char_S:
    case CXType_Char_U:
        reason = "plain 'char' has implementation-defined signedness; use uint8_t or int8_t";
        break;
    case CXType_Bool:
        reason = "bool has no fixed size across compilers; use uint8_t or uint32_t";
        break;
    case CXType_Double:
    case CXType_LongDouble:
    case CXType_Float128:
        reason = "double precision is not supported in kernels";
        break;
    case CXType_Half:
    case CXType_Float16:
        reason = "use mox_f16 for half precision";
        break;
    case CXType_Long:
    case CXType_ULong:
    case CXType_LongLong:
    case CXType_ULongLong:
    case CXType_Int128:
    case CXType_UInt128:
        reason = "64-bit integers (long, size_t, int64_t, uint64_t) are not supported";
        break;
    case CXType_Pointer:
        reason = "pointers to pointers are not supported";
        break;
    case CXType_Void:
        reason = "'void' has no element type; use a typed pointer";
        break;
    case CXType_FunctionProto:
    case CXType_FunctionNoProto:
        reason = "function pointers are not supported";
        break;
    case CXType_Enum:
        reason = "enums have no fixed size across compilers; use uint32_t or int32_t";
        break;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
        reason = "pointers to arrays are not supported; use a pointer to the element type";
        break;
    default:
        break;
    }
    if (why)
        *why = reason ? moxc__strdup(reason) : NULL;
    return false;
}
