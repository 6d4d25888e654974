/* build.h - moxc's back end (internal): command options, process running,
 * file helpers, toolchain discovery, the build plan (parse + fingerprint),
 * staging an artifact, and the artifact cache. main.c, inspect.c and
 * doctor.c drive these. */
#ifndef MOXC_BUILD_H
#define MOXC_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "front.h"
#include "gen.h"

#ifndef MOXC_VERSION
#define MOXC_VERSION "0.0.0"
#endif

/* ---- string vectors (own their strings) ---- */

typedef struct moxc_strv {
    char **items;
    size_t count;
} moxc_strv;

bool moxc_strv_push(moxc_strv *v, const char *text);
/* sm_<digits>[a|f]: the arch's number (for sorting), or -1 when malformed
 * (build_plan.c). */
long moxc_arch_number(const char *arch);
bool moxc_strv_pushf(moxc_strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void moxc_strv_free(moxc_strv *v);

/* ---- options of the commands ---- */

typedef struct moxc_options {
    const char *name;         /* --name */
    const char *out_dir;      /* --out-dir */
    const char *bindings_dir; /* --bindings-dir */
    const char *depfile;      /* --depfile: Makefile-syntax dependencies of --depfile-target */
    const char *depfile_target;
    const char *nvcc;         /* --nvcc */
    const char *cc;           /* --cc */
    const char *mox_include;  /* --mox-include (default: moxc_default_mox_include) */
    const char *deploy_to;    /* deploy: --to */
    bool no_cuda;             /* --no-cuda */
    moxc_strv includes;       /* -I */
    moxc_strv defines;        /* -D */
    moxc_strv archs;          /* --cuda-arch, e.g. "sm_90" */
    moxc_strv cc_flags;       /* --cc-flag */
    moxc_strv sources;
} moxc_options;

void moxc_options_free(moxc_options *o);

/* ---- processes ---- */

typedef struct moxc_proc {
    bool started;    /* false: the program could not be run (errno_value says why) */
    int errno_value;
    int exit_code;   /* -1 when killed by a signal */
    int signal;
    char *output;    /* stdout and stderr together, NUL-terminated */
    size_t output_len;
} moxc_proc;

/* Runs argv (argv[0] a path, or a name searched in PATH) with no shell,
 * stdin from /dev/null, and captures its output. False only when out of
 * memory or the pipe could not be made; check proc->started/exit_code. */
bool moxc_run(const char *const *argv, moxc_proc *proc);
void moxc_proc_free(moxc_proc *proc);
/* Absolute path of an executable: `name` itself when it holds a '/', else
 * looked up in PATH. NULL when not found. */
char *moxc_find_program(const char *name);

/* ---- files ---- */

bool moxc_read_file(const char *path, char **data, size_t *size); /* NUL appended */
/* Writes via a temporary file in the same directory and rename(). */
bool moxc_write_file(const char *path, const void *data, size_t size);
/* Writes only when the file's bytes differ (keeps its mtime otherwise). */
bool moxc_write_if_changed(const char *path, const void *data, size_t size);
bool moxc_remove_tree(const char *path);
bool moxc_mkdir_p(const char *path);
char *moxc_path_join(const char *dir, const char *name);
/* Absolute form of `path` (realpath when it exists, else cwd-joined). */
char *moxc_abs_path(const char *path);
bool moxc_sha256_file(const char *path, char hex[65]);

/* ---- where moxc is (self.c) ---- */

/* moxc's own executable (realpath of /proc/self/exe); NULL if unknown. */
char *moxc_self_path(void);
/* The default --mox-include: the include directory next to moxc's bin
 * directory (<prefix>/bin/moxc -> <prefix>/include). NULL on out of memory
 * or when moxc cannot find itself. */
char *moxc_default_mox_include(void);

/* ---- toolchain ---- */

typedef struct moxc_toolchain {
    char *cc;           /* absolute path */
    char *cc_version;   /* full `cc --version` text */
    char *nvcc;         /* absolute path; NULL for a CPU-only build */
    char *nvcc_version; /* full `nvcc --version` text; NULL without nvcc */
} moxc_toolchain;

/* nvcc from --nvcc, else $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, PATH. */
char *moxc_find_nvcc(const char *explicit_path);
/* cuobjdump next to nvcc, else in PATH. */
char *moxc_find_cuobjdump(const char *nvcc);
/* The C compiler's name: --cc, else $CC, else "cc". */
const char *moxc_cc_name(const moxc_options *o);
/* Finds the compilers of o and asks them their version. With --nvcc given
 * and not runnable, fails; without, a missing nvcc means CPU-only. */
bool moxc_toolchain_find(const moxc_options *o, moxc_toolchain *tc, FILE *diag);
void moxc_toolchain_free(moxc_toolchain *tc);
/* First line of a version text that says something (for the manifest). */
char *moxc_version_line(const char *text, const char *prefer);

/* ---- the plan of one module build ---- */

typedef struct moxc_plan {
    const moxc_options *opts;
    char *name;                  /* --name, else "module" */
    char *what;                  /* for messages: "module NAME", or "the kernels" without --name */
    char *mox_include;           /* absolute */
    moxc_strv dialect_headers;   /* headers in <mox_include>/mox, sorted: generated code
                                    includes them in modes (CUDA, CPU) the front
                                    end never parses, so they are inputs too */
    moxc_strv include_dirs;      /* absolute, in order */
    moxc_module *module;
    moxc_source_text *texts;     /* one per module->edits */
    char *abi_json;
    char abi_sha256[65];
    /* fingerprint stage (moxc_plan_fingerprint) */
    moxc_toolchain tc;
    moxc_strv archs;             /* sorted, unique: sm_XX */
    moxc_strv nvcc_flags;        /* every nvcc argument except -o and the input */
    moxc_strv cc_flags;          /* every cc argument except -o and the input */
    char fingerprint[65];
} moxc_plan;

/* Parses the sources (front end) and reads their texts. */
bool moxc_plan_parse(const moxc_options *o, moxc_plan *plan, FILE *diag);
/* Finds the toolchain, fixes the compiler flags and computes the fingerprint. */
bool moxc_plan_fingerprint(moxc_plan *plan, FILE *diag);
void moxc_plan_free(moxc_plan *plan);

/* The generated texts of a module whose artifact is at artifact_dir. */
typedef struct moxc_generated {
    char *bindings_h, *bindings_c, *cuda_tu, *cpu_tu;
} moxc_generated;
bool moxc_generate(const moxc_plan *plan, const char *artifact_dir, moxc_generated *out, FILE *diag);
void moxc_generated_free(moxc_generated *g);

/* Writes the whole artifact (sources, compiled objects, manifest.json) into
 * stage_dir, which is to be renamed to artifact_dir. */
bool moxc_build_stage(const moxc_plan *plan, const char *stage_dir, const char *artifact_dir, FILE *diag);

/* ---- the artifact cache ---- */

/* Returns (malloc'd) the valid artifact directory <out_dir>/<fingerprint>,
 * building it under the lock when missing or invalid. Prints "Built mox
 * artifact DIR" or "Cached mox artifact DIR" to `info`, problems to `diag`. */
char *moxc_cache_obtain(const moxc_plan *plan, const char *out_dir, FILE *info, FILE *diag);
/* Checks an artifact directory against the plan: manifest, fingerprint,
 * module, ABI and every file's hash. `why` gets the first problem. */
bool moxc_cache_valid(const moxc_plan *plan, const char *dir, char *why, size_t why_size);
/* Removes <out_dir>/.build-<pid>-<n> stages whose process is gone. */
void moxc_cache_clean_stages(const char *out_dir, FILE *diag);

/* ---- commands ---- */

int moxc_cmd_build(const moxc_options *o);
int moxc_cmd_inspect(const moxc_options *o, const char *emit);
int moxc_cmd_doctor(const moxc_options *o);
/* Copies the artifacts named by o->sources (artifact directories or
 * NAME.artifact records) to o->deploy_to/<fingerprint>/ (deploy.c). */
int moxc_cmd_deploy(const moxc_options *o);

#endif
