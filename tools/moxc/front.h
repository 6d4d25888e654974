/* front.h - moxc's front end: parses kernel sources with libclang and
 * returns the module's ABI plus what the code generators need. This is the
 * interface between the front end (parse*.c, check*.c) and the generators
 * and build driver (gen_*.c, build.c, cache.c, main.c). */
#ifndef MOXC_FRONT_H
#define MOXC_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "abi.h" /* src/artifact/abi.h */

typedef struct moxc_parse_options {
    const char *const *sources;      /* kernel source files (as given) */
    size_t source_count;
    const char *const *include_dirs; /* -I, in order */
    size_t include_dir_count;
    const char *const *defines;      /* -D text, e.g. "N=4" */
    size_t define_count;
    const char *mox_include_dir;     /* directory holding mox/kernel.h */
    FILE *diagnostics;               /* where "file:line:col: error: ..." lines go */
} moxc_parse_options;

/* A record type used by the ABI (as a value or a buffer element). */
typedef struct moxc_record {
    char *name;        /* the ABI record name (struct tag or typedef name) */
    char *c_spelling;  /* how C code names it: "Particle" or "struct particle" */
    char *header;      /* absolute path of the header that declares it */
} moxc_record;

typedef struct moxc_param_info {
    char *c_spelling;  /* C type of a value param ("uint32_t", "Config");
                          element type of a buffer ("float", "Particle") */
} moxc_param_info;

/* What the CPU lowering (cpu_lower.c) measured of a kernel. */
typedef struct moxc_cpu_stats {
    unsigned regions;        /* region loops (thread and lane loops) */
    unsigned warp_steps;     /* warp operations computed over lane arrays */
    unsigned locals;         /* local variables, and parameters the kernel assigns */
    unsigned crossing;       /* of those: used outside the region that declares
                                them (what privatizing every such variable
                                would keep per thread) */
    unsigned privatized;     /* of those: per-thread storage (live across a region boundary) */
    unsigned block_level;    /* one value per block */
    unsigned rematerialized; /* recomputed from the thread index in each region */
    unsigned long long private_bytes; /* per-thread storage, bytes per thread */
} moxc_cpu_stats;

/* How the CPU backend will run a kernel: a work-group function of region
 * loops (`body` set), or else the old way (a loop calling the kernel per
 * thread; fibers for kernels with barriers or warp operations), `note`
 * saying why. */
typedef struct moxc_cpu_plan {
    char *body;        /* the work-group function's statements after its prologue */
    char *note;        /* why there is no body ("a barrier inside a switch statement at f.c:12") */
    moxc_cpu_stats stats;
} moxc_cpu_plan;

/* One change to a kernel source's text: bytes [at, at + skip) become `text`. */
typedef struct moxc_text_edit {
    size_t at;
    size_t skip;
    char *text;
} moxc_text_edit;

/* Whether the gated CUDA entries of a kernel may check the gate after the
 * body's loads instead of before them (the deferred gate check,
 * gate_defer.c): they then run a copy of the kernel, renamed
 * <kernel>__mox_deferred, that takes `mox__gate_view *mox__g` first and does
 * none of its stores, atomics and mox_fail calls when mox__gate_bad(mox__g). */
typedef struct moxc_gate_defer {
    bool eligible;
    char *why_not;             /* when not eligible: "what at file:line" (NULL: not analysed) */
    size_t start, end;         /* the kernel's definition: bytes [start, end) of its source */
    unsigned start_line;       /* the line of `start` */
    unsigned end_line;         /* the line of the definition's last byte */
    moxc_text_edit *edits;     /* what the copy changes, ascending, inside [start, end) */
    size_t edit_count;
    /* The copy's first guard comes after a barrier or warp operation. */
    bool guard_after_collective;
    /* Some guard after a barrier or warp operation may be reached by more
     * than one thread of a block: it is not inside the then-branch of an
     * `if` testing the thread index for equality with a constant
     * (`if (t == 0)`). By default (MOXC_GATE_DEFER unset or "auto") a
     * kernel whose first guard comes after a collective is deferred only
     * when this is false (a reduction writing its block's sum from one
     * thread), and then gets a deferred __gate1 entry; the others keep
     * the check at entry, where their deferred copies measured slower on
     * an H200 (docs/kernel-language.md, "The deferred gate check"). */
    bool wide_guard_after_collective;
} moxc_gate_defer;

typedef struct moxc_kernel_info {
    char *file;        /* absolute path of the defining source */
    unsigned line;
    moxc_param_info *params; /* parallel to the ABI kernel's params */
    moxc_cpu_plan cpu;
    moxc_gate_defer gate;
} moxc_kernel_info;

/* Where the CUDA translation unit must insert "__device__ " into a source:
 * before every function declaration/definition and every file-scope
 * constant of the kernel source files (byte offsets, ascending). */
typedef struct moxc_source_edit {
    char *path;         /* absolute path of the kernel source */
    size_t *offsets;
    size_t offset_count;
} moxc_source_edit;

typedef struct moxc_module {
    mox_abi *abi;                 /* validated (mox_abi_validate) */
    moxc_kernel_info *kernels;    /* parallel to abi->kernels */
    moxc_record *records;         /* each record the ABI uses, once */
    size_t record_count;
    char **dependencies;          /* absolute paths of every file read: sources
                                     and every header they include (for the
                                     fingerprint), sorted, unique */
    size_t dependency_count;
    moxc_source_edit *edits;      /* one per kernel source, in source order */
    size_t edit_count;
} moxc_module;

/* Parses and checks. On any error prints every diagnostic it found to
 * opts->diagnostics ("file:line:col: error: message"), returns false and sets
 * *out = NULL. Never crashes on bad input (malformed file, missing include,
 * unsupported construct). */
bool moxc_parse(const moxc_parse_options *opts, moxc_module **out);
void moxc_module_free(moxc_module *module);

#endif
