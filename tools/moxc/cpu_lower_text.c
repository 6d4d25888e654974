/* cpu_lower_text.c - the source text of region code with its rewrites:
 * uses of block-level and per-thread variables renamed to their storage,
 * warp calls replaced by their lane's result, shared-memory atomics by
 * their plain forms, returns by a jump to the end of the thread's
 * iteration. Text inside a macro's own definition cannot be rewritten:
 * needing to is a reason to keep the kernel on its old executor. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

void lw_edit_add(lw *L, lw_edits *e, unsigned start, unsigned end, char *text) {
    if (!text || !moxc__grow(&e->at, &e->cap, e->n + 1, sizeof *e->at)) {
        free(text);
        L->oom = L->failed = true;
        return;
    }
    e->at[e->n++] = (lw_edit){start, end, text};
}

void lw_edits_free(lw_edits *e) {
    for (size_t i = 0; i < e->n; i++)
        free(e->at[i].text);
    free(e->at);
    memset(e, 0, sizeof *e);
}

/* Skips blanks and comments from p; returns the next offset. */
static size_t skip_blank(const lw *L, size_t p) {
    const char *t = L->text;
    while (p < L->text_size) {
        if (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r' || t[p] == '\f' || t[p] == '\v') {
            p++;
        } else if (p + 1 < L->text_size && t[p] == '/' && t[p + 1] == '/') {
            while (p < L->text_size && t[p] != '\n')
                p++;
        } else if (p + 1 < L->text_size && t[p] == '/' && t[p + 1] == '*') {
            const char *close = strstr(t + p + 2, "*/");
            p = close ? (size_t)(close - t) + 2 : L->text_size;
        } else {
            break;
        }
    }
    return p;
}

bool lw_stmt_range(lw *L, CXCursor c, bool with_semicolon, unsigned *start, unsigned *end) {
    CXSourceRange r = clang_getCursorExtent(c);
    if (!lw_in_main(L, clang_getRangeStart(r)) || !lw_in_main(L, clang_getRangeEnd(r)))
        return false;
    *start = lw_offset(clang_getRangeStart(r));
    *end = lw_offset(clang_getRangeEnd(r));
    if (*start >= *end || *end > L->text_size)
        return false;
    if (with_semicolon) {
        size_t p = skip_blank(L, *end);
        if (p < L->text_size && L->text[p] == ';')
            *end = (unsigned)p + 1;
    }
    return true;
}

static int compare_edits(const void *a, const void *b) {
    const lw_edit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

void lw_put_range(lw *L, moxc_buf *b, unsigned start, unsigned end, const lw_edits *e) {
    lw_edit *sorted = e->n ? malloc(e->n * sizeof *sorted) : NULL;
    if (e->n && !sorted) {
        L->oom = L->failed = true;
        return;
    }
    if (e->n) {
        memcpy(sorted, e->at, e->n * sizeof *sorted);
        qsort(sorted, e->n, sizeof *sorted, compare_edits);
    }
    unsigned at = start;
    for (size_t i = 0; i < e->n; i++) {
        const lw_edit *x = &sorted[i];
        if (x->start < at || x->end > end || x->start < start)
            continue; /* outside, or inside an edit already applied (a duplicate) */
        moxc_buf_write(b, L->text + at, x->start - at);
        moxc_buf_put(b, x->text);
        at = x->end;
    }
    moxc_buf_write(b, L->text + at, end - at);
    free(sorted);
}

/* ---------------- rewrites ---------------- */

typedef struct edit_walk {
    lw *L;
    const lw_item *it;
    lw_edits *e;
} edit_walk;

static bool item_call(const lw *L, const lw_item *it, CXCursor c, size_t *index) {
    for (size_t i = it->call_first; i < it->call_first + it->call_count; i++)
        if (clang_equalCursors(L->calls[i].call, c)) {
            *index = i;
            return true;
        }
    return false;
}

/* A variable's use, renamed where it is spelled: in the text itself or in
 * a macro argument; never in a macro's body. */
static void rename_ref(edit_walk *w, CXCursor c, const lw_var *v) {
    lw *L = w->L;
    CXSourceRange r = clang_getCursorExtent(c);
    CXFile file;
    unsigned start, end;
    clang_getSpellingLocation(clang_getRangeStart(r), &file, NULL, NULL, &start);
    clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &end);
    size_t len = strlen(v->name);
    bool ok = file && L->t->main_file && clang_File_isEqual(file, L->t->main_file) && end == start + len &&
              end <= L->text_size && memcmp(L->text + start, v->name, len) == 0;
    if (!ok) {
        lw_fail(L, c, "a use of '%s' inside a macro", v->name);
        return;
    }
    char *text = v->cls == LV_STORAGE ? moxc__printf("mox__p%zu[mox__t]", v->id) : moxc__printf("mox__b%zu", v->id);
    lw_edit_add(L, w->e, start, end, text);
}

/* The argument of a mox_atomic_* call points into a MOX_SHARED array. */
static bool points_into_shared(CXCursor arg) {
    CXCursor c = lw_strip(arg);
    for (int guard = 0; guard < 16; guard++) {
        enum CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_DeclRefExpr) {
            char *shared = moxc__annotation(clang_getCursorReferenced(c), "mox_shared");
            bool yes = shared != NULL;
            free(shared);
            return yes;
        }
        if (k != CXCursor_UnaryOperator && k != CXCursor_ArraySubscriptExpr && k != CXCursor_BinaryOperator)
            return false;
        moxc__children ch;
        moxc__children_of(c, &ch);
        CXCursor next = ch.count ? lw_strip(ch.items[0]) : clang_getNullCursor();
        moxc__children_free(&ch);
        if (clang_Cursor_isNull(next))
            return false;
        c = next;
    }
    return false;
}

static void local_atomic(edit_walk *w, CXCursor call, const char *name) {
    lw *L = w->L;
    if (clang_Cursor_getNumArguments(call) < 1 || !points_into_shared(clang_Cursor_getArgument(call, 0)))
        return;
    moxc__children ch;
    moxc__children_of(call, &ch);
    CXCursor callee = ch.count ? lw_strip(ch.items[0]) : clang_getNullCursor();
    moxc__children_free(&ch);
    CXSourceRange r = clang_getCursorExtent(callee);
    CXFile file;
    unsigned start, end, xs;
    clang_getSpellingLocation(clang_getRangeStart(r), &file, NULL, NULL, &start);
    clang_getSpellingLocation(clang_getRangeEnd(r), NULL, NULL, NULL, &end);
    clang_getExpansionLocation(clang_getRangeStart(r), NULL, NULL, NULL, &xs);
    size_t len = strlen(name);
    if (file && clang_File_isEqual(file, L->t->main_file) && xs == start && end == start + len &&
        memcmp(L->text + start, name, len) == 0) /* else the atomic form: also correct */
        lw_edit_add(L, w->e, start, end, moxc__printf("mox__local_%s", name + 4));
}

static enum CXChildVisitResult walk_edits(CXCursor c, CXCursor parent, void *data);

static enum CXChildVisitResult visit_edit(edit_walk *w, CXCursor c) {
    lw *L = w->L;
    enum CXCursorKind k = clang_getCursorKind(c);
    size_t call;
    if (k == CXCursor_CallExpr && w->it && w->it->phase == LW_POST && item_call(L, w->it, c, &call)) {
        unsigned start, end;
        if (lw_stmt_range(L, c, false, &start, &end))
            lw_edit_add(L, w->e, start, end, moxc__printf("mox__wr%zu[mox__l]", call));
        else
            lw_fail(L, c, "a warp operation written by a macro");
        return CXChildVisit_Continue;
    }
    if (k == CXCursor_CallExpr) {
        const char *name = lw_intrinsic(L, c, NULL);
        if (name && moxc__starts_with(name, "mox_atomic_"))
            local_atomic(w, c, name);
    } else if (k == CXCursor_DeclRefExpr) {
        lw_var *v = lw_var_of(L, clang_getCursorReferenced(c));
        if (v && (v->cls == LV_STORAGE || v->cls == LV_BLOCK))
            rename_ref(w, c, v);
    } else if (k == CXCursor_ReturnStmt) {
        unsigned start, end;
        if (!w->it || w->it->region == LW_NONE || !lw_stmt_range(L, c, false, &start, &end) ||
            end - start < 6 || memcmp(L->text + start, "return", 6) != 0)
            lw_fail(L, c, "a return inside a macro");
        else
            lw_edit_add(L, w->e, start, end, moxc__printf("goto mox__tend%zu", w->it->region));
    }
    return CXChildVisit_Recurse;
}

static enum CXChildVisitResult walk_edits(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    edit_walk *w = data;
    if (w->L->failed)
        return CXChildVisit_Break;
    enum CXChildVisitResult r = visit_edit(w, c);
    if (r == CXChildVisit_Recurse)
        clang_visitChildren(c, walk_edits, w);
    return CXChildVisit_Continue;
}

void lw_collect_edits(lw *L, CXCursor c, size_t item, lw_edits *e) {
    edit_walk w = {L, item == LW_NONE ? NULL : &L->items[item], e};
    walk_edits(c, c, &w);
}

void lw_put_expr(lw *L, moxc_buf *b, CXCursor c, size_t item) {
    unsigned start, end;
    if (!lw_stmt_range(L, c, false, &start, &end)) {
        lw_fail(L, c, "an expression written by a macro");
        return;
    }
    lw_edits e = {0};
    lw_collect_edits(L, c, item, &e);
    lw_put_range(L, b, start, end, &e);
    lw_edits_free(&e);
}

void lw_put_init(lw *L, moxc_buf *b, const lw_var *v, size_t item) {
    if (v->init_in_macro)
        lw_fail(L, v->decl, "the initializer of '%s', written by a macro with its declaration", v->name);
    else
        lw_put_expr(L, b, v->init, item);
}

/* ---------------- declarations ---------------- */

static bool strip_prefix(char *s, const char *word) {
    size_t n = strlen(word);
    if (strncmp(s, word, n) != 0 || s[n] != ' ')
        return false;
    memmove(s, s + n + 1, strlen(s + n + 1) + 1);
    return true;
}

static bool strip_suffix(char *s, const char *word) {
    size_t n = strlen(word), len = strlen(s);
    if (len <= n || strcmp(s + len - n, word) != 0 || (s[len - n - 1] != ' ' && s[len - n - 1] != '*'))
        return false;
    len -= n;
    while (len && s[len - 1] == ' ')
        len--;
    s[len] = '\0';
    return true;
}

/* The spelling of a type without its top-level const or volatile
 * ("const uint32_t" -> "uint32_t", "float *const" -> "float *"). */
static char *unqualified(CXType t) {
    char *s = moxc__cxstr(clang_getTypeSpelling(t));
    bool pointer = clang_getCanonicalType(t).kind == CXType_Pointer;
    while (s && (pointer ? strip_suffix(s, "const") || strip_suffix(s, "volatile")
                         : strip_prefix(s, "const") || strip_prefix(s, "volatile")))
        ;
    return s;
}

static bool declared_inside(lw *L, CXType t) {
    CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(t));
    for (CXCursor p = decl; !clang_Cursor_isNull(p) && clang_getCursorKind(p) != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p))
        if (clang_equalCursors(p, L->kernel))
            return true;
    return false;
}

bool lw_put_decl(lw *L, moxc_buf *b, CXType type, const char *name) {
    CXType canon = clang_getCanonicalType(type);
    if (canon.kind == CXType_ConstantArray) {
        char *inner = moxc__printf("%s[%lld]", name, clang_getArraySize(canon));
        bool ok = inner && lw_put_decl(L, b, clang_getArrayElementType(canon), inner);
        free(inner);
        return ok;
    }
    CXType base = canon.kind == CXType_Pointer ? clang_getPointeeType(canon) : canon;
    char *s = unqualified(type);
    bool ok = s && !strchr(s, '(') && !strchr(s, '[') && !declared_inside(L, base);
    if (ok)
        moxc_buf_printf(b, "%s%s%s", s, s[strlen(s) - 1] == '*' ? "" : " ", name);
    free(s);
    return ok;
}
