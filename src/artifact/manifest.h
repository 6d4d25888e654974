/* manifest.h - the artifact directory's manifest.json: strict reading,
 * writing, and verified loading of the files it names (docs/abi.md). */
#ifndef MOX_ARTIFACT_MANIFEST_H
#define MOX_ARTIFACT_MANIFEST_H

#include "abi.h"

#define MOX_MANIFEST_FORMAT "mox-artifact"
/* Size limit of manifest.json (and abi.json), checked before reading. */
#define MOX_MANIFEST_MAX_SIZE ((size_t)16 << 20)
/* 2: the "cpu" section (each kernel's CPU executor). */
#define MOX_MANIFEST_VERSION 2

/* Files an artifact can hold, by role. */
typedef enum mox_artifact_file {
    MOX_FILE_ABI_JSON,   /* "abi_json":   abi.json */
    MOX_FILE_FATBIN,     /* "fatbin":     kernels.fatbin (optional: absent without nvcc) */
    MOX_FILE_CPU_SO,     /* "cpu_so":     kernels_cpu.so */
    MOX_FILE_CUDA_TU,    /* "cuda_tu":    kernels_cuda.cu */
    MOX_FILE_CPU_TU,     /* "cpu_tu":     kernels_cpu.c */
    MOX_FILE_BINDINGS_H, /* "bindings_h": <module>.h */
    MOX_FILE_BINDINGS_C, /* "bindings_c": <module>.c */
    MOX_FILE_COUNT_
} mox_artifact_file;

typedef struct mox_manifest_file {
    bool present;
    char *path;                 /* relative to the artifact directory, no '/' or '..' */
    char sha256[65];
} mox_manifest_file;

/* How the CPU backend runs one kernel (kernel_abi.h's MOX_CPU_EXEC_*). */
typedef struct mox_manifest_cpu_kernel {
    char *name;                 /* the ABI kernel's name, in ABI order */
    char *executor;             /* "loops", "thread-calls" or "fibers" */
    char *note;                 /* why not "loops" (moxc's build note), or NULL */
} mox_manifest_cpu_kernel;

typedef struct mox_manifest {
    char *module;               /* identifier */
    mox_abi *abi;
    char abi_sha256[65];        /* SHA-256 of mox_abi_to_json(abi) */
    char **cuda_archs;          /* e.g. "sm_90"; empty when no fatbin */
    size_t cuda_arch_count;
    bool ptx;                   /* fatbin embeds PTX */
    mox_manifest_file files[MOX_FILE_COUNT_];
    /* build identity */
    char fingerprint[65];
    char *moxc_version;
    char *nvcc_version;         /* "" when built without nvcc */
    char *cc_version;
    char **nvcc_flags; size_t nvcc_flag_count;
    char **cc_flags;   size_t cc_flag_count;
    mox_manifest_cpu_kernel *cpu_kernels; /* one per ABI kernel */
    size_t cpu_kernel_count;
} mox_manifest;

const char *mox_artifact_file_key(mox_artifact_file f); /* "fatbin" ... */
/* The size limit of file role f (0 for an unknown role). */
size_t mox_artifact_file_limit(mox_artifact_file f);

/* Parses and validates manifest JSON text strictly. */
bool mox_manifest_parse(const char *text, size_t length, mox_manifest **out, mox_artifact_error *err);
/* Reads <dir>/manifest.json and parses it. Artifact files (the manifest
 * too) must be regular files, not symbolic links, within their size limit:
 * each is checked before anything is read, and nothing blocks (a FIFO is
 * refused, not opened for reading). */
bool mox_manifest_load(const char *dir, mox_manifest **out, mox_artifact_error *err);
/* Serialises (pretty, stable key order). malloc'd. */
char *mox_manifest_to_json(const mox_manifest *manifest);
void mox_manifest_free(mox_manifest *manifest);

/* Reads file `f` of the artifact in `dir`, checks its SHA-256 against the
 * manifest, and returns the verified bytes (malloc'd, plus a NUL after them).
 * Fails if the file is absent from the manifest, unreadable or tampered. */
bool mox_manifest_read_file(const mox_manifest *manifest, const char *dir, mox_artifact_file f,
                            void **data, size_t *size, mox_artifact_error *err);
/* Checks every present file's hash (cache validation). */
bool mox_manifest_verify_all(const mox_manifest *manifest, const char *dir, mox_artifact_error *err);

#endif
