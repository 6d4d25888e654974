/* check_uniform_shared.c - when a read of block-shared memory is uniform.
 * Every thread of a block that reads the same MOX_SHARED element between
 * the same two barriers, with no thread writing that array in between,
 * gets the same value: the common "thread 0 stores a bound, barrier, every
 * thread loops to it" pattern. moxc proves it syntactically, and
 * conservatively:
 *
 *   - the array is only ever used as `name[i]...` in the kernel's body
 *     (passing it or its address anywhere - a helper, an atomic - makes
 *     every read varying);
 *   - for every write W of the array, W and the read R sit in two different
 *     statements of one block of statements C, with a `mox_barrier();`
 *     statement of C between them;
 *   - C is not inside a loop, or C is a loop's body and a barrier of C also
 *     separates R from W the other way round (the next iteration's W).
 *
 * The read's level is then its index's level (check_uniform_expr.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf */
#endif
#include <stdlib.h>
#include <string.h>

#include "check_uniform.h"

typedef struct upath {
    CXCursor *items; /* from the function body down to the node */
    size_t count;
} upath;

typedef struct ushared_walk {
    CXTranslationUnit tu;
    CXCursor decl, read;
    CXCursor *stack;
    size_t depth, cap;
    upath *uses;
    size_t use_count, use_cap;
    upath read_path;
    bool oom;
} ushared_walk;

static bool copy_path(ushared_walk *s, upath *out) {
    out->items = malloc(s->depth * sizeof *out->items);
    if (!out->items)
        return false;
    memcpy(out->items, s->stack, s->depth * sizeof *out->items);
    out->count = s->depth;
    return true;
}

static void walk(ushared_walk *s, CXCursor c, int guard) {
    if (s->oom || guard > 512)
        return;
    if (!moxc__grow(&s->stack, &s->cap, s->depth + 1, sizeof *s->stack)) {
        s->oom = true;
        return;
    }
    s->stack[s->depth++] = c;
    if (clang_equalCursors(c, s->read) && !s->read_path.items && !copy_path(s, &s->read_path))
        s->oom = true;
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr &&
        clang_equalCursors(clang_getCursorReferenced(c), s->decl)) {
        if (!moxc__grow(&s->uses, &s->use_cap, s->use_count + 1, sizeof *s->uses) ||
            !copy_path(s, &s->uses[s->use_count]))
            s->oom = true;
        else
            s->use_count++;
    }
    moxc__children ch;
    moxc__children_of(c, &ch);
    for (size_t i = 0; i < ch.count; i++)
        walk(s, ch.items[i], guard + 1);
    moxc__children_free(&ch);
    s->depth--;
}

static bool is_wrapper(CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    return k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr;
}

static bool first_child_is(CXCursor parent, CXCursor child) {
    moxc__children ch;
    moxc__children_of(parent, &ch);
    bool yes = ch.count >= 1 && clang_equalCursors(ch.items[0], child);
    moxc__children_free(&ch);
    return yes;
}

enum { USE_READ, USE_WRITE, USE_ESCAPE };

/* How a use (a path ending at the array's DeclRefExpr) touches the array;
 * *at gets the index of the outermost lvalue on the path. */
static int classify(CXTranslationUnit tu, const upath *p, size_t *at) {
    size_t i = p->count - 1;
    while (i > 0 && is_wrapper(p->items[i - 1]))
        i--; /* the decay to a pointer */
    if (i == 0 || clang_getCursorKind(p->items[i - 1]) != CXCursor_ArraySubscriptExpr ||
        !first_child_is(p->items[i - 1], p->items[i]))
        return USE_ESCAPE;
    i--;
    /* s[i].m[j]: climb to the whole lvalue */
    for (;;) {
        size_t j = i;
        while (j > 0 && clang_getCursorKind(p->items[j - 1]) == CXCursor_ParenExpr)
            j--;
        if (j == 0)
            break;
        enum CXCursorKind k = clang_getCursorKind(p->items[j - 1]);
        bool member = k == CXCursor_MemberRefExpr && first_child_is(p->items[j - 1], p->items[j]);
        bool subscript = false;
        if (k == CXCursor_UnexposedExpr && j >= 2 &&
            clang_getCursorKind(p->items[j - 2]) == CXCursor_ArraySubscriptExpr &&
            first_child_is(p->items[j - 2], p->items[j - 1]) &&
            clang_getCanonicalType(clang_getCursorType(p->items[j])).kind == CXType_ConstantArray) {
            subscript = true;
            j--; /* the decay of the member array */
        }
        if (!member && !subscript)
            break;
        i = j - 1;
    }
    *at = i;
    if (i == 0)
        return USE_ESCAPE;
    CXCursor parent = p->items[i - 1];
    enum CXCursorKind pk = clang_getCursorKind(parent);
    if (pk == CXCursor_UnexposedExpr)
        return clang_getCanonicalType(clang_getCursorType(parent)).kind == CXType_Pointer ? USE_ESCAPE
                                                                                          : USE_READ;
    if (!first_child_is(parent, p->items[i]))
        return USE_ESCAPE;
    if (pk == CXCursor_CompoundAssignOperator)
        return USE_WRITE;
    if (pk == CXCursor_UnaryOperator)
        return clang_getCanonicalType(clang_getCursorType(parent)).kind == CXType_Pointer ? USE_ESCAPE
                                                                                          : USE_WRITE;
    if (pk == CXCursor_BinaryOperator) {
        moxc__children ch;
        moxc__children_of(parent, &ch);
        char op[8] = "";
        if (ch.count == 2)
            moxc__binary_op(tu, ch.items[0], ch.items[1], op, sizeof op);
        moxc__children_free(&ch);
        return op[0] == '\0' || strcmp(op, "=") == 0 ? USE_WRITE : USE_ESCAPE;
    }
    return USE_ESCAPE;
}

/* A statement that is exactly `mox_barrier();`. */
static bool is_barrier_stmt(CXCursor c) {
    while (is_wrapper(c)) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        CXCursor next = ch.count == 1 ? ch.items[0] : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(next))
            return false;
        c = next;
    }
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return false;
    char *name = moxc__cxstr(clang_getCursorSpelling(clang_getCursorReferenced(c)));
    bool yes = name && strcmp(name, "mox_barrier") == 0;
    free(name);
    return yes;
}

static bool is_loop(CXCursor c) {
    enum CXCursorKind k = clang_getCursorKind(c);
    return k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt;
}

#define START ((size_t)-1) /* before the first child */

/* Whether a barrier statement of `block` lies strictly between children a
 * and b (a == START: from the first child; b past the end: to the last). */
static bool barrier_between(CXCursor block, size_t a, size_t b) {
    moxc__children ch;
    moxc__children_of(block, &ch);
    bool found = false;
    for (size_t i = a == START ? 0 : a + 1; i < b && i < ch.count && !found; i++)
        found = is_barrier_stmt(ch.items[i]);
    moxc__children_free(&ch);
    return found;
}

static size_t child_index(CXCursor block, CXCursor child) {
    moxc__children ch;
    moxc__children_of(block, &ch);
    size_t at = (size_t)-1;
    for (size_t i = 0; i < ch.count; i++)
        if (clang_equalCursors(ch.items[i], child))
            at = i;
    moxc__children_free(&ch);
    return at;
}

/* Whether barriers separate the write (path w) from the read (path r). */
static bool separated(const upath *w, const upath *r) {
    size_t common = 0;
    while (common < w->count && common < r->count && clang_equalCursors(w->items[common], r->items[common]))
        common++;
    if (common == 0 || common >= w->count || common >= r->count)
        return false;
    CXCursor block = w->items[common - 1];
    if (clang_getCursorKind(block) != CXCursor_CompoundStmt)
        return false;
    size_t iw = child_index(block, w->items[common]), ir = child_index(block, r->items[common]);
    if (iw == (size_t)-1 || ir == (size_t)-1 || iw == ir)
        return false;
    size_t lo = iw < ir ? iw : ir, hi = iw < ir ? ir : iw;
    if (!barrier_between(block, lo, hi))
        return false;
    size_t loops = 0;
    for (size_t i = 0; i + 1 < common; i++)
        loops += is_loop(w->items[i]);
    if (loops == 0)
        return true;
    /* the loop's body itself: the way round must be separated too */
    if (loops == 1 && common >= 2 && is_loop(w->items[common - 2]))
        return barrier_between(block, hi, START) || barrier_between(block, START, lo);
    return false;
}

bool moxc__u_shared_read_uniform(moxc__tu *t, CXCursor body, CXCursor decl, CXCursor read, char **why_not) {
    ushared_walk s;
    memset(&s, 0, sizeof s);
    s.tu = t->tu;
    s.decl = decl;
    s.read = read;
    walk(&s, body, 0);
    bool ok = !s.oom && s.read_path.items != NULL;
    char *reason = NULL;
    for (size_t i = 0; ok && i < s.use_count; i++) {
        size_t at = 0;
        int use = classify(t->tu, &s.uses[i], &at);
        CXCursor where = s.uses[i].items[s.uses[i].count - 1];
        if (use == USE_ESCAPE) {
            ok = false;
            char *w = moxc__where(moxc__cursor_loc(where));
            reason = moxc__printf("its address is taken at %s", w ? w : "?");
            free(w);
        } else if (use == USE_WRITE) {
            upath wp = {s.uses[i].items, at + 1};
            if (!separated(&wp, &s.read_path)) {
                ok = false;
                char *w = moxc__where(moxc__cursor_loc(where));
                reason = moxc__printf("the write at %s is not separated from it by a mox_barrier() "
                                      "statement in the same block of statements",
                                      w ? w : "?");
                free(w);
            }
        }
    }
    for (size_t i = 0; i < s.use_count; i++)
        free(s.uses[i].items);
    free(s.uses);
    free(s.read_path.items);
    free(s.stack);
    if (why_not)
        *why_not = ok ? NULL : (reason ? reason : moxc__strdup("moxc cannot follow it"));
    else
        free(reason);
    return ok;
}
