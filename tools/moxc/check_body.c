/* check_body.c - walks one function reachable from a kernel: records the
 * functions it calls and the device features it uses, and rejects what the
 * backends cannot run: calls through function pointers, taking a function's
 * address, calls to functions moxc cannot see, double precision, mutable
 * static storage, and misplaced MOX_SHARED. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

typedef struct body_walk {
    moxc__tu *t;
    size_t fn;
    bool is_kernel;
    int loop_depth;
    bool in_double; /* inside an expression already reported as double */
    uint64_t shared_bytes;   /* static shared memory (MOX_SHARED) of a kernel */
    uint64_t largest_bytes;  /* its largest array, for the message */
    char *largest;
} body_walk;

/* CUDA's limit on static shared memory per block (0xc000): above it ptxas
 * refuses the module, naming a generated entry instead of the source. */
#define MOXC_STATIC_SHARED_MAX 49152u

static void walk(body_walk *w, CXCursor c, bool callee);

static enum CXChildVisitResult walk_child(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    walk(data, c, false);
    return CXChildVisit_Continue;
}

static void walk_children(body_walk *w, CXCursor c) {
    clang_visitChildren(c, walk_child, w);
}

static moxc__fn *cur(body_walk *w) {
    return &w->t->fns[w->fn];
}

/* A double-typed constant (0.5, -1.0, (2.0)) that only exists to be
 * converted to another type at compile time. */
static bool is_double_constant(CXCursor c, int depth) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_FloatingLiteral || k == CXCursor_IntegerLiteral)
        return true;
    if (depth > 8 || (k != CXCursor_ParenExpr && k != CXCursor_UnaryOperator && k != CXCursor_UnexposedExpr))
        return false;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool yes = ch.count == 1 && is_double_constant(ch.items[0], depth + 1);
    moxc__children_free(&ch);
    return yes;
}


static void add_callee(body_walk *w, CXCursor def, CXCursor site) {
    size_t idx = moxc__fn_index(w->t, def, true);
    if (idx == MOXC_NO_FN)
        return;
    moxc__fn *f = cur(w);
    for (size_t i = 0; i < f->call_count; i++)
        if (f->calls[i].callee == idx)
            return;
    if (!moxc__grow(&f->calls, &f->call_cap, f->call_count + 1, sizeof *f->calls)) {
        moxc__error_at(w->t->front, moxc__cursor_loc(site), "out of memory");
        return;
    }
    f->calls[f->call_count].callee = idx;
    f->calls[f->call_count].site = site;
    f->call_count++;
}

/* Whether the call's callee is a _Generic selection (refused as a whole
 * by check_cxx_types.c: not also as a call through a pointer). */
static bool calls_generic(CXCursor call) {
    moxc__children ch;
    moxc__children_of(call, &ch);
    CXCursor callee = ch.count ? moxc__strip_wrappers(ch.items[0], true) : clang_getNullCursor();
    moxc__children_free(&ch);
    return clang_getCursorKind(callee) == CXCursor_GenericSelectionExpr;
}

static void walk_call(body_walk *w, CXCursor call) {
    moxc__front *fr = w->t->front;
    CXCursor ref = clang_getCursorReferenced(call);
    CXSourceLocation loc = moxc__cursor_loc(call);
    if (calls_generic(call)) {
        /* reported by check_cxx_types.c */
    } else if (clang_Cursor_isNull(ref) || clang_getCursorKind(ref) != CXCursor_FunctionDecl) {
        moxc__error_at(fr, loc, "calls through function pointers are not supported in kernels");
    } else {
        char *name = moxc__cxstr(clang_getCursorSpelling(ref));
        CXCursor def = clang_getCursorDefinition(ref);
        if (!name) {
            moxc__error_at(fr, loc, "out of memory");
        } else if (moxc__is_intrinsic(w->t, ref)) {
            cur(w)->direct_features |= moxc__intrinsic_features(name);
            int coop = moxc__intrinsic_coop(name);
            if (coop > cur(w)->coop_direct)
                cur(w)->coop_direct = coop;
        } else if (!clang_Cursor_isNull(def)) {
            add_callee(w, def, call);
        } else if (moxc__cuda_hint(name)) {
            moxc__error_at(fr, loc, "unknown function '%s' in a kernel; %s", name, moxc__cuda_hint(name));
        } else if (!moxc__is_math_function(name) && !moxc__starts_with(name, "__builtin_")) {
            moxc__error_at(fr, loc, "call to '%s' which has no definition visible to moxc", name);
        }
        free(name);
    }
    moxc__children ch;
    moxc__children_of(call, &ch);
    for (size_t i = 0; i < ch.count; i++)
        walk(w, ch.items[i], i == 0);
    moxc__children_free(&ch);
}

static void walk_decl_ref(body_walk *w, CXCursor c, bool callee) {
    moxc__front *fr = w->t->front;
    CXCursor ref = clang_getCursorReferenced(c);
    enum CXCursorKind rk = clang_getCursorKind(ref);
    if (rk == CXCursor_FunctionDecl && !callee) {
        char *name = moxc__cxstr(clang_getCursorSpelling(ref));
        moxc__error_at(fr, moxc__cursor_loc(c),
                       "taking the address of function '%s' is not supported in kernels (no function pointers)",
                       name ? name : "?");
        free(name);
        return;
    }
    if (rk != CXCursor_VarDecl || !clang_Cursor_hasVarDeclGlobalStorage(ref))
        return;
    CXCursor parent = clang_getCursorSemanticParent(ref);
    if (clang_getCursorKind(parent) != CXCursor_TranslationUnit)
        return; /* static locals are checked where they are declared */
    CXFile file;
    moxc__expansion(moxc__cursor_loc(ref), &file, NULL, NULL, NULL);
    if (file && w->t->main_file && clang_File_isEqual(file, w->t->main_file))
        return; /* reported by the file-scope check */
    char *shared = moxc__annotation(ref, "mox_shared");
    if (!shared && !moxc__is_const_object(clang_getCursorType(ref))) {
        char *name = moxc__cxstr(clang_getCursorSpelling(ref));
        char *where = moxc__where(moxc__cursor_loc(ref));
        moxc__error_at(fr, moxc__cursor_loc(c),
                       "file-scope mutable variables are not supported in kernel sources: '%s' (declared at %s)",
                       name ? name : "?", where ? where : "?");
        free(where);
        free(name);
    }
    free(shared);
}

static void walk_var(body_walk *w, CXCursor c) {
    moxc__front *fr = w->t->front;
    CXType type = clang_getCursorType(c);
    cur(w)->direct_features |= moxc__type_features(type, true);
    char *shared = moxc__annotation(c, "mox_shared");
    char *name = moxc__cxstr(clang_getCursorSpelling(c));
    if (shared) {
        /* only the kernel owns block memory, allocated once per block */
        bool dynamic = strcmp(shared, "mox_shared_dynamic") == 0;
        const char *macro = dynamic ? "MOX_SHARED_DYNAMIC" : "MOX_SHARED";
        if (!w->is_kernel)
            moxc__error_at(fr, moxc__cursor_loc(c), "%s '%s' must be declared in a kernel body, not in a helper function",
                           macro, name ? name : "?");
        else if (w->loop_depth > 0)
            moxc__error_at(fr, moxc__cursor_loc(c),
                           "%s '%s' must not be declared inside a loop; declare it at the top of the kernel", macro,
                           name ? name : "?");
        cur(w)->direct_features |= MOX_KFEAT_SHARED | (dynamic ? MOX_KFEAT_DYNAMIC_SHARED : 0u);
        long long size = dynamic ? -1 : clang_Type_getSizeOf(type);
        if (size > 0 && w->is_kernel) {
            w->shared_bytes += (uint64_t)size;
            if ((uint64_t)size > w->largest_bytes && name) {
                w->largest_bytes = (uint64_t)size;
                free(w->largest);
                w->largest = moxc__strdup(name);
            }
        }
    } else if (clang_Cursor_getStorageClass(c) == CX_SC_Static && !moxc__is_const_object(type)) {
        moxc__error_at(fr, moxc__cursor_loc(c),
                       "static local variable '%s' is not supported in kernels; use MOX_SHARED for block-shared memory",
                       name ? name : "?");
    }
    free(name);
    free(shared);
}

/* A call of a function moxc has a dialect equivalent for (sqrt: sqrtf), or
 * an expression whose only doubles are such calls (sqrt(x) + fabs(y)):
 * walk_call names the float function, which is the one error to give. */
static bool is_hinted_call(CXCursor c, int depth) {
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CallExpr) {
        CXCursor ref = clang_getCursorReferenced(c);
        char *name = clang_Cursor_isNull(ref) ? NULL : moxc__cxstr(clang_getCursorSpelling(ref));
        bool yes = name && clang_Cursor_isNull(clang_getCursorDefinition(ref)) && moxc__cuda_hint(name);
        free(name);
        return yes;
    }
    if (depth > 16 || (k != CXCursor_ParenExpr && k != CXCursor_UnexposedExpr && k != CXCursor_BinaryOperator &&
                       k != CXCursor_UnaryOperator && k != CXCursor_ConditionalOperator))
        return false;
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool any = false, all = true;
    for (size_t i = 0; i < ch.count && all; i++) {
        if (!moxc__involves_double(clang_getCursorType(ch.items[i])))
            continue;
        any = true;
        all = is_hinted_call(ch.items[i], depth + 1);
    }
    moxc__children_free(&ch);
    return any && all;
}

static void walk(body_walk *w, CXCursor c, bool callee) {
    enum CXCursorKind k = clang_getCursorKind(c);
    bool typed = clang_isExpression(k) || k == CXCursor_VarDecl || k == CXCursor_ParmDecl;
    bool saved_double = w->in_double;
    if (typed) {
        CXType type = clang_getCursorType(c);
        if (!w->in_double && moxc__involves_double(type)) {
            /* sqrt(x): walk_call names the float function, one error; a
             * kernel's parameter: its type's error (parse_params.c) */
            if (!is_hinted_call(c, 0) && !(k == CXCursor_ParmDecl && w->is_kernel))
                moxc__error_at(w->t->front, moxc__cursor_loc(c),
                               "double precision is not supported in kernels (use float and 'f' literals)");
            w->in_double = true;
        }
        cur(w)->direct_features |= moxc__type_features(type, k == CXCursor_ParmDecl);
        /* (float)0.5 and float x = 0.5: a constant converted at compile time */
        if ((k == CXCursor_UnexposedExpr || k == CXCursor_CStyleCastExpr) &&
            !moxc__involves_double(type)) {
            moxc__children ch;
            moxc__children_of(c, &ch);
            bool constant = ch.count >= 1 && is_double_constant(ch.items[ch.count - 1], 0) &&
                            moxc__involves_double(clang_getCursorType(ch.items[ch.count - 1]));
            moxc__children_free(&ch);
            if (constant)
                return;
        }
    }
    switch (k) {
    case CXCursor_CallExpr:
        walk_call(w, c);
        break;
    case CXCursor_GenericSelectionExpr:
        break; /* refused as a whole (check_cxx_types.c): not its parts too */
    case CXCursor_DeclRefExpr:
        walk_decl_ref(w, c, callee);
        break;
    case CXCursor_VarDecl:
        walk_var(w, c);
        walk_children(w, c);
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        w->loop_depth++;
        walk_children(w, c);
        w->loop_depth--;
        break;
    case CXCursor_UnexposedExpr:
    case CXCursor_ParenExpr:
        /* implicit conversions and parentheses keep callee position */
        {
            moxc__children ch;
            moxc__children_of(c, &ch);
            for (size_t i = 0; i < ch.count; i++)
                walk(w, ch.items[i], callee);
            moxc__children_free(&ch);
        }
        break;
    default:
        walk_children(w, c);
        break;
    }
    w->in_double = saved_double;
}

void moxc__check_body(moxc__tu *t, size_t fn) {
    body_walk w = {t, fn, t->fns[fn].is_kernel, 0, false, 0, 0, NULL};
    CXCursor c = t->fns[fn].cursor;
    CXType result = clang_getResultType(clang_getCursorType(c));
    if (moxc__involves_double(result))
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "double precision is not supported in kernels (function '%s' returns double)",
                       t->fns[fn].name);
    t->fns[fn].direct_features |= moxc__type_features(result, true);
    walk_children(&w, c);
    if (w.shared_bytes > MOXC_STATIC_SHARED_MAX)
        moxc__error_at(t->front, moxc__cursor_loc(c),
                       "kernel '%s' has %llu bytes of static shared memory (the largest, MOX_SHARED '%s', "
                       "%llu); CUDA allows at most %u bytes per block: use MOX_SHARED_DYNAMIC for more "
                       "(kernel-language.md, \"Dynamic shared memory\")",
                       t->fns[fn].name, (unsigned long long)w.shared_bytes, w.largest ? w.largest : "?",
                       (unsigned long long)w.largest_bytes, MOXC_STATIC_SHARED_MAX);
    free(w.largest);
}
