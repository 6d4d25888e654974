/* cpu_lower.h - state shared by the lowering of a kernel into a CPU
 * work-group function (internal to cpu_lower*.c). cpu_lower.c is the
 * driver and says what the transformation is; the steps:
 *   cpu_lower_jumps.c the level each statement needs (per thread, warp or
 *                     block), with the jumps that leave cooperative code
 *   cpu_lower_ir.c    the kernel body as a tree of items: per-thread code,
 *                     barriers, warp steps, and the loops, branches and
 *                     jumps that contain them (or the reason it cannot be)
 *   cpu_lower_warp_calls.c
 *                     a statement with warp calls split into its calls'
 *                     arguments, the warp steps and the rest
 *   cpu_lower_expr.c  which expressions can be evaluated once per block or
 *                     per warp, or recomputed per thread
 *   cpu_lower_operators.c
 *                     operators' spellings, and what an assignment, ++,
 *                     -- or & writes
 *   cpu_lower_vars.c  what each local variable becomes: block-level,
 *                     recomputed, per-thread storage, or left alone
 *   cpu_lower_regions.c  the region loops in emission order, and which
 *                     variables need per-thread storage
 *   cpu_lower_loops.c the shape of a 1-D block's thread loop
 *   cpu_lower_text.c  source text with rewrites applied (edits)
 *   cpu_lower_code.c  per-thread code of a region, with its prologue
 *   cpu_lower_emit.c  the work-group function's text
 */
#ifndef MOXC_CPU_LOWER_H
#define MOXC_CPU_LOWER_H

#include "front_internal.h"
#include "gen.h"

#define LW_NONE ((size_t)-1)
/* Threads of a block without MOX_BLOCK: the executor's limit. */
#define LW_MAX_THREADS 1024u

/* The level a piece of code needs: per thread, per warp, per block. */
enum { LW_T = 0, LW_W = 1, LW_B = 2 };

typedef enum lw_kind {
    LW_CODE,    /* per-thread code: a statement or expression (wrap, phase) */
    LW_BARRIER, /* the end of one region loop, the start of the next */
    LW_WARP,    /* a warp step: call `call` over the lane arrays */
    LW_IF,
    LW_LOOP,
    LW_JUMP     /* return, break or continue of a warp or block level construct */
} lw_kind;

/* How a LW_CODE item is written. */
enum { LW_WRAP_STMT, LW_WRAP_EXPR, LW_WRAP_FLAG };
/* Which part of a statement with warp calls: all of it, the calls'
 * arguments into the staging arrays, or the rest with the calls' results. */
enum { LW_WHOLE, LW_PRE, LW_POST };

typedef struct lw_seq {
    size_t *at; /* item indices */
    size_t n, cap;
} lw_seq;

typedef struct lw_item {
    lw_kind kind;
    int level;
    CXCursor cur;
    int wrap, phase;
    size_t flag;                  /* LW_WRAP_FLAG: flag written; IF/LOOP: flag read (LW_NONE: direct) */
    size_t call_first, call_count; /* PRE/POST/WARP: warp calls */
    size_t owner;                 /* an item evaluating a construct's flag: the construct */
    bool dead;                    /* not emitted (the construct's header is direct) */
    /* IF / LOOP */
    enum CXCursorKind loop;       /* CXCursor_ForStmt, _WhileStmt, _DoStmt */
    CXCursor init, cond, inc;     /* null cursors when absent */
    lw_seq body, other;           /* then (or loop body) and else */
    lw_seq tail;                  /* flag-evaluated loop: inc and condition */
    bool continued;               /* a continue of this loop is a jump item */
    size_t id;
    /* JUMP */
    enum CXCursorKind jump;
    size_t target;                /* break/continue: the loop item */
    size_t parent;                /* the construct whose sequence holds it, or LW_NONE */
    /* set while assigning regions */
    size_t region;
    size_t order;                 /* position in the emitted code */
    bool direct;                  /* IF/LOOP: header written as is (block or warp level) */
} lw_item;

typedef struct lw_op {
    const char *name;   /* mox_warp_sum_f32 */
    const char *arg;    /* C type of the value argument */
    const char *arg2;   /* of the lane/delta/mask argument, or NULL */
    const char *result; /* C type of the result */
} lw_op;

typedef struct lw_call {
    CXCursor call;
    const lw_op *op;
    CXCursor arg[2];
} lw_call;

/* What a local variable becomes in the work-group function. */
enum {
    LV_LOCAL,   /* left as written: used in one region, or defined first wherever used */
    LV_STORAGE, /* per-thread array mox__p<id>[thread]: live across a region boundary */
    LV_BLOCK,   /* one value per block, mox__b<id>: uniform and set only at block level */
    LV_REMAT    /* recomputed from the thread index where used (declared again per region) */
};

typedef struct lw_var {
    CXCursor decl;
    char *name;
    int cls;
    size_t id;
    size_t decl_item;   /* item that declares it; LW_NONE for a parameter */
    size_t decl_loop;   /* a loop's for-init declares it: that loop */
    bool param, array, addr_taken, written;
    CXCursor init;      /* initializer, or null */
    bool init_in_macro; /* written by a macro with the declaration: no text of its own */
    bool multi;         /* LV_LOCAL used in several regions (declared again in each) */
    bool not_block;     /* could be block-level, but nothing else reads it */
    uint64_t size;      /* bytes of one value */
} lw_var;

/* A jump statement somewhere in the kernel. */
typedef struct lw_jump {
    unsigned at;                 /* its offset */
    bool is_return;
    unsigned target_start, target_end; /* break/continue: the loop (or switch) it leaves */
    int level;                   /* the cooperative code it can skip */
} lw_jump;

/* One item's uses of one variable. */
enum { LR_READ = 1, LR_WRITE = 2, LR_ADDR = 4, LR_DEF = 8 /* sets it before any read */ };
typedef struct lw_ref {
    size_t var, item;
    unsigned how;
} lw_ref;

typedef struct lw_edit {
    unsigned start, end; /* byte range of the source replaced */
    char *text;
} lw_edit;

typedef struct lw_edits {
    lw_edit *at;
    size_t n, cap;
} lw_edits;

typedef struct lw {
    moxc__tu *t;
    CXCursor kernel;
    const mox_abi_kernel *abi;
    const char *text;       /* the kernel source's bytes */
    size_t text_size;
    uint32_t block[3];      /* required block, or 0 */
    uint32_t threads;       /* storage length: the required block's threads, else the maximum */
    lw_item *items;
    size_t item_count, item_cap;
    lw_call *calls;
    size_t call_count, call_cap;
    lw_var *vars;
    size_t var_count, var_cap;
    lw_ref *refs;
    size_t ref_count, ref_cap;
    size_t remat_site;      /* while checking a recomputed variable: its declaring item */
    bool any_lane_sync;     /* some region keeps the lane's thread index current */
    CXCursor *statics;      /* MOX_SHARED and static const declarations (DeclStmt) */
    size_t static_count, static_cap;
    lw_seq top;
    size_t flag_count, label_count, region_count;
    size_t *loops;          /* enclosing loop items while building */
    size_t loop_depth, loop_cap;
    struct lw_jump *jumps;  /* every return, break and continue, with the level it needs */
    size_t jump_count, jump_cap;
    unsigned *coop_offsets; /* source offsets of barriers (B) and warp calls (W), with levels */
    int *coop_levels;
    size_t coop_count, coop_cap;
    bool failed;
    char *why;              /* the first reason the kernel stays on its old executor */
    bool oom;
    moxc_cpu_stats stats;
} lw;

/* ---- cpu_lower.c ---- */
/* Records the first reason (file:line of `at` appended) and stops. */
void lw_fail(lw *L, CXCursor at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
size_t lw_new_item(lw *L, lw_kind kind, int level, CXCursor cur);
void lw_seq_push(lw *L, lw_seq *s, size_t item);
unsigned lw_offset(CXSourceLocation loc);       /* expansion offset */
bool lw_in_main(lw *L, CXSourceLocation loc);
/* Intrinsic name of a call's callee, or NULL; *def gets a defined callee. */
const char *lw_intrinsic(lw *L, CXCursor call, CXCursor *def);
const lw_op *lw_find_op(const char *name);
CXCursor lw_strip(CXCursor c);                  /* parentheses and implicit conversions */

/* ---- cpu_lower_jumps.c ---- */
unsigned lw_start_offset(CXCursor c);
unsigned lw_end_offset(CXCursor c);
/* Records every jump of the kernel body with the level it needs. */
void lw_find_jumps(lw *L, CXCursor body);
/* The level statement c needs (LW_T, LW_W or LW_B). */
int lw_stmt_level(lw *L, CXCursor c);

/* ---- cpu_lower_ir.c ---- */
void lw_build(lw *L, CXCursor body);

/* ---- cpu_lower_warp_calls.c ---- */
/* Pushes the PRE part, the steps and the POST part of statement or
 * expression c (warp calls inside) onto seq, or one item when it has no
 * warp calls; wrap/flag/owner as for its items. */
void lw_push_split(lw *L, CXCursor c, lw_seq *seq, int wrap, size_t flag, size_t owner);

/* ---- cpu_lower_operators.c ---- */
/* Operator spelling of a unary or binary operator cursor ("++", "+=", "&&"). */
void lw_operator(lw *L, CXCursor c, char *buf, size_t size);
bool lw_is_assignment_op(const char *op);
/* Whether c (an operator) assigns to, increments or takes the address of
 * its first operand *target (*addr: the address). */
bool lw_writes(lw *L, CXCursor c, CXCursor *target, bool *addr);
/* The variable (declaration) an assignment target is part of through
 * members and subscripts of arrays; null when it is memory behind a pointer. */
CXCursor lw_target_root(CXCursor c);

/* ---- cpu_lower_expr.c ---- */
enum { LE_BLOCK = 0, LE_WARP = 1, LE_THREAD = 2, LE_NO = 3 };
/* The least uniform context that can evaluate `e` without side effects:
 * once per block, per warp, or again per thread (remat: no calls but the
 * dialect's geometry). LE_NO when it reads memory or writes anything. */
int lw_expr_class(lw *L, CXCursor e, bool remat);
/* For a loop header part (init or increment): assignments to `loop`'s own
 * block variables are allowed. */
int lw_header_class(lw *L, CXCursor e, size_t loop);
/* Whether a helper (transitively) reads the thread index through the lane. */
bool lw_calls_thread_geometry(lw *L, CXCursor expr);
lw_var *lw_var_of(lw *L, CXCursor decl);

/* ---- cpu_lower_vars.c ---- */
/* Collects the variables and their uses, finds the block-level and
 * recomputed ones and the constructs whose headers are direct. */
void lw_vars(lw *L);
/* Whether loop item `loop` is item `it` or a construct around it. */
bool lw_encloses(lw *L, size_t loop, size_t it);

/* ---- cpu_lower_regions.c ---- */
/* Numbers the regions as they will be emitted, then decides which of the
 * remaining variables need per-thread storage. */
void lw_regions(lw *L);
/* The items of a flag-evaluated loop's iteration: body then tail (one
 * sequence unless a continue jumps between them); caller frees *tmp. */
const lw_seq *lw_iteration(lw *L, size_t loop, lw_seq *tmp);
/* Whether a CODE item becomes a block-level assignment (all its
 * declarations are block-level) rather than region code. */
bool lw_is_hoist(lw *L, size_t item);

/* ---- cpu_lower_loops.c ---- */
/* A region that is one `if (x < E) S` (x the thread's x index, E
 * block-level; also <= E and == 0): its loop runs S for those x only. */
typedef struct lw_guard {
    size_t item;
    CXCursor body, bound;
    const char *op; /* "<", "<=" or "==" (bound 0) */
} lw_guard;
bool lw_region_guard(lw *L, const size_t *at, size_t n, lw_guard *g);
/* The region's live code items (LW_CODE, not dead, in a region) in order,
 * into out[0 .. cap): how many there are, or cap + 1 when there are more,
 * or - with `whole` - when one is not a whole statement of its own
 * (LW_WRAP_STMT, LW_WHOLE). The shapes the loops lower (guard, grid
 * stride, bound) each start from these. */
size_t lw_region_code(lw *L, const size_t *at, size_t n, size_t *out, size_t cap, bool whole);
/* The thread's x index as written: mox_thread_idx().x, or a recomputed
 * uint32_t variable that is just that. */
bool lw_is_thread_x_value(lw *L, CXCursor c);
/* Whether the region reads the warp or lane index. */
bool lw_region_reads_warp(lw *L, const size_t *at, size_t n);

/* ---- cpu_lower_text.c ---- */
void lw_edit_add(lw *L, lw_edits *e, unsigned start, unsigned end, char *text);
void lw_edits_free(lw_edits *e);
/* Byte range of a statement, with its ';' when the cursor leaves it out. */
bool lw_stmt_range(lw *L, CXCursor c, bool with_semicolon, unsigned *start, unsigned *end);
/* Appends text[start, end) with the edits inside it applied. */
void lw_put_range(lw *L, moxc_buf *b, unsigned start, unsigned end, const lw_edits *e);
/* Collects the rewrites of cursor c's subtree for region code. */
void lw_collect_edits(lw *L, CXCursor c, size_t item, lw_edits *e);
/* Appends cursor c's text (an expression) with its rewrites. */
void lw_put_expr(lw *L, moxc_buf *b, CXCursor c, size_t item);
/* v's initializer moved out of its declaration (v->init is not null). */
void lw_put_init(lw *L, moxc_buf *b, const lw_var *v, size_t item);
/* C declaration of `name` with the type of variable v (top-level const dropped). */
bool lw_put_decl(lw *L, moxc_buf *b, CXType type, const char *name);

/* How many leading region items of at[0..n) can run once per warp for
 * all its lanes (they go before the lane loop); their indices in prefix. */
size_t lw_warp_prefix(lw *L, const size_t *at, size_t n, size_t *prefix);

/* ---- cpu_lower_code.c: per-thread code (the emitter's state) ---- */
typedef struct lw_em {
    lw *L;
    moxc_buf *b;
    int depth;
    size_t warp_loop; /* the warp loop being written (its label), or LW_NONE */
    bool returned;    /* a T-level return jumps to the current region's end */
} lw_em;
void lw_indent(lw_em *m);
void lw_line(lw_em *m, const char *text);
void lw_emit_code(lw_em *m, size_t item);
/* Block-level variables declared by the run's items, set before its loop. */
void lw_emit_hoists(lw_em *m, const size_t *at, size_t n);
void lw_emit_prologue(lw_em *m, size_t region, const size_t *at, size_t n, bool warp_only);
/* The body of a region's loop: lane sync, prologue, the items but
 * skip[0..skips), its end label; with a guard, only the guarded statement. */
void lw_emit_region_body(lw_em *m, const size_t *at, size_t n, const lw_guard *guard, const size_t *skip,
                         size_t skips);
/* A region's lane sync and prologue (what lw_emit_region_body starts
 * with); returns the region. */
size_t lw_emit_region_entry(lw_em *m, const size_t *at, size_t n);
/* Statement `stmt` of item `item` with its rewrites, between `before` and
 * `after` on its line(s). */
void lw_emit_stmt(lw_em *m, CXCursor stmt, size_t item, const char *before, const char *after);

/* ---- cpu_lower_stride.c ---- */
/* A region that is one grid-stride loop, `for (T i = E; i < N; i += S) B`
 * or `T i = E; while (i < N) { B i += S; }` (N and S block-level, B
 * neither writing i nor leaving the loop): the block's threads walk it
 * side by side, a round at a time. */
enum { LW_STRIDE_DECLS = 8 };
typedef struct lw_stride {
    size_t item;      /* the loop */
    size_t decl_item; /* the while form's declaration of i, else LW_NONE */
    size_t decls[LW_STRIDE_DECLS]; /* declarations of recomputed variables before it */
    size_t decl_count;
    CXCursor var, init, cond, inc, body; /* while: body is the block, inc its last statement */
} lw_stride;
bool lw_region_stride(lw *L, const size_t *at, size_t n, lw_stride *s);
/* A declaration of variables a region may write again for each thread (or
 * round): recomputed ones, or locals never set again whose initializer
 * reads no memory and has no effect. */
bool lw_recomputed_decl(lw *L, size_t item);

/* ---- cpu_lower_bound.c ---- */
/* A 1-D region that is `if (i < N) S` with i = B + x recomputed (x the
 * thread's x index, B and N block-level, all uint32_t), after declarations
 * of recomputed variables: its loop runs x below N - B only. */
typedef struct lw_bound {
    size_t item;                   /* the if */
    CXCursor body, limit, base;    /* S, N, B */
    size_t base_item;              /* the item whose text B is (i's declaration) */
    size_t decls[LW_STRIDE_DECLS]; /* declarations before the if */
    size_t decl_count;
} lw_bound;
bool lw_region_bound(lw *L, const size_t *at, size_t n, lw_bound *b);
/* Writes `if (B + x cannot wrap) { the bounded loop } else {`: the caller
 * writes the region's usual loop, then closes the brace. */
void lw_emit_bound_open(lw_em *m, const size_t *at, size_t n, const lw_bound *b);
void lw_emit_stride(lw_em *m, const size_t *at, size_t n, const lw_stride *s);

/* ---- cpu_lower_emit.c ---- */
char *lw_emit(lw *L);

#endif
