/* mox/module.h - the low-level launch interface shared by generated bindings
 * and the runtime: module descriptors, arguments, launches.
 *
 * Users normally call the typed functions moxc generates; those build a
 * mox_arg array and call mox_launch_generated. The ABI embedded in the
 * descriptor is checked against the arguments when the launch is created;
 * the artifact on disk is loaded (and its manifest ABI hash compared with
 * abi_sha256) on first use, on the device's preparation worker.
 */
#ifndef MOX_MODULE_H
#define MOX_MODULE_H

#include <mox/op.h>
#include <mox/launch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bound on kernel parameters (checked by moxc and at launch). */
#define MOX_MAX_PARAMS 31

typedef enum mox_access {
    MOX_ACCESS_READ = 0,  /* const T *        */
    MOX_ACCESS_WRITE = 1, /* T * (may also read; orders as a writer) */
    MOX_ACCESS_ATOMIC = 2 /* mox_atomic_u32 * / mox_atomic_i32 * */
} mox_access;

typedef enum mox_arg_kind { MOX_ARG_BUFFER = 0, MOX_ARG_VALUE = 1 } mox_arg_kind;

typedef struct mox_arg {
    mox_arg_kind kind;
    mox_access access;        /* buffers */
    mox_buffer *buffer;       /* buffers: retained by the launch op */
    const void *value;        /* values: copied when the launch is created */
    const mox_type *type;     /* values: the value's type; buffers: ignored (the buffer's type is used) */
} mox_arg;

#ifdef __cplusplus /* a braced temporary: C++ has no compound literals */
#define MOX__ARG(...) (mox_arg{__VA_ARGS__})
#else
#define MOX__ARG(...) ((mox_arg){__VA_ARGS__})
#endif
#define MOX_ARG_READ(b) MOX__ARG(MOX_ARG_BUFFER, MOX_ACCESS_READ, (mox_buffer *)(b), NULL, NULL)
#define MOX_ARG_WRITE(b) MOX__ARG(MOX_ARG_BUFFER, MOX_ACCESS_WRITE, (b), NULL, NULL)
#define MOX_ARG_ATOMIC(b) MOX__ARG(MOX_ARG_BUFFER, MOX_ACCESS_ATOMIC, (b), NULL, NULL)
#define MOX_ARG_VALUE(p, t) MOX__ARG(MOX_ARG_VALUE, MOX_ACCESS_READ, NULL, (p), (t))

/* Static description of one generated module, emitted by moxc into the
 * bindings source. Never freed; its address identifies the module. */
typedef struct mox_module_desc {
    const char *name;               /* module name, e.g. "stages" */
    const char *abi_json;           /* canonical ABI JSON (docs/abi.md) */
    const char *abi_sha256;         /* lowercase hex SHA-256 of abi_json */
    const char *artifact_dir;       /* artifact directory recorded at build time */
    const char *artifact_env;       /* environment variable that overrides it, e.g. "MOX_ARTIFACT_STAGES" */
    uint32_t kernel_count;
    const char *const *kernel_names; /* in ABI order */
} mox_module_desc;

/* Creates a lazy launch of kernel `kernel_index` of `module` (A1). Never
 * returns NULL: a construction error (ABI mismatch, bad geometry, device
 * mismatch, out of memory) gives an op that resolves to that error and that
 * mox_batch_push rejects. Checks, in this order: device mismatch, argument
 * count limit, ABI argument count and types, required block, geometry. */
MOX_API mox_op *mox_launch_generated(mox_device *device, const mox_module_desc *module,
                                     uint32_t kernel_index, mox_launch_config config,
                                     const mox_arg *args, uint32_t arg_count);

/* Overrides where the artifact of `module` is read from (before its first
 * use on any device). NULL restores the default. Codes: MOX_ERR_INVALID_ARGUMENT,
 * MOX_ERR_STATE (already loaded). */
MOX_API mox_status mox_module_set_artifact_dir(const mox_module_desc *module, const char *dir);

/* Loads the module now, synchronously, on `device` (optional: launches load
 * it on first use). Codes: MOX_ERR_ARTIFACT, MOX_ERR_IO, MOX_ERR_ABI_MISMATCH
 * ("generated bindings do not match the artifact ABI"), MOX_ERR_MODULE_LOAD,
 * MOX_ERR_KERNEL_NOT_FOUND (the CUDA code lacks a kernel's entry point),
 * MOX_ERR_UNSUPPORTED_DEVICE (docs/errors.md). */
MOX_API mox_status mox_module_prepare(mox_device *device, const mox_module_desc *module);

#ifdef __cplusplus
}
#endif
#endif
