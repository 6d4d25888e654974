/* gate_defer_text.c - the text edits that turn a kernel's definition into
 * its deferred copy (gen_cuda_gate.c pastes the copy): the name gets
 * "__mox_deferred", the parameters start with `mox__gate_view *mox__g`
 * (the entry's gate, mox/kernel_cuda_gate.h), and each guarded statement
 * runs its effect only when mox__gate_bad(mox__g) is false - the status is
 * read at the first guard a thread reaches, after the body's loads have
 * issued, and kept in the view for the next ones:
 *     lhs = rhs;  ->  do { auto mox__v = (rhs); if (!mox__gate_bad(mox__g)) lhs = mox__v; } while (0);
 *     lhs op= rhs;  ->  do { auto mox__v = (rhs); auto &mox__r = (lhs); auto mox__n = mox__r op mox__v;
 *                            if (!mox__gate_bad(mox__g)) mox__r = mox__n; } while (0);
 *                       (a bit-field target keeps `lhs op= mox__v` behind the guard)
 *     ++lhs; atomic(...); mox_fail(c);  ->  do { if (!mox__gate_bad(mox__g)) ...; } while (0);
 *     local = atomic(...)  ->  local = (mox__gate_bad(mox__g) ? 0u : atomic(...))
 * The stored value is computed before the branch, so the body's loads are
 * not behind it. The do/while keeps an unbraced if/else around the
 * statement intact, and each edit keeps the text's newlines, so the
 * lines after it keep their numbers (#line names the user's file). Text
 * that a macro produces cannot be edited: that refuses the kernel. */
#include <stdlib.h>
#include <string.h>

#include "gate_defer.h"

/* The offset of `loc` in the kernel source when the text there is the
 * source's own (not a macro's expansion). */
static bool file_offset(gd *g, CXSourceLocation loc, size_t *out) {
    CXFile ef = NULL, sf = NULL;
    unsigned eo = 0, so = 0;
    clang_getExpansionLocation(loc, &ef, NULL, NULL, &eo);
    clang_getSpellingLocation(loc, &sf, NULL, NULL, &so);
    if (!ef || !sf || !g->t->main_file || !clang_File_isEqual(ef, g->t->main_file) || !clang_File_isEqual(sf, ef) ||
        eo != so || eo > g->text_size)
        return false;
    *out = eo;
    return true;
}

bool moxc__gd_range(gd *g, CXCursor c, size_t *start, size_t *end) {
    CXSourceRange r = clang_getCursorExtent(c);
    return file_offset(g, clang_getRangeStart(r), start) && file_offset(g, clang_getRangeEnd(r), end) &&
           *start < *end;
}

void moxc__gd_add_edit(gd *g, size_t at, size_t skip, char *text) {
    if (!g->report || g->problem) {
        free(text);
        return;
    }
    if (!text || !moxc__grow(&g->edits, &g->edit_cap, g->edit_count + 1, sizeof *g->edits)) {
        free(text);
        g->oom = true;
        return;
    }
    g->edits[g->edit_count++] = (moxc_text_edit){at, skip, text};
}

static size_t count_newlines(const char *s, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\n';
    return count;
}

/* Replaces [start, end) with `text` (taken) plus the newlines it lacks. */
static void replace(gd *g, size_t start, size_t end, char *text) {
    if (!text) {
        g->oom = true;
        return;
    }
    size_t had = count_newlines(g->text + start, end - start), len = strlen(text);
    size_t missing = had > count_newlines(text, len) ? had - count_newlines(text, len) : 0;
    char *padded = malloc(len + missing + 1);
    if (padded) {
        memcpy(padded, text, len);
        memset(padded + len, '\n', missing);
        padded[len + missing] = '\0';
    }
    free(text);
    moxc__gd_add_edit(g, start, end - start, padded);
}

static void macro_problem(gd *g, CXCursor e) {
    moxc__gd_problem(g, moxc__cursor_loc(e),
                     "a store, atomic or mox_fail written by a macro (the deferred copy edits its text)");
}

/* When `between` (the text from the target's end to the value's start) is
 * a compound assignment's operator between blanks, its arithmetic
 * operator: "+", "<<", ... (anything else, a comment say, is not). */
static bool compound_operator(const char *between, size_t len, char op[3]) {
    size_t a = 0, b = len;
    while (a < b && (between[a] == ' ' || between[a] == '\t' || between[a] == '\n'))
        a++;
    while (b > a && (between[b - 1] == ' ' || between[b - 1] == '\t' || between[b - 1] == '\n'))
        b--;
    static const char *const ops[] = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        size_t n = strlen(ops[i]);
        if (b - a == n && memcmp(between + a, ops[i], n) == 0) {
            memcpy(op, ops[i], n - 1);
            op[n - 1] = '\0';
            return true;
        }
    }
    return false;
}

/* A guard inside a helper walked for a call (gate_defer_helper.c): the
 * helper's text is shared with the kernel's first copy, so it cannot be
 * guarded. */
static bool in_helper(gd *g, CXCursor c) {
    if (!g->helper_depth)
        return false;
    moxc__gd_problem(g, moxc__cursor_loc(c),
                     "a store to memory, atomic or mox_fail in a helper function (the deferred copy guards only "
                     "the kernel's own statements)");
    return true;
}

void moxc__gd_guard_store(gd *g, CXCursor e, CXCursor lhs, CXCursor rhs) {
    if (!g->report || g->problem)
        return;
    if (in_helper(g, e))
        return;
    moxc__gd_note_guard(g);
    size_t es, ee, ls, le, rs, re;
    if (!moxc__gd_range(g, e, &es, &ee) || !moxc__gd_range(g, lhs, &ls, &le) || !moxc__gd_range(g, rhs, &rs, &re) ||
        ls < es || re > ee || le > rs) {
        macro_problem(g, e);
        return;
    }
    const char *t = g->text;
    char op[3];
    CXCursor field = clang_getCursorReferenced(lhs);
    bool bit_field = clang_getCursorKind(lhs) == CXCursor_MemberRefExpr && clang_Cursor_isBitField(field);
    if (!bit_field && compound_operator(t + le, rs - le, op)) {
        /* The target's old value is read with the body's loads, ahead of
         * the gate's question (its address is not tainted, gate_defer.c):
         * behind the guard it would wait for the status word. */
        replace(g, es, ee,
                moxc__printf("do { auto mox__v = (%.*s); auto &mox__r = (%.*s); auto mox__n = mox__r %s mox__v; "
                             "if (!mox__gate_bad(mox__g)) mox__r = mox__n; } while (0)",
                             (int)(re - rs), t + rs, (int)(le - ls), t + ls, op));
        return;
    }
    /* the text between the target and the value: the operator (and any comments) */
    replace(g, es, ee,
            moxc__printf("do { auto mox__v = (%.*s); if (!mox__gate_bad(mox__g)) %.*s%.*smox__v; } while (0)",
                         (int)(re - rs), t + rs, (int)(le - ls), t + ls, (int)(rs - le), t + le));
}

void moxc__gd_guard_stmt(gd *g, CXCursor e) {
    if (!g->report || g->problem)
        return;
    if (in_helper(g, e))
        return;
    moxc__gd_note_guard(g);
    size_t es, ee;
    if (!moxc__gd_range(g, e, &es, &ee)) {
        macro_problem(g, e);
        return;
    }
    replace(g, es, ee, moxc__printf("do { if (!mox__gate_bad(mox__g)) %.*s; } while (0)", (int)(ee - es), g->text + es));
}

void moxc__gd_guard_value(gd *g, CXCursor call) {
    if (!g->report || g->problem)
        return;
    if (in_helper(g, call))
        return;
    moxc__gd_note_guard(g);
    size_t cs, ce;
    if (!moxc__gd_range(g, call, &cs, &ce)) {
        macro_problem(g, call);
        return;
    }
    enum CXTypeKind k = clang_getCanonicalType(clang_getCursorType(call)).kind;
    const char *zero = k == CXType_UInt ? "0u" : k == CXType_Int ? "0" : k == CXType_Bool ? "false" : NULL;
    if (!zero) {
        moxc__gd_problem(g, moxc__cursor_loc(call), "an atomic whose result type the analysis does not know");
        return;
    }
    replace(g, cs, ce, moxc__printf("(mox__gate_bad(mox__g) ? %s : %.*s)", zero, (int)(ce - cs), g->text + cs));
}

/* Skips blanks and comments from p. */
static size_t skip_blank(const char *t, size_t size, size_t p) {
    while (p < size) {
        if (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r' || t[p] == '\f' || t[p] == '\v') {
            p++;
        } else if (p + 1 < size && t[p] == '/' && t[p + 1] == '/') {
            while (p < size && t[p] != '\n')
                p++;
        } else if (p + 1 < size && t[p] == '/' && t[p + 1] == '*') {
            const char *close = strstr(t + p + 2, "*/");
            p = close ? (size_t)(close - t) + 2 : size;
        } else {
            break;
        }
    }
    return p;
}

bool moxc__gd_signature(gd *g, moxc_gate_defer *out) {
    CXCursor k = g->kernel;
    unsigned start = 0, end = 0;
    moxc__expansion(moxc__cursor_start(k), NULL, NULL, NULL, &start);
    moxc__expansion(clang_getRangeEnd(clang_getCursorExtent(k)), NULL, NULL, NULL, &end);
    size_t name_at = 0;
    char *name = moxc__cxstr(clang_getCursorSpelling(k));
    size_t len = name ? strlen(name) : 0;
    bool ok = name && file_offset(g, moxc__cursor_loc(k), &name_at) && start < name_at && end <= g->text_size &&
              end > name_at + len && g->text[end - 1] == '}' && memcmp(g->text + name_at, name, len) == 0;
    free(name);
    size_t paren = ok ? skip_blank(g->text, g->text_size, name_at + len) : 0;
    if (!ok || paren >= end || g->text[paren] != '(') {
        moxc__gd_problem(g, moxc__cursor_loc(k), "the kernel's name or parameters are written by a macro");
        return false;
    }
    /* Inlined into the entry always: the guards read the entry's gate
     * parameter through a pointer, which a real call would copy to local
     * memory and read back at every guard (an H200 ran a gated vec-add at
     * 0.78 of ungated that way, 1.00 inlined). */
    moxc__gd_add_edit(g, name_at, 0, moxc__strdup("__forceinline__ "));
    moxc__gd_add_edit(g, name_at + len, 0, moxc__strdup("__mox_deferred"));
    moxc__gd_add_edit(g, paren + 1, 0, moxc__strdup("mox__gate_view *mox__g, "));
    out->start = start;
    out->end = end;
    out->start_line = 1u + (unsigned)count_newlines(g->text, start);
    out->end_line = 1u + (unsigned)count_newlines(g->text, end - 1);
    return true;
}
