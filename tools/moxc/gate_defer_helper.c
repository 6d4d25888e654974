/* gate_defer_helper.c - helpers that are not pure functions of their
 * arguments, followed into for each call (rules: gate_defer.c). A helper
 * may loop, read memory and write through its pointer parameters when
 * every call passes the address of the caller's own scratch: a local (or
 * a part of one), a local or MOX_SHARED array, or a pointer parameter of
 * the calling helper that is itself such an address; a parameter that
 * points to const may receive any pointer that does not depend on memory
 * (the helper only reads through it: a store through it, cast or passed
 * on, is a store to memory), and the helper may not assign a pointer
 * parameter. Its body is then
 * walked like the kernel's, with each parameter as tainted as the call's
 * argument; what it writes through a pointer parameter counts as the
 * caller's scratch (unguarded: the caller's local is tainted already, as
 * its address was taken). It may return under tainted control (the rest
 * of the helper is skipped, not the kernel's), but may not store to
 * memory, call an atomic or mox_fail (their text is shared with the
 * kernel's first copy and cannot be guarded), nor use a barrier or warp
 * operation. A particle's `advance(&p, config, 2)` is such a call. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

enum { HELPER_DEPTH_MAX = 8 };

/* Whether pointer argument `arg` is the address of the caller's scratch. */
static bool scratch_address(gd *g, CXCursor arg) {
    CXCursor a = moxc__strip_wrappers(arg, true);
    CXCursor root;
    enum CXCursorKind k = clang_getCursorKind(a);
    if (k == CXCursor_UnaryOperator && moxc__gd_unary_kind(a) == GD_UNARY_ADDRESS) {
        moxc__children ch;
        moxc__children_of(a, &ch);
        gd_store kind = ch.count == 1 ? moxc__gd_store_kind(g, ch.items[0], &root) : GD_STORE_MEMORY;
        moxc__children_free(&ch);
        return kind == GD_STORE_LOCAL || moxc__gd_scratch_store(kind);
    }
    if (moxc__gd_scratch_array(g, a)) /* a named array decays to its address */
        return true;
    if (k != CXCursor_DeclRefExpr)
        return false;
    /* a pointer parameter of the calling helper, passed on */
    return moxc__gd_caller_scratch_param(g, clang_getCursorReferenced(a));
}

/* Evaluates the arguments, taints each parameter whose argument is
 * tainted, and refuses a pointer argument that is not the caller's
 * scratch; returns whether any argument is tainted. */
static bool bind_arguments(gd *g, CXCursor call, CXCursor fn, const char *name) {
    moxc__children ch;
    moxc__children_of(call, &ch);
    int n = clang_Cursor_getNumArguments(fn);
    bool any = false;
    for (size_t i = 1; i < ch.count; i++) {
        CXCursor arg = ch.items[i];
        bool tainted = moxc__gd_eval_arg(g, arg);
        any |= tainted;
        if (i > (size_t)n)
            continue;
        CXCursor param = clang_Cursor_getArgument(fn, (unsigned)(i - 1));
        if (moxc__gd_is_pointer(param)) {
            /* through a pointer to const the helper only reads (eval_args
             * refused a tainted pointer) */
            CXType pointee = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(param)));
            if (!clang_isConstQualifiedType(pointee) && !scratch_address(g, arg)) {
                char *msg = moxc__printf("a pointer argument of '%s' that is not the address of a local or "
                                         "shared array (a helper may write only its caller's scratch)",
                                         name);
                moxc__gd_problem(g, moxc__cursor_loc(arg), msg ? msg : "a pointer argument");
                free(msg);
            }
        } else if (tainted) {
            moxc__gd_taint(g, param);
        }
    }
    moxc__children_free(&ch);
    return any;
}

bool moxc__gd_walk_helper(gd *g, CXCursor call) {
    CXCursor fn = clang_getCursorDefinition(clang_getCursorReferenced(call));
    CXCursor body = clang_Cursor_isNull(fn) ? fn : moxc__function_body(fn);
    if (clang_Cursor_isNull(body) || g->helper_depth >= HELPER_DEPTH_MAX) {
        moxc__gd_problem(g, moxc__cursor_loc(call), clang_Cursor_isNull(body)
                                                        ? "a call to a helper whose body the analysis cannot see"
                                                        : "helpers calling helpers too deep for the analysis");
        return true;
    }
    char *name = moxc__cxstr(clang_getCursorSpelling(fn));
    bool args = bind_arguments(g, call, fn, name ? name : "?");
    free(name);
    bool outer_result = g->helper_result;
    g->helper_result = false;
    g->helper_depth++;
    moxc__gd_stmt(g, body);
    g->helper_depth--;
    bool result = g->helper_result || args;
    g->helper_result = outer_result;
    return result;
}
