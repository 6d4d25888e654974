/* check_uniform.h - state shared by the uniform-participation analysis
 * (check_uniform.c: state, driver; check_uniform_stmt.c: statements;
 * check_uniform_expr.c: expressions and calls). See check_uniform.c for the
 * rules. */
#ifndef MOXC_CHECK_UNIFORM_H
#define MOXC_CHECK_UNIFORM_H

#include "front_internal.h"

/* Why a value or a point of control flow is not uniform, kept so that the
 * error can name the real cause (check_uniform_why.c): the expression a
 * variable got its value from, the condition controlling an assignment or
 * an early exit, a local whose address is taken, a local array. */
typedef enum { UWHY_NONE, UWHY_EXPR, UWHY_CONTROL, UWHY_ADDRESS, UWHY_ARRAY } uwhy_kind;
typedef struct uwhy {
    uwhy_kind kind;
    CXCursor expr;        /* EXPR: the value; CONTROL: the condition; ADDRESS/ARRAY: the variable */
    CXSourceLocation loc; /* CONTROL: where the condition is */
    size_t fn;            /* the function `expr` belongs to */
} uwhy;

typedef struct uvar {
    CXCursor decl;
    int level;
    uwhy why;
} uvar;

/* A loop or switch that some threads leave early. */
typedef struct udiv {
    CXCursor stmt;
    int level;
    CXSourceLocation loc;
    uwhy why;
} udiv;

typedef struct ufn {
    uvar *vars;
    size_t var_count, var_cap;
    CXCursor *params;
    int *param_levels;
    uwhy *param_whys; /* the least uniform argument at some call site */
    size_t param_count;
    int ret;
    uwhy ret_why;
    udiv *divs;
    size_t div_count, div_cap;
    int whole; /* a goto under varying control: the whole function diverges */
    CXSourceLocation whole_loc;
    uwhy whole_why;
} ufn;

/* A shared-memory read already judged (check_uniform_shared.c). */
typedef struct ushared_memo {
    CXCursor read;
    bool uniform;
} ushared_memo;

typedef struct uanalysis {
    moxc__tu *t;
    ufn *fns;
    bool changed;
    bool oom;
    ushared_memo *memo;
    size_t memo_count, memo_cap;
} uanalysis;

typedef struct uctrl {
    int level;
    CXSourceLocation loc;
    CXCursor cond; /* the controlling expression (null for a loop's own header pass) */
} uctrl;

typedef struct uwalk {
    uanalysis *a;
    size_t fn;
    bool report;
    uctrl *ctrl;
    size_t ctrl_count, ctrl_cap;
    int after_return;
    CXSourceLocation after_loc;
    uwhy after_why;
    CXCursor *scopes; /* enclosing loops and switches, innermost last */
    bool *is_switch;
    size_t scope_count, scope_cap;
} uwalk;


static inline int max_level(int a, int b) {
    return a > b ? a : b;
}

static inline ufn *ucur(uwalk *w) {
    return &w->a->fns[w->fn];
}

uvar *moxc__u_find_var(ufn *f, CXCursor decl);
void moxc__u_raise_var(uwalk *w, CXCursor decl, int level, uwhy why);
/* The innermost reason the current point is not reached by every
 * participant, above `tolerance`: its level (MOXC_UNIFORM when none), its
 * place and its cause (why may be NULL). */
int moxc__u_ctrl_exceeding(uwalk *w, int tolerance, CXSourceLocation *loc, uwhy *why);
int moxc__u_ctrl_level(uwalk *w, CXSourceLocation *loc, uwhy *why);
void moxc__u_push_ctrl(uwalk *w, int level, CXSourceLocation loc, CXCursor cond);
/* The cause "expression `e` of the current function". */
uwhy moxc__u_why_expr(uwalk *w, CXCursor e, uwhy_kind kind);
/* The level and cause of a value assigned here: the value's own, or the
 * control flow around the assignment when that is less uniform. */
uwhy moxc__u_assigned_why(uwalk *w, int level, CXCursor value, int *out_level);
void moxc__u_pop_ctrl(uwalk *w);
/* Marks loop or switch `stmt` as left early by some threads (level, place
 * and cause of the exit); the analysis changed when it rises. */
void moxc__u_mark_div(uwalk *w, CXCursor stmt, int level, CXSourceLocation loc, uwhy why);
/* Enters loop or switch `stmt` (w->scope_count-- leaves it); false on out
 * of memory. */
bool moxc__u_push_scope(uwalk *w, CXCursor stmt, bool is_switch);
bool moxc__u_is_local(CXCursor decl);
bool moxc__u_is_array_type(CXType t);
/* Level of an expression, recording its assignments and checking its calls. */
/* The reason text for a cause of level `level` (check_uniform_why.c):
 * "the thread index (mox_thread_idx() at f.c:4) through 'i'", malloc'd. */
char *moxc__u_explain(uanalysis *a, const uwhy *why, int level);
/* What read_decl and intrinsic_level say, for the explanation. */
int moxc__u_read_decl(uwalk *w, CXCursor ref);
int moxc__u_intrinsic_level(const char *name, int args);
/* Whether the read `read` (a subscript of MOX_SHARED array `decl` in the
 * function whose definition is `fn_def`) gives every thread the same value
 * when its index is uniform; otherwise *why_not (may be NULL) gets a
 * malloc'd reason. */
bool moxc__u_shared_read_uniform(moxc__tu *t, CXCursor fn_def, CXCursor decl, CXCursor read, char **why_not);
/* Whether `decl` is a MOX_TABLE parameter (read-only during the launch). */
bool moxc__u_is_table(CXCursor decl);
int moxc__u_eval(uwalk *w, CXCursor e);
int moxc__u_eval_children(uwalk *w, CXCursor e);
void moxc__u_stmt(uwalk *w, CXCursor s);

#endif
