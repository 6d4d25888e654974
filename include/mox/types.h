/* mox/types.h - value types shared by the host API and generated bindings:
 * 3-component sizes, the vector types (mox/vector_types.h) and element type
 * descriptors. */
#ifndef MOX_TYPES_H
#define MOX_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <mox/export.h>
#include <mox/vector_types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mox_dim3 {
    uint32_t x, y, z;
} mox_dim3;

/* An element type: what a buffer holds or what a value argument is.
 * Two types are the same ABI type exactly when their signatures are equal
 * (strcmp). The signature is the canonical layout text defined in docs/abi.md,
 * e.g. "f32", "[u16;3]", "Motion{position@0:[f32;2],velocity@8:[f32;2]}";
 * size and align must be the ones it lays out (docs/abi.md section 3):
 * a descriptor that disagrees, or whose signature does not parse, is
 * refused (MOX_ERR_INVALID_ARGUMENT) by mox_buffer_create and as a value
 * argument.
 * Generated bindings define one mox_type per record; the built-in scalars
 * are below. Descriptors are static data and never freed. */
typedef struct mox_type {
    const char *name;      /* "f32", "Particle" */
    const char *signature; /* canonical layout signature */
    uint32_t size;         /* bytes, as laid out on the device */
    uint32_t align;        /* bytes */
} mox_type;

MOX_API extern const mox_type mox_type_f32;
MOX_API extern const mox_type mox_type_f16;
MOX_API extern const mox_type mox_type_u32;
MOX_API extern const mox_type mox_type_i32;
MOX_API extern const mox_type mox_type_u16;
MOX_API extern const mox_type mox_type_i16;
MOX_API extern const mox_type mox_type_u8;
MOX_API extern const mox_type mox_type_i8;
/* Vector elements (mox/vector_types.h): signature and name "f32x4" etc. */
MOX_API extern const mox_type mox_type_f32x2;
MOX_API extern const mox_type mox_type_f32x3;
MOX_API extern const mox_type mox_type_f32x4;
MOX_API extern const mox_type mox_type_i32x2;
MOX_API extern const mox_type mox_type_i32x3;
MOX_API extern const mox_type mox_type_i32x4;
MOX_API extern const mox_type mox_type_u32x2;
MOX_API extern const mox_type mox_type_u32x3;
MOX_API extern const mox_type mox_type_u32x4;
MOX_API extern const mox_type mox_type_f16x2;

/* 1 when a and b are the same ABI type (signatures equal), else 0; 0 also
 * when either is NULL or no type (its size or alignment is not what its
 * signature lays out, or the signature does not parse), even for a == b. */
MOX_API int mox_type_equal(const mox_type *a, const mox_type *b);

#ifdef __cplusplus
}
#endif
#endif
