/* abi.h - the in-memory kernel ABI model, shared by moxc (which builds it
 * from clang's view of the sources) and the runtime (which reads it from a
 * manifest and checks launches against it). docs/abi.md is the reference. */
#ifndef MOX_ARTIFACT_ABI_H
#define MOX_ARTIFACT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mox/kernel_abi.h> /* MOX_KFEAT_* */

/* The newest ABI version this code reads and writes; it reads every
 * version from MOX_ABI_VERSION_MIN on. An ABI is written with the lowest
 * version that can express it (mox_abi_required_version): version 2 added
 * vector layouts and over-aligned record fields. */
#define MOX_ABI_VERSION 2
#define MOX_ABI_VERSION_MIN 1
#define MOX_ABI_MAX_PARAMS 31
/* Largest layout size: mox_type.size is a uint32_t. */
#define MOX_ABI_MAX_LAYOUT_SIZE UINT64_C(0xFFFFFFFF)
/* The one nesting limit (docs/abi.md): a layout holds at most 32 levels of
 * arrays and records (a struct with a float member is 1 level, an array of
 * such structs 2). Every reader, writer and moxc refuse deeper layouts
 * through mox_abi_layout_check_depth's rule and message. */
#define MOX_ABI_MAX_LAYOUT_DEPTH 32

/* Error of the artifact layer: one message, filled on failure, and whether
 * the failure was a host allocation (transient: a retry may succeed). */
typedef struct mox_artifact_error {
    char message[512];
    bool out_of_memory;
} mox_artifact_error;

typedef enum mox_scalar {
    MOX_SCALAR_F32, MOX_SCALAR_F16, MOX_SCALAR_U32, MOX_SCALAR_I32,
    MOX_SCALAR_U16, MOX_SCALAR_I16, MOX_SCALAR_U8, MOX_SCALAR_I8,
    MOX_SCALAR_COUNT_
} mox_scalar;

typedef enum mox_layout_kind {
    MOX_LAYOUT_SCALAR, MOX_LAYOUT_ARRAY, MOX_LAYOUT_RECORD,
    MOX_LAYOUT_VECTOR /* ABI version 2 */
} mox_layout_kind;

typedef struct mox_abi_layout mox_abi_layout;

typedef struct mox_abi_field {
    char *name;
    uint64_t offset;
    mox_abi_layout *layout;
    /* 0, or the member's own alignment when `_Alignas` raised it above its
     * layout's (a power of two > layout->align; ABI version 2). */
    uint64_t align;
} mox_abi_field;

struct mox_abi_layout {
    uint64_t size;
    uint64_t align;
    mox_layout_kind kind;
    mox_scalar scalar;        /* SCALAR; VECTOR: the lane type */
    mox_abi_layout *element;  /* ARRAY */
    uint64_t length;          /* ARRAY, >= 1; VECTOR: the lanes, 2 to 4 */
    char *record_name;        /* RECORD */
    mox_abi_field *fields;    /* RECORD, >= 1 */
    size_t field_count;
};

/* TABLE (ABI version 2): a small read-only array the host passes by value
 * at launch (MOX_TABLE); its layout is an array layout. */
typedef enum mox_param_kind { MOX_PARAM_BUFFER, MOX_PARAM_VALUE, MOX_PARAM_TABLE } mox_param_kind;
typedef enum mox_param_access {
    MOX_PARAM_READ, MOX_PARAM_WRITE, MOX_PARAM_ATOMIC
} mox_param_access;

typedef struct mox_abi_param {
    char *name;
    uint32_t binding;          /* == index */
    mox_param_kind kind;
    mox_param_access access;   /* BUFFER only */
    mox_abi_layout *layout;    /* BUFFER: element layout (stride == size); VALUE: value layout;
                                  TABLE: an array layout */
} mox_abi_param;

/* Module-level required device features (the union of kernel needs that a
 * device may lack): "atomics", "warp_ops". */
enum { MOX_FEAT_ATOMICS = 1u << 0, MOX_FEAT_WARP_OPS = 1u << 1 };

typedef struct mox_abi_kernel {
    char *name;
    mox_abi_param *params;
    size_t param_count;
    bool has_required_block;
    uint32_t required_block[3];
    uint32_t features; /* MOX_KFEAT_* */
} mox_abi_kernel;

typedef struct mox_abi {
    uint32_t version;            /* MOX_ABI_VERSION_MIN .. MOX_ABI_VERSION */
    uint32_t required_features;  /* MOX_FEAT_* */
    mox_abi_kernel *kernels;
    size_t kernel_count;
} mox_abi;

/* ---- construction helpers (all allocate; NULL on out of memory) ---- */
mox_abi_layout *mox_abi_layout_scalar(mox_scalar s);
/* The dialect's vector types (mox/vector_types.h): f32, i32 and u32 with 2,
 * 3 or 4 lanes, f16 with 2. Size = lanes x lane size; alignment = the size,
 * except 3 lanes, aligned as one lane. NULL for any other pair or OOM. */
mox_abi_layout *mox_abi_layout_vector(mox_scalar lane, uint64_t lanes);
bool mox_abi_vector_supported(mox_scalar lane, uint64_t lanes);
/* Computes size/align; NULL on overflow, length 0 or OOM (takes element). */
mox_abi_layout *mox_abi_layout_array(mox_abi_layout *element, uint64_t length);
/* Record with canonical C offsets computed from the fields' layouts and
 * their `align` (fields array and names are taken over). NULL on error,
 * including an `align` that is not 0 or a power of two. */
mox_abi_layout *mox_abi_layout_record(const char *name, mox_abi_field *fields, size_t count);
mox_abi_layout *mox_abi_layout_clone(const mox_abi_layout *layout);
void mox_abi_layout_free(mox_abi_layout *layout);
bool mox_abi_layout_equal(const mox_abi_layout *a, const mox_abi_layout *b);
void mox_abi_free(mox_abi *abi); /* frees contents and abi itself */

/* Checks the nesting limit (MOX_ABI_MAX_LAYOUT_DEPTH); `what` names the
 * layout in the message ("<what> nests arrays and records more than 32
 * levels deep (record R at level 33)"). */
bool mox_abi_layout_check_depth(const mox_abi_layout *layout, const char *what,
                                mox_artifact_error *err);

/* The lowest ABI version that can express `abi`: 1, or 2 when a layout is
 * a vector, a record field is over-aligned, a parameter is a table or a
 * kernel has the "dynamic_shared" feature. */
uint32_t mox_abi_required_version(const mox_abi *abi);

/* True for C11 and C++ keywords and the alternative operator spellings:
 * names that cannot appear in both the C bindings and the CUDA TU. */
bool mox_abi_is_reserved_name(const char *name);

const char *mox_scalar_name(mox_scalar s);          /* "f32" ... */
bool mox_scalar_from_name(const char *name, mox_scalar *out);
uint32_t mox_scalar_size(mox_scalar s);

/* The canonical signature text of a layout (docs/abi.md), as used in
 * mox_type.signature: "f32", "f32x4", "[u16;3]", "Name{a@0:u8,b@4:[f32;2]}",
 * "Name{a@0/16:f32,b@4:f32}" (a field over-aligned to 16).
 * Returns a malloc'd string or NULL on OOM. */
char *mox_abi_layout_signature(const mox_abi_layout *layout);

/* Checks every rule of docs/abi.md (version, >= 1 kernel, unique identifier
 * names, <= 31 params, sequential bindings, canonical layouts, atomic
 * elements u32/i32, required block non-zero and product fits u32, known
 * features). */
bool mox_abi_validate(const mox_abi *abi, mox_artifact_error *err);

/* Canonical compact JSON of the ABI (fixed key order) - the text whose
 * SHA-256 bindings embed. malloc'd, NULL on OOM. */
char *mox_abi_to_json(const mox_abi *abi);
/* Parses ABI JSON text strictly (unknown fields, wrong types, bad versions
 * and truncation are errors) and validates it. *out is malloc'd. */
bool mox_abi_from_json(const char *text, size_t length, mox_abi **out, mox_artifact_error *err);

#endif
