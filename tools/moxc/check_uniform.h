/* check_uniform.h - state shared by the uniform-participation analysis
 * (check_uniform.c: state, statements, driver; check_uniform_expr.c:
 * expressions and calls). See check_uniform.c for the rules. */
#ifndef MOXC_CHECK_UNIFORM_H
#define MOXC_CHECK_UNIFORM_H

#include "front_internal.h"

typedef struct uvar {
    CXCursor decl;
    int level;
} uvar;

/* A loop or switch that some threads leave early. */
typedef struct udiv {
    CXCursor stmt;
    int level;
    CXSourceLocation loc;
} udiv;

typedef struct ufn {
    uvar *vars;
    size_t var_count, var_cap;
    CXCursor *params;
    int *param_levels;
    size_t param_count;
    int ret;
    udiv *divs;
    size_t div_count, div_cap;
    int whole; /* a goto under varying control: the whole function diverges */
    CXSourceLocation whole_loc;
} ufn;

typedef struct uanalysis {
    moxc__tu *t;
    ufn *fns;
    bool changed;
    bool oom;
} uanalysis;

typedef struct uctrl {
    int level;
    CXSourceLocation loc;
} uctrl;

typedef struct uwalk {
    uanalysis *a;
    size_t fn;
    bool report;
    uctrl *ctrl;
    size_t ctrl_count, ctrl_cap;
    int after_return;
    CXSourceLocation after_loc;
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
void moxc__u_raise_var(uwalk *w, CXCursor decl, int level);
/* The innermost reason the current point is not reached by every
 * participant, above `tolerance`: its level (MOXC_UNIFORM when none). */
int moxc__u_ctrl_exceeding(uwalk *w, int tolerance, CXSourceLocation *loc);
int moxc__u_ctrl_level(uwalk *w, CXSourceLocation *loc);
void moxc__u_push_ctrl(uwalk *w, int level, CXSourceLocation loc);
void moxc__u_pop_ctrl(uwalk *w);
bool moxc__u_is_local(CXCursor decl);
bool moxc__u_is_array_type(CXType t);
/* Level of an expression, recording its assignments and checking its calls. */
int moxc__u_eval(uwalk *w, CXCursor e);
int moxc__u_eval_children(uwalk *w, CXCursor e);
void moxc__u_stmt(uwalk *w, CXCursor s);

#endif
