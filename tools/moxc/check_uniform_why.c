/* check_uniform_why.c - the reason in a uniform-participation error. The
 * analysis (check_uniform*.c) remembers, for every variable, parameter,
 * result and early exit that is not uniform, the expression or condition
 * it came from; here that trail is followed from the condition at fault to
 * its root - the thread or lane index, a warp-level value, a load from
 * shared memory or a buffer, an atomic, a call moxc cannot see into - and
 * the variables on the way are listed: "the thread index (mox_thread_idx()
 * at k.c:4) through 'go', 'i'". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <stdlib.h>
#include <string.h>

#include "check_uniform.h"

#define MAX_HOPS 24

typedef struct explain {
    uanalysis *a;
    int target;           /* the level being explained */
    char *hops[MAX_HOPS]; /* the trail, condition first */
    size_t hop_count;
    CXCursor seen[MAX_HOPS * 2];
    size_t seen_count;
} explain;

static char *root_of(explain *x, size_t fn, CXCursor e, int depth);

static void add_hop(explain *x, char *hop) {
    if (hop && x->hop_count < MAX_HOPS)
        x->hops[x->hop_count++] = hop;
    else
        free(hop);
}

static bool first_visit(explain *x, CXCursor decl) {
    for (size_t i = 0; i < x->seen_count; i++)
        if (clang_equalCursors(x->seen[i], decl))
            return false;
    if (x->seen_count < sizeof x->seen / sizeof x->seen[0])
        x->seen[x->seen_count++] = decl;
    return true;
}

static char *name_of(CXCursor c) {
    char *n = moxc__cxstr(clang_getCursorSpelling(c));
    return n ? n : moxc__strdup("?");
}

static uwalk walk_at(uanalysis *a, size_t fn) {
    uwalk w;
    memset(&w, 0, sizeof w);
    w.a = a;
    w.fn = fn;
    return w;
}

/* Follows a remembered cause (another function's, possibly). */
static char *root_of_why(explain *x, const uwhy *why, int depth) {
    if (depth > MAX_HOPS || why->kind == UWHY_NONE || clang_Cursor_isNull(why->expr))
        return NULL;
    if (why->kind == UWHY_ADDRESS || why->kind == UWHY_ARRAY) {
        CXCursor v = why->expr;
        if (clang_getCursorKind(v) != CXCursor_VarDecl)
            v = clang_getCursorReferenced(moxc__strip_parens(v));
        char *name = name_of(v), *where = moxc__where(why->loc);
        char *text = why->kind == UWHY_ADDRESS
                         ? moxc__printf("'%s', whose address is taken at %s (moxc does not follow pointers)",
                                        name, where ? where : "?")
                         : moxc__printf("the local array '%s' (moxc does not track array elements)", name);
        free(name);
        free(where);
        return text;
    }
    return root_of(x, why->fn, why->expr, depth + 1);
}

/* A variable or parameter whose level reaches the target. */
static char *root_of_decl(explain *x, size_t fn, CXCursor ref, int depth) {
    ufn *f = &x->a->fns[fn];
    uvar *v = moxc__u_find_var(f, ref);
    if (!first_visit(x, ref))
        return NULL;
    char *name = name_of(ref);
    if (v && v->level >= x->target) {
        char *text = root_of_why(x, &v->why, depth);
        if (text) {
            /* an address taken or an array is itself the root, named already */
            bool root = v->why.kind == UWHY_ADDRESS || v->why.kind == UWHY_ARRAY;
            char *where = v->why.kind == UWHY_CONTROL ? moxc__where(v->why.loc) : NULL;
            if (!root)
                add_hop(x, where ? moxc__printf("'%s' (assigned under control flow at %s)", name, where)
                                 : moxc__printf("'%s'", name));
            free(where);
            free(name);
            return text;
        }
    }
    for (size_t i = 0; i < f->param_count; i++) {
        if (!clang_equalCursors(f->params[i], ref) || f->param_levels[i] < x->target)
            continue;
        char *text = root_of_why(x, &f->param_whys[i], depth);
        if (text) {
            add_hop(x, moxc__printf("parameter '%s' of '%s'", name, x->a->t->fns[fn].name));
            free(name);
            return text;
        }
    }
    free(name);
    return NULL;
}

/* The variable under implicit conversions and parentheses, or null. */
static CXCursor base_decl(CXCursor base) {
    CXCursor b = moxc__strip_parens(base);
    for (int guard = 0; guard < 16 && clang_getCursorKind(b) == CXCursor_UnexposedExpr; guard++) {
        moxc__children ch;
        moxc__children_of(b, &ch);
        CXCursor next = ch.count == 1 ? moxc__strip_parens(ch.items[0]) : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(next))
            break;
        b = next;
    }
    return clang_getCursorKind(b) == CXCursor_DeclRefExpr ? clang_getCursorReferenced(b) : clang_getNullCursor();
}

/* "a value read from shared memory 'tile' (at k.c:9)" and the like. */
static char *memory_read(explain *x, size_t fn, CXCursor read, CXCursor decl, const char *where) {
    if (clang_Cursor_isNull(decl))
        return moxc__printf("a value read from memory (at %s)", where);
    char *name = name_of(decl), *shared = moxc__is_shared_array(decl) ? moxc__strdup("") : NULL, *text;
    char *why_not = NULL;
    if (shared && !moxc__u_shared_read_uniform(x->a->t, x->a->t->fns[fn].cursor, decl, read, &why_not))
        text = moxc__printf("a value read from shared memory '%s' (at %s), which moxc cannot prove every "
                            "thread reads alike: %s", name, where, why_not);
    else if (shared)
        text = moxc__printf("a value read from shared memory '%s' (at %s)", name, where);
    else if (clang_getCursorKind(decl) == CXCursor_ParmDecl)
        text = moxc__printf("a value read from buffer '%s' (at %s)", name, where);
    else if (moxc__u_is_array_type(clang_getCursorType(decl)))
        text = moxc__printf("an element of the local array '%s' (at %s)", name, where);
    else
        text = moxc__printf("a value read through pointer '%s' (at %s)", name, where);
    free(why_not);
    free(shared);
    free(name);
    return text;
}

/* What a call contributes: a dialect source of variation, a helper's
 * result, a call moxc cannot see into, or (pure functions) its arguments. */
static char *root_of_call(explain *x, size_t fn, CXCursor call, int depth) {
    moxc__tu *t = x->a->t;
    CXCursor ref = clang_getCursorReferenced(call);
    char *name = clang_Cursor_isNull(ref) ? NULL : name_of(ref);
    char *where = moxc__where(moxc__cursor_loc(call));
    char *text = NULL;
    bool args = false;
    if (!name) {
        text = moxc__printf("a call through a pointer (at %s)", where ? where : "?");
    } else if (moxc__is_intrinsic(t, ref)) {
        int level = moxc__u_intrinsic_level(name, MOXC_UNIFORM);
        if (level < x->target)
            args = true;
        else if (strcmp(name, "mox_thread_idx") == 0)
            text = moxc__printf("the thread index (mox_thread_idx() at %s)", where);
        else if (strcmp(name, "mox_lane_id") == 0)
            text = moxc__printf("the lane index (mox_lane_id() at %s)", where);
        else if (strcmp(name, "mox_warp_id") == 0)
            text = moxc__printf("the warp index (mox_warp_id() at %s), which is the same only within a warp", where);
        else if (level == MOXC_WARP_UNIFORM)
            text = moxc__printf("the warp-wide result of %s (at %s), which is the same only within a warp", name,
                                where);
        else if (moxc__starts_with(name, "mox_atomic_"))
            text = moxc__printf("the result of %s (at %s), which differs between threads", name, where);
        else if (moxc__starts_with(name, "mox_warp_"))
            text = moxc__printf("the per-lane result of %s (at %s)", name, where);
        else
            text = moxc__printf("the result of %s (at %s)", name, where);
    } else {
        CXCursor def = clang_getCursorDefinition(ref);
        size_t j = clang_Cursor_isNull(def) ? MOXC_NO_FN : moxc__fn_index(t, def, false);
        if (j != MOXC_NO_FN && x->a->fns[j].ret >= x->target) {
            text = root_of_why(x, &x->a->fns[j].ret_why, depth);
            if (text)
                add_hop(x, moxc__printf("the result of '%s'", name));
        } else if (j != MOXC_NO_FN || moxc__is_math_function(name) || moxc__starts_with(name, "__builtin_")) {
            args = true;
        } else {
            text = moxc__printf("the result of '%s' (at %s), which moxc cannot see into", name, where);
        }
    }
    if (args) {
        moxc__children ch;
        moxc__children_of(call, &ch);
        for (size_t i = 1; i < ch.count && !text; i++)
            text = root_of(x, fn, ch.items[i], depth + 1);
        moxc__children_free(&ch);
    }
    free(name);
    free(where);
    return text;
}

static char *root_of(explain *x, size_t fn, CXCursor e, int depth) {
    if (depth > MAX_HOPS * 4 || clang_Cursor_isNull(e))
        return NULL;
    enum CXCursorKind k = clang_getCursorKind(e);
    if (k == CXCursor_DeclRefExpr) {
        CXCursor ref = clang_getCursorReferenced(e);
        uwalk w = walk_at(x->a, fn);
        if (moxc__u_read_decl(&w, ref) < x->target)
            return NULL;
        enum CXCursorKind rk = clang_getCursorKind(ref);
        if (rk == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(ref)) {
            char *name = name_of(ref);
            char *text = moxc__printf("the mutable variable '%s'", name);
            free(name);
            return text;
        }
        return root_of_decl(x, fn, ref, depth);
    }
    if (k == CXCursor_CallExpr)
        return root_of_call(x, fn, e, depth);
    moxc__children ch;
    moxc__children_of(e, &ch);
    char *text = NULL;
    char *where = moxc__where(moxc__cursor_loc(e));
    bool pointer_base = ch.count >= 1 &&
                        clang_getCanonicalType(clang_getCursorType(ch.items[0])).kind == CXType_Pointer;
    if (k == CXCursor_ArraySubscriptExpr && ch.count >= 1) {
        CXCursor decl = base_decl(ch.items[0]);
        bool table = !clang_Cursor_isNull(decl) && clang_getCursorKind(decl) == CXCursor_VarDecl &&
                     clang_Cursor_hasVarDeclGlobalStorage(decl) && moxc__u_is_array_type(clang_getCursorType(decl)) &&
                     moxc__is_const_object(clang_getCursorType(decl));
        table = table || (!clang_Cursor_isNull(decl) && moxc__u_is_table(decl));
        char *shared = table || clang_Cursor_isNull(decl) || !moxc__is_shared_array(decl) ? NULL : moxc__strdup("");
        if (shared)
            table = moxc__u_shared_read_uniform(x->a->t, x->a->t->fns[fn].cursor, decl, e, NULL);
        free(shared);
        /* a const table (or shared memory proven still) is uniform where its
         * index is: the index is the reason */
        for (size_t i = 1; table && i < ch.count && !text; i++)
            text = root_of(x, fn, ch.items[i], depth + 1);
        if (!table)
            text = memory_read(x, fn, e, decl, where ? where : "?");
    } else if ((k == CXCursor_MemberRefExpr || k == CXCursor_UnaryOperator) && pointer_base) {
        text = moxc__printf("a value read through a pointer (at %s)", where);
    } else if (k == CXCursor_StmtExpr) {
        text = moxc__printf("a statement expression (at %s)", where);
    } else {
        /* a direct cause in the expression reads better than one reached
         * through a variable: look at the variables last */
        for (int pass = 0; pass < 2 && !text; pass++)
            for (size_t i = 0; i < ch.count && !text; i++)
                if (clang_isExpression(clang_getCursorKind(ch.items[i])) &&
                    clang_Cursor_isNull(base_decl(ch.items[i])) == (pass == 0))
                    text = root_of(x, fn, ch.items[i], depth + 1);
    }
    free(where);
    moxc__children_free(&ch);
    return text;
}

char *moxc__u_explain(uanalysis *a, const uwhy *why, int level) {
    explain x;
    memset(&x, 0, sizeof x);
    x.a = a;
    x.target = level;
    char *root = root_of_why(&x, why, 0);
    char *text = root;
    if (root && x.hop_count) {
        /* hops were added innermost (nearest the root) first; a root
         * ending in a ", which ..." clause needs a comma before "through" */
        text = moxc__printf("%s%s through ", root, strstr(root, ", which ") ? "," : "");
        for (size_t i = x.hop_count; text && i-- > 0;) {
            char *next = moxc__printf("%s%s%s", text, x.hops[i], i ? ", " : "");
            free(text);
            text = next;
        }
        free(root);
    }
    for (size_t i = 0; i < x.hop_count; i++)
        free(x.hops[i]);
    return text;
}
