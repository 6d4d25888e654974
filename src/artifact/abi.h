/* abi.h - the in-memory kernel ABI model, shared by moxc (which builds it
 * from clang's view of the sources) and the runtime (which reads it from a
 * manifest and checks launches against it). docs/abi.md is the reference. */
#ifndef MOX_ARTIFACT_ABI_H
#define MOX_ARTIFACT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mox/kernel_abi.h> /* MOX_KFEAT_* */

#define MOX_ABI_VERSION 1
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
    MOX_LAYOUT_SCALAR, MOX_LAYOUT_ARRAY, MOX_LAYOUT_RECORD
} mox_layout_kind;

typedef struct mox_abi_layout mox_abi_layout;

typedef struct mox_abi_field {
    char *name;
    uint64_t offset;
    mox_abi_layout *layout;
} mox_abi_field;

struct mox_abi_layout {
    uint64_t size;
    uint64_t align;
    mox_layout_kind kind;
    mox_scalar scalar;        /* SCALAR */
    mox_abi_layout *element;  /* ARRAY */
    uint64_t length;          /* ARRAY, >= 1 */
    char *record_name;        /* RECORD */
    mox_abi_field *fields;    /* RECORD, >= 1 */
    size_t field_count;
};

typedef enum mox_param_kind { MOX_PARAM_BUFFER, MOX_PARAM_VALUE } mox_param_kind;
typedef enum mox_param_access {
    MOX_PARAM_READ, MOX_PARAM_WRITE, MOX_PARAM_ATOMIC
} mox_param_access;

typedef struct mox_abi_param {
    char *name;
    uint32_t binding;          /* == index */
    mox_param_kind kind;
    mox_param_access access;   /* BUFFER only */
    mox_abi_layout *layout;    /* BUFFER: element layout (stride == size); VALUE: value layout */
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
    uint32_t version;            /* MOX_ABI_VERSION */
    uint32_t required_features;  /* MOX_FEAT_* */
    mox_abi_kernel *kernels;
    size_t kernel_count;
} mox_abi;

/* ---- construction helpers (all allocate; NULL on out of memory) ---- */
mox_abi_layout *mox_abi_layout_scalar(mox_scalar s);
/* Computes size/align; NULL on overflow, length 0 or OOM (takes element). */
mox_abi_layout *mox_abi_layout_array(mox_abi_layout *element, uint64_t length);
/* Record with canonical C offsets computed from the fields' layouts
 * (fields array and names are taken over). NULL on error. */
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

/* True for C11 and C++ keywords and the alternative operator spellings:
 * names that cannot appear in both the C bindings and the CUDA TU. */
bool mox_abi_is_reserved_name(const char *name);

const char *mox_scalar_name(mox_scalar s);          /* "f32" ... */
bool mox_scalar_from_name(const char *name, mox_scalar *out);
uint32_t mox_scalar_size(mox_scalar s);

/* The canonical signature text of a layout (docs/abi.md), as used in
 * mox_type.signature: "f32", "[u16;3]", "Name{a@0:u8,b@4:[f32;2]}".
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
