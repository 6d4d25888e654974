/* front_internal.h - shared state and helpers of moxc's front end (parse*.c,
 * check*.c, front_*.c). Nothing here is visible to the generators: they
 * only see front.h. */
#ifndef MOXC_FRONT_INTERNAL_H
#define MOXC_FRONT_INTERNAL_H

#include <clang-c/Index.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "front.h"
#include "diag_order.h"
#include "line_set.h"

/* ---- growable arrays: `moxc__grow(&ptr, &cap, need, sizeof *ptr)` ---- */
bool moxc__grow(void *ptr, size_t *cap, size_t need, size_t elem_size);
char *moxc__strdup(const char *s);
char *moxc__printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Takes ownership of `s` (disposes it) and returns a malloc'd copy. */
char *moxc__cxstr(CXString s);
bool moxc__starts_with(const char *s, const char *prefix);

/* A record the module uses (moxc_record plus its layout, kept to detect the
 * same name meaning two layouts). */
typedef struct moxc__record {
    moxc_record pub;
    mox_abi_layout *layout;
} moxc__record;

/* Whole-parse state: options, diagnostics and the module being built. */
typedef struct moxc__front {
    const moxc_parse_options *opts;
    FILE *diag;
    unsigned errors;
    moxc__line_set printed; /* diagnostic lines already printed (no repeats) */
    moxc__diag_order held;  /* those lines, printed in source order when the front ends */
    moxc__line_set keyword_at; /* "file:line:col" of names reported as C++ keywords */
    char *mox_include_real; /* realpath of opts->mox_include_dir, or NULL */
    char **source_real;     /* realpath of each source (NULL when missing) */

    mox_abi_kernel *kernels;
    moxc_kernel_info *infos;
    size_t kernel_count, kernel_cap;
    char **kernel_where;           /* "file:line" of each kernel, for duplicates */
    moxc__record *records;
    size_t record_count, record_cap;
    char **deps;
    size_t dep_count, dep_cap;
    moxc_source_edit *edits;
    size_t edit_count;
    uint32_t required_features;
} moxc__front;

/* A direct call from one defined function to another. */
typedef struct moxc__call {
    size_t callee; /* index into moxc__tu.fns */
    CXCursor site; /* the first call expression */
} moxc__call;

/* A function definition reachable from a kernel in one translation unit. */
typedef struct moxc__fn {
    CXCursor cursor;     /* the definition */
    char *name;
    bool is_kernel;
    size_t kernel;       /* index into front->kernels when is_kernel */
    moxc__call *calls;   /* defined functions it calls directly, once each */
    size_t call_count, call_cap;
    uint32_t direct_features; /* MOX_KFEAT_* found in its own body */
    uint32_t features;        /* closure over callees */
    int coop_direct;          /* MOXC_COOP_* its own calls need */
    int coop;                 /* closure over callees */
} moxc__fn;

/* One translation unit (one kernel source). */
typedef struct moxc__tu {
    moxc__front *front;
    CXTranslationUnit tu;
    const char *source;       /* as given */
    const char *source_real;  /* absolute, may be NULL */
    CXFile main_file;
    size_t first_kernel;      /* kernels of this TU: [first_kernel, front->kernel_count) */
    CXCursor *kernel_cursors; /* parallel to this TU's kernels */
    size_t kernel_cursor_count, kernel_cursor_cap;
    moxc__fn *fns;
    size_t fn_count, fn_cap;
} moxc__tu;

/* How much of a block must take part in a cooperative operation, and how
 * much a value or a branch varies: a value that is the same across a warp
 * (mox_warp_id) lets warp operations run under it but not barriers. */
enum { MOXC_UNIFORM = 0, MOXC_WARP_UNIFORM = 1, MOXC_VARYING = 2 };
/* Cooperative needs of a function: none, warp operations, a barrier. */
enum { MOXC_COOP_NONE = 0, MOXC_COOP_WARP = 1, MOXC_COOP_BLOCK = 2 };

/* ---- diagnostics (front_util.c) ---- */
void moxc__error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void moxc__error_plain(moxc__front *f, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* moxc__error_at for a name that is a C++ keyword: once per place, so the
 * kernel and record checks' messages are not followed by the general one. */
void moxc__keyword_error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void moxc__print_line(moxc__front *f, const char *line);
/* "file:line" of a location (expansion), malloc'd; "<unknown>" if none. */
char *moxc__where(CXSourceLocation loc);
/* Expansion location helpers. `file` may be NULL. */
void moxc__expansion(CXSourceLocation loc, CXFile *file, unsigned *line, unsigned *col,
                     unsigned *offset);
CXSourceLocation moxc__cursor_loc(CXCursor c);
CXSourceLocation moxc__cursor_start(CXCursor c);
/* Absolute path of a file (realpath, else clang's name), malloc'd. */
char *moxc__file_real(CXFile file);
/* Whether a location is inside a file under the mox include directory. */
bool moxc__in_mox_include(moxc__front *f, CXSourceLocation loc);

/* Whether a name is a C or C++ keyword (unusable in the bindings or the CUDA TU). */
bool moxc__is_reserved_name(const char *name);

/* ---- cursor helpers (front_cursors.c) ---- */
typedef struct moxc__children {
    CXCursor *items;
    size_t count, cap;
} moxc__children;
void moxc__children_of(CXCursor c, moxc__children *out); /* out->items malloc'd */
void moxc__children_free(moxc__children *ch);
/* The last child of `c` that is an expression (a variable's initializer),
 * or a null cursor. */
CXCursor moxc__last_expression_child(CXCursor c);
/* A function definition's body (its compound statement), or a null cursor. */
CXCursor moxc__function_body(CXCursor fn);
/* Text of the first annotate attribute on `c` starting with `prefix`, malloc'd, or NULL. */
char *moxc__annotation(CXCursor c, const char *prefix);
/* Whether `c` declares a MOX_SHARED array (not MOX_SHARED_DYNAMIC). */
bool moxc__is_shared_array(CXCursor c);
/* Operator token between the two operands of a binary operator ("&&"),
 * written into buf; "" when unknown (inside a macro). */
void moxc__binary_op(CXTranslationUnit tu, CXCursor lhs, CXCursor rhs, char *buf, size_t size);
/* An expression that denotes an object rather than a value (no implicit
 * lvalue-to-rvalue conversion around it): assignment targets, & operands. */
bool moxc__is_lvalue_expr(CXCursor c);
CXCursor moxc__strip_parens(CXCursor c);
/* The expression inside parentheses and, with `implicit`, inside clang's
 * unexposed (implicit conversion) wrappers too; `c` itself when none. */
CXCursor moxc__strip_wrappers(CXCursor c, bool implicit);

/* ---- type helpers (front_types.c) ---- */
/* Strips typedefs' sugar one level at a time: elaborated, attributed. */
CXType moxc__strip_elaborated(CXType t);
/* The canonical type's spelling without qualifiers or "struct ". */
char *moxc__canonical_name(CXType t);
/* Whether canonical `t` is the dialect's mox_f16 / mox_atomic_u32 / mox_atomic_i32. */
bool moxc__is_f16(CXType t);
bool moxc__is_atomic(CXType t, mox_scalar *element);
/* Whether canonical `t` is one of the dialect's vector types (mox_float4 ...);
 * lane and lanes may be NULL. */
bool moxc__vector_of(CXType t, mox_scalar *lane, unsigned *lanes);
/* Whether an object of this type is const (arrays: their elements). */
bool moxc__is_const_object(CXType t);
/* Whether a type (through pointers and arrays) is double precision. */
bool moxc__involves_double(CXType t);
/* MOX_KFEAT_F16 / MOX_KFEAT_ATOMICS for a type (through pointers, arrays and,
 * when `fields`, record fields). */
uint32_t moxc__type_features(CXType t, bool fields);

/* ---- CUDA spellings (cuda_hints.c) ---- */
/* The dialect's equivalent of a CUDA (or C library) name as a clause
 * ("the dialect has mox_barrier()"), or NULL. */
const char *moxc__cuda_hint(const char *name);
/* clang's message with the hint for the name it complains about, or NULL
 * to keep it; calls without a declaration become "unknown function 'f' in
 * a kernel" and set *error. `after_extern`: the name follows `extern`. */
char *moxc__clang_message(const char *msg, bool after_extern, bool *error);
/* Whether CUDA's headers (which the CUDA translation unit includes) define
 * a type of this name: float4, uint2, dim3, half, ... */
bool moxc__is_cuda_type_name(const char *name);

/* ---- parse steps ---- */
/* Parses kernel source opts->sources[si] and runs everything on its
 * translation unit (parse_source.c); problems go to f's diagnostics. */
void moxc__parse_source(moxc__front *f, CXIndex index, size_t si, const char *const *args, int arg_count);
/* Moves what the front built into a new module (NULL on out of memory) and
 * frees the front's state (parse_module.c). */
moxc_module *moxc__assemble_module(moxc__front *f);
void moxc__free_front(moxc__front *f);
/* Fills the ABI kernel, its info and errors for one kernel definition. */
bool moxc__parse_kernel(moxc__tu *t, CXCursor fn, mox_abi_kernel *k, moxc_kernel_info *info);
/* MOX_BLOCK of kernel definition `fn` into k->required_block (parse_block.c). */
void moxc__parse_block(moxc__tu *t, CXCursor fn, mox_abi_kernel *k);
/* Evaluates s[0, len), macro-expanded text of an integer constant
 * expression (+ - * / % << >> and parentheses, 64 bits, no overflow). */
bool moxc__parse_constant(const char *s, size_t len, uint64_t *out);
/* Layout of a record type used by a kernel; registers it in front->records. */
mox_abi_layout *moxc__record_layout(moxc__tu *t, CXType spelled, const char *kernel,
                                    CXSourceLocation use);
/* Scalar of a non-record element type, with an error message when
 * unsupported (parse_scalar.c). */
bool moxc__scalar_of(CXType t, mox_scalar *out, char **why);
void moxc__collect_dependencies(moxc__tu *t);
bool moxc__collect_edits(moxc__tu *t, moxc_source_edit *edit);

/* ---- checks ---- */
/* Builds t->fns from the kernels, checking calls, recursion, bodies;
 * computes each kernel's features. */
void moxc__check_calls(moxc__tu *t);
/* Per-function body checks (check_body.c); fills fn->callees and features. */
void moxc__check_body(moxc__tu *t, size_t fn);
/* File-scope checks of a kernel source (mutable variables, MOX_SHARED). */
void moxc__check_file_scope(moxc__tu *t);
/* What the CUDA translation unit (C++) cannot compile: C++ keywords as
 * names, variable-length arrays, implicit conversions from void *
 * (check_cxx.c); every declaration outside system and mox headers. */
void moxc__check_cxx(moxc__tu *t);
/* Per cursor: sizeof, _Alignof and __typeof__ of an expression whose type
 * differs between C and C++ (a character literal, a comparison), and
 * _Generic (check_cxx_types.c). */
void moxc__check_cxx_types(moxc__tu *t, CXCursor c);
/* Per cursor: C11 that C++ refuses and kernel_cuda.h cannot map - enum
 * conversions and arithmetic, const without initialiser, a string filling
 * a char array without its NUL, nested tags used outside, a goto past an
 * initialisation (check_cxx_c11.c). */
void moxc__check_cxx_c11(moxc__tu *t, CXCursor c);
/* Spin-waits on atomics without a barrier in the loop (check_spin.c);
 * after moxc__check_calls (needs each function's coop). */
void moxc__check_spin(moxc__tu *t);
/* Uniform participation of barriers and warp operations. */
void moxc__check_uniform(moxc__tu *t);
/* Decides for each kernel of this TU whether its gated CUDA entries may
 * check the gate after the body's loads (gate_defer.c): fills
 * front->infos[k].gate. Runs after the checks, without errors. */
void moxc__gate_defer(moxc__tu *t);
void moxc__gate_defer_free(moxc_gate_defer *gate);
/* Plans each kernel's CPU work-group function (cpu_lower.c): fills
 * front->infos[k].cpu for this TU's kernels. Runs after the checks. */
void moxc__cpu_lower(moxc__tu *t);
/* Index of the function defined by `def` in t->fns, adding it when `add`. */
size_t moxc__fn_index(moxc__tu *t, CXCursor def, bool add);
/* Classification of the dialect's functions and allowed external calls. */
bool moxc__is_intrinsic(moxc__tu *t, CXCursor decl);
bool moxc__is_math_function(const char *name);
uint32_t moxc__intrinsic_features(const char *name);
int moxc__intrinsic_coop(const char *name);

#define MOXC_NO_FN ((size_t)-1)

#endif
