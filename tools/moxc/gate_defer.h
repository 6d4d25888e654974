/* gate_defer.h - state shared by the deferred-gate-check analysis
 * (gate_defer.c: rules and driver; gate_defer_stmt.c: statements;
 * gate_defer_expr.c: expressions; gate_defer_guard.c: the statements the
 * copy guards; gate_defer_calls.c: calls and pure helper functions;
 * gate_defer_helper.c: helpers followed into; gate_defer_one.c: one-thread
 * conditions; gate_defer_text.c: the text edits of the kernel's deferred
 * copy). See gate_defer.c for the rules. */
#ifndef MOXC_GATE_DEFER_H
#define MOXC_GATE_DEFER_H

#include "front_internal.h"

/* What a helper function is, for the analysis: not looked at yet, being
 * looked at (recursion guard), pure (a function of its arguments alone),
 * or not (why_not says why). */
enum { GD_HELPER_UNKNOWN, GD_HELPER_VISITING, GD_HELPER_PURE, GD_HELPER_IMPURE };

typedef struct gd_helper {
    int state;
    char *why_not; /* "reads memory at f.c:4" */
} gd_helper;

/* The analysis of one kernel: which of its variables hold tainted values
 * (read from memory, or assigned under control flow that depends on such
 * a value), the control flow around the current point, and - in the last
 * pass - the first problem and the text edits of the deferred copy. */
typedef struct gd {
    moxc__tu *t;
    CXCursor kernel;
    gd_helper *helpers; /* parallel to t->fns */
    CXCursor *tainted;
    size_t tainted_count, tainted_cap;
    CXCursor *locals;       /* locals declared so far, with ... */
    unsigned *local_depths; /* ... the tainted conditions around their declaration */
    size_t local_count, local_cap;
    bool changed;
    bool report;         /* the last pass: problems and edits are recorded */
    char *problem;       /* the first problem: "what at file:line" */
    bool oom;
    unsigned tainted_ctrl;       /* enclosing conditions that are tainted */
    CXSourceLocation ctrl_loc;   /* the outermost of them */
    moxc_text_edit *edits;
    size_t edit_count, edit_cap;
    const char *text;    /* the kernel source's bytes (libclang's copy) */
    size_t text_size;
    bool collective_seen;        /* last pass: a barrier or warp operation so far */
    bool guard_seen;             /* last pass: a guard so far */
    bool guard_after_collective; /* last pass: the first guard came after a collective */
    bool wide_guard_after_collective; /* last pass: a guard after a collective outside one_thread_ctrl */
    unsigned one_thread_ctrl;    /* enclosing then-branches of `if (<thread index> == <constant>)` */
    unsigned helper_depth;       /* helpers being walked for a call (gate_defer_helper.c) */
    bool helper_result;          /* the walked helper's returned value may be tainted */
} gd;

static inline bool moxc__gd_is_array_type(CXType t) {
    enum CXTypeKind k = clang_getCanonicalType(t).kind;
    return k == CXType_ConstantArray || k == CXType_IncompleteArray || k == CXType_VariableArray;
}

/* ---- state (gate_defer.c) ---- */
bool moxc__gd_is_tainted(gd *g, CXCursor decl);
void moxc__gd_taint(gd *g, CXCursor decl);
/* Records `what` at `loc` as the kernel's first problem (last pass only). */
void moxc__gd_problem(gd *g, CXSourceLocation loc, const char *what);
/* Records that local `decl` is declared here (under g->tainted_ctrl
 * tainted conditions). */
void moxc__gd_declare(gd *g, CXCursor decl);
/* How many tainted conditions surround the declaration of `decl` (0 for
 * parameters). An assignment depends on control flow only through the
 * conditions beyond those: inside them the variable does not exist. */
unsigned moxc__gd_declared_depth(gd *g, CXCursor decl);
void moxc__gd_push_ctrl(gd *g, bool tainted, CXSourceLocation loc);
void moxc__gd_pop_ctrl(gd *g, bool tainted);
/* ---- statements (gate_defer_stmt.c) ---- */
void moxc__gd_stmt(gd *g, CXCursor s);

/* Records that the copy guards something here (the last pass): whether
 * the first guard comes after a barrier or warp operation, and whether a
 * guard after one may be reached by more than one thread of a block. */
void moxc__gd_note_guard(gd *g);

/* ---- one-thread conditions (gate_defer_one.c) ---- */
/* Whether condition `cond` holds for at most one thread of a block in each
 * row of its x axis: `I == C` or `C == I` where C is an integer constant
 * and I the thread index (mox_thread_idx().x, .y or .z, or a local whose
 * initializer is one), or `A && B` where A or B is such a test. A
 * performance heuristic (which entries moxc makes), not a proof. */
bool moxc__gd_one_thread_test(gd *g, CXCursor cond);

/* ---- expressions (gate_defer_expr.c) ---- */
/* Whether the value of `e` is tainted; checks what it uses as addresses,
 * records assignments to locals, and reports stores, atomics and mox_fail
 * (they are only allowed where moxc__gd_expr_stmt handles them). */
bool moxc__gd_eval(gd *g, CXCursor e);
/* An expression statement (or a local's initializer when `init_of` is not
 * null): guarded stores, atomics and mox_fail, else moxc__gd_eval. */
void moxc__gd_expr_stmt(gd *g, CXCursor e, CXCursor init_of);
/* The taint of one argument; a tainted pointer argument is refused. */
bool moxc__gd_eval_arg(gd *g, CXCursor arg);
/* The taint of a call's arguments; a tainted pointer argument is refused. */
bool moxc__gd_eval_args(gd *g, CXCursor call);
/* `lhs = rhs` or `lhs op= rhs` (`compound`) as a value: only locals and
 * MOX_SHARED arrays may be assigned there. */
bool moxc__gd_eval_assignment(gd *g, CXCursor e, CXCursor lhs, CXCursor rhs, bool compound);
/* An assignment to local variable `decl` (or a part of it) of a value
 * whose taint is `value`: taints it when the value or the control flow is
 * tainted; a pointer may not become tainted. */
void moxc__gd_assign_local(gd *g, CXCursor decl, bool value, CXCursor where);
/* Where a store to `lvalue` goes: a local (*root), a MOX_SHARED array,
 * memory, a static, or - inside a helper walked for a call - what a
 * pointer parameter of the helper points to (a local or shared array of
 * its caller: gate_defer_helper.c checks every call's arguments). */
typedef enum { GD_STORE_LOCAL, GD_STORE_SHARED, GD_STORE_MEMORY, GD_STORE_STATIC, GD_STORE_CALLER } gd_store;
gd_store moxc__gd_store_kind(gd *g, CXCursor lvalue, CXCursor *root);
/* An array of the thread's or block's scratch named as a value (it
 * decays to its address): `local`, `s.arr`, `tile`; its address is fixed
 * however tainted its contents. */
bool moxc__gd_scratch_array(gd *g, CXCursor e);
/* Whether a store of that kind is the block's or thread's own scratch
 * (unguarded): a shared array or a caller's local through a parameter. */
static inline bool moxc__gd_scratch_store(gd_store kind) {
    return kind == GD_STORE_SHARED || kind == GD_STORE_CALLER;
}
bool moxc__gd_is_pointer(CXCursor e);
/* Whether `ref` is a pointer parameter, to non-const, of a helper walked
 * for a call (not of the kernel): every call passes the address of its
 * caller's scratch there (gate_defer_helper.c), and the helper may not
 * assign it. A parameter pointing to const may receive any address. */
bool moxc__gd_caller_scratch_param(gd *g, CXCursor ref);
/* What a unary operator does, told from types (its spelling is unknown
 * inside macros): &x, *p, ++/-- (prefix or postfix), or arithmetic. */
typedef enum { GD_UNARY_ADDRESS, GD_UNARY_DEREF, GD_UNARY_INCDEC, GD_UNARY_VALUE } gd_unary;
gd_unary moxc__gd_unary_kind(CXCursor e);

/* ---- calls (gate_defer_calls.c) ---- */
typedef enum {
    GD_CALL_PURE,       /* result tainted iff an argument is */
    GD_CALL_GEOMETRY,   /* indices and sizes: never tainted */
    GD_CALL_COLLECTIVE, /* barrier, warp operations: need converged control */
    GD_CALL_LOAD,       /* mox_atomic_load_*: a read */
    GD_CALL_EFFECT,     /* other atomics and mox_fail: guarded */
    GD_CALL_HELPER,     /* a helper that is not pure: walked for each call */
    GD_CALL_REFUSED     /* unknown */
} gd_call;
/* Classifies call expression `call`; for GD_CALL_REFUSED *why (malloc'd)
 * says why. */
gd_call moxc__gd_classify_call(gd *g, CXCursor call, char **why);
/* Whether `name` is a dialect atomic other than a load, or mox_fail. */
bool moxc__gd_is_effect_name(const char *name);

/* ---- helpers that are not pure (gate_defer_helper.c) ---- */
/* Walks the helper `call` calls as part of the kernel, with its
 * parameters as tainted as the call's arguments (evaluated here, once);
 * each pointer argument must be the address of the caller's local or
 * shared array. Returns whether its value may be tainted: an argument or
 * a returned value is. */
bool moxc__gd_walk_helper(gd *g, CXCursor call);

/* ---- text (gate_defer_text.c) ---- */
/* Byte range of `c` in the kernel source when it is written there (not
 * produced by a macro); false otherwise. */
bool moxc__gd_range(gd *g, CXCursor c, size_t *start, size_t *end);
/* Adds an edit replacing [at, at + skip) with `text` (taken). */
void moxc__gd_add_edit(gd *g, size_t at, size_t skip, char *text);
/* The edits of a guarded statement: an assignment `lhs op rhs` (rhs and
 * lhs not null), or a whole expression `e` run only when the gate is good
 * (as a statement), or an atomic call used as a value (`value` true). */
void moxc__gd_guard_store(gd *g, CXCursor e, CXCursor lhs, CXCursor rhs);
void moxc__gd_guard_stmt(gd *g, CXCursor e);
void moxc__gd_guard_value(gd *g, CXCursor call);
/* The renamed copy's signature edits; false (with a problem) when the
 * definition's text does not allow them. */
bool moxc__gd_signature(gd *g, moxc_gate_defer *out);

#endif
