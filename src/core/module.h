/* module.h - process-wide knowledge about a generated module descriptor:
 * its ABI, parsed once per process, precomputed per-parameter checks for
 * launch validation, and the artifact directory override. */
#ifndef MOX_CORE_MODULE_H
#define MOX_CORE_MODULE_H

#include <stdbool.h>

#include <mox/module.h>

#include "artifact/abi.h"
#include "device.h"

typedef struct mox__param_check {
    const char *name;
    mox_arg_kind kind;
    mox_access access;
    char *signature;           /* element (buffer) or value layout signature */
    const mox_type *builtin;   /* the built-in type with that signature, or NULL:
                                  launches compare the pointer before strcmp */
    uint32_t size;             /* value bytes (values) / element bytes */
    uint32_t align;            /* their alignment */
} mox__param_check;

typedef struct mox__kernel_check {
    const char *name;
    uint32_t param_count;
    mox__param_check *params;
    bool has_required_block;
    mox_dim3 required_block;
    uint32_t features;         /* MOX_KFEAT_* */
    bool all_builtin;          /* every parameter's type is a built-in one */
    uint32_t value_bytes;      /* the value parameters' copies, each rounded up to 16 */
} mox__kernel_check;

struct mox__modinfo {
    const mox_module_desc *desc;
    mox_error *error;          /* the descriptor itself is unusable */
    mox_abi *abi;
    mox__kernel_check *kernels;
    uint32_t kernel_count;
    /* guarded by the registry lock */
    char *override_dir;
    bool used;                 /* preparation started on some device */
    mox__modinfo *next_overflow;
};

/* Whether `buffer` may be bound to buffer parameter `param` of another
 * element type (buffer_view.c); on false, `why` gets the reason. */
bool mox__view_allowed(const mox_buffer *buffer, const mox__param_check *param, char *why, size_t size);

/* The descriptor's info (created on first use; lives for the process).
 * NULL when this attempt failed for a reason that may pass (out of memory;
 * *error, a reference, says what): nothing is kept and the next call
 * tries again. */
const mox__modinfo *mox__modinfo_get(const mox_module_desc *desc, mox_error **error);

/* Resolves the artifact directory (mox__artifact_locate, docs/moxc.md)
 * with the mox_module_set_artifact_dir override. Marks the module used.
 * malloc'd; NULL on out of memory. */
char *mox__modinfo_artifact_dir(const mox__modinfo *info, bool *chosen);

/* Loads the module for `device` (runs on the preparation worker). */
mox_status mox__module_load(mox_device *device, const mox__modinfo *info, void **handle,
                            mox_error **error);

#endif
