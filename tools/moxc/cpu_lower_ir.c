/* cpu_lower_ir.c - the kernel body as items (cpu_lower.h): a statement
 * without barriers, warp calls or jumps over them is per-thread code; the
 * others are taken apart into barriers, warp steps (a statement with warp
 * calls becomes: its calls' arguments, the steps, the rest), and the
 * loops, branches and jumps around them. Conditions of those constructs
 * are first written as per-thread code that sets a flag; cpu_lower_vars.c
 * marks that code dead where the condition can be evaluated directly. */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

static void build_stmt(lw *L, CXCursor c, lw_seq *seq);

static bool is_barrier_stmt(lw *L, CXCursor c) {
    c = lw_strip(c);
    if (clang_getCursorKind(c) == CXCursor_CStyleCastExpr) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        if (ch.count >= 1)
            c = lw_strip(ch.items[ch.count - 1]);
        moxc__children_free(&ch);
    }
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return false;
    const char *name = lw_intrinsic(L, c, NULL);
    return name && strcmp(name, "mox_barrier") == 0;
}

/* Evaluation of construct `owner`'s condition into a new flag. */
static size_t push_condition(lw *L, CXCursor cond, lw_seq *seq, size_t owner) {
    size_t flag = L->flag_count++;
    lw_push_split(L, cond, seq, LW_WRAP_FLAG, flag, owner);
    return flag;
}

static void build_if(lw *L, CXCursor c, lw_seq *seq, int level) {
    moxc__children ch;
    moxc__children_of(c, &ch);
    size_t it = lw_new_item(L, LW_IF, level, c);
    if (it != LW_NONE && ch.count >= 2) {
        L->items[it].cond = ch.items[0];
        size_t flag = push_condition(L, ch.items[0], seq, it);
        L->items[it].flag = flag;
        lw_seq body = {0}, other = {0};
        build_stmt(L, ch.items[1], &body);
        if (ch.count >= 3)
            build_stmt(L, ch.items[2], &other);
        L->items[it].body = body;
        L->items[it].other = other;
        lw_seq_push(L, seq, it);
    }
    moxc__children_free(&ch);
}

static unsigned token_offset(CXTranslationUnit tu, CXToken tok) {
    return lw_offset(clang_getTokenLocation(tu, tok));
}

/* The parts of a for header, told apart by where its ';'s are. */
static bool for_parts(lw *L, CXCursor c, CXCursor parts[4]) {
    CXToken *toks = NULL;
    unsigned n = 0, semis[2] = {0, 0}, close = 0, found = 0;
    int depth = 0;
    clang_tokenize(L->t->tu, clang_getCursorExtent(c), &toks, &n);
    for (unsigned i = 0; i < n && !close; i++) {
        char *s = moxc__cxstr(clang_getTokenSpelling(L->t->tu, toks[i]));
        if (!s || (i == 0 && strcmp(s, "for") != 0)) {
            free(s);
            break;
        }
        if (strcmp(s, "(") == 0)
            depth++;
        else if (strcmp(s, ")") == 0 && --depth == 0)
            close = token_offset(L->t->tu, toks[i]);
        else if (strcmp(s, ";") == 0 && depth == 1 && found < 2)
            semis[found++] = token_offset(L->t->tu, toks[i]);
        free(s);
    }
    if (toks)
        clang_disposeTokens(L->t->tu, toks, n);
    if (found != 2 || !close)
        return false;
    for (int i = 0; i < 4; i++)
        parts[i] = clang_getNullCursor();
    moxc__children ch;
    moxc__children_of(c, &ch);
    for (size_t i = 0; i < ch.count; i++) {
        unsigned at = lw_start_offset(ch.items[i]);
        int part = at < semis[0] ? 0 : at < semis[1] ? 1 : at < close ? 2 : 3;
        parts[part] = ch.items[i];
    }
    moxc__children_free(&ch);
    return !clang_Cursor_isNull(parts[3]);
}

static void build_loop(lw *L, CXCursor c, lw_seq *seq, int level, enum CXCursorKind k) {
    CXCursor parts[4]; /* init, cond, inc, body */
    if (k == CXCursor_ForStmt) {
        if (!for_parts(L, c, parts)) {
            lw_fail(L, c, "a loop with a barrier or warp operation whose header is a macro");
            return;
        }
    } else {
        moxc__children ch;
        moxc__children_of(c, &ch);
        bool ok = ch.count == 2;
        parts[0] = parts[2] = clang_getNullCursor();
        parts[1] = ok ? ch.items[k == CXCursor_DoStmt ? 1 : 0] : clang_getNullCursor();
        parts[3] = ok ? ch.items[k == CXCursor_DoStmt ? 0 : 1] : clang_getNullCursor();
        moxc__children_free(&ch);
        if (!ok) {
            lw_fail(L, c, "an unexpected loop");
            return;
        }
    }
    size_t it = lw_new_item(L, LW_LOOP, level, c);
    if (it == LW_NONE)
        return;
    L->items[it].loop = k;
    L->items[it].init = parts[0];
    L->items[it].cond = parts[1];
    L->items[it].inc = parts[2];
    L->items[it].id = L->label_count++;
    if (!clang_Cursor_isNull(parts[0])) {
        bool decl = clang_getCursorKind(parts[0]) == CXCursor_DeclStmt;
        lw_push_split(L, parts[0], seq, decl ? LW_WRAP_STMT : LW_WRAP_EXPR, LW_NONE, it);
    }
    lw_seq tail = {0};
    if (!clang_Cursor_isNull(parts[2]))
        lw_push_split(L, parts[2], &tail, LW_WRAP_EXPR, LW_NONE, it);
    if (!clang_Cursor_isNull(parts[1])) {
        size_t flag = k == CXCursor_DoStmt ? L->flag_count++ : push_condition(L, parts[1], seq, it);
        lw_push_split(L, parts[1], &tail, LW_WRAP_FLAG, flag, it);
        L->items[it].flag = flag;
    }
    L->items[it].tail = tail;
    if (!moxc__grow(&L->loops, &L->loop_cap, L->loop_depth + 1, sizeof *L->loops)) {
        L->oom = L->failed = true;
        return;
    }
    L->loops[L->loop_depth++] = it;
    lw_seq body = {0};
    build_stmt(L, parts[3], &body);
    L->loop_depth--;
    L->items[it].body = body;
    lw_seq_push(L, seq, it);
}

static void build_jump(lw *L, CXCursor c, lw_seq *seq, int level, enum CXCursorKind k) {
    size_t target = LW_NONE;
    if (k == CXCursor_ReturnStmt) {
        moxc__children ch;
        moxc__children_of(c, &ch);
        size_t n = ch.count;
        moxc__children_free(&ch);
        if (n) {
            lw_fail(L, c, "a return with a value");
            return;
        }
    } else {
        if (L->loop_depth == 0) {
            lw_fail(L, c, "a break or continue outside the loops moxc restructures");
            return;
        }
        target = L->loops[L->loop_depth - 1];
        if (k == CXCursor_ContinueStmt)
            L->items[target].continued = true;
    }
    size_t it = lw_new_item(L, LW_JUMP, level, c);
    if (it == LW_NONE)
        return;
    L->items[it].jump = k;
    L->items[it].target = target;
    lw_seq_push(L, seq, it);
}

/* A static (MOX_SHARED, static const) or a MOX_SHARED_DYNAMIC pointer: the
 * same for the whole block, declared once at the top of the function. */
static bool declares_static(CXCursor decl_stmt) {
    moxc__children ch;
    moxc__children_of(decl_stmt, &ch);
    bool yes = false;
    for (size_t i = 0; i < ch.count; i++) {
        if (clang_getCursorKind(ch.items[i]) != CXCursor_VarDecl)
            continue;
        char *dynamic = moxc__annotation(ch.items[i], "mox_shared_dynamic");
        if (clang_Cursor_getStorageClass(ch.items[i]) == CX_SC_Static || dynamic)
            yes = true;
        free(dynamic);
    }
    moxc__children_free(&ch);
    return yes;
}

static void build_stmt(lw *L, CXCursor c, lw_seq *seq) {
    if (L->failed)
        return;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_NullStmt)
        return;
    int level = lw_stmt_level(L, c);
    if (level == LW_T) {
        if (k == CXCursor_DeclStmt && declares_static(c)) {
            if (!moxc__grow(&L->statics, &L->static_cap, L->static_count + 1, sizeof *L->statics)) {
                L->oom = L->failed = true;
                return;
            }
            L->statics[L->static_count++] = c;
            return;
        }
        size_t it = lw_new_item(L, LW_CODE, LW_T, c);
        if (it != LW_NONE)
            L->items[it].wrap = clang_isExpression(k) ? LW_WRAP_EXPR : LW_WRAP_STMT;
        lw_seq_push(L, seq, it);
        return;
    }
    switch (k) {
    case CXCursor_CompoundStmt: {
        moxc__children ch;
        moxc__children_of(c, &ch);
        for (size_t i = 0; i < ch.count; i++)
            build_stmt(L, ch.items[i], seq);
        moxc__children_free(&ch);
        break;
    }
    case CXCursor_IfStmt:
        build_if(L, c, seq, level);
        break;
    case CXCursor_ForStmt:
    case CXCursor_WhileStmt:
    case CXCursor_DoStmt:
        build_loop(L, c, seq, level, k);
        break;
    case CXCursor_ReturnStmt:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
        build_jump(L, c, seq, level, k);
        break;
    case CXCursor_SwitchStmt:
        lw_fail(L, c, "a barrier or warp operation inside a switch statement");
        break;
    case CXCursor_DeclStmt:
        lw_push_split(L, c, seq, LW_WRAP_STMT, LW_NONE, LW_NONE);
        break;
    default:
        if (clang_isExpression(k) && is_barrier_stmt(L, c))
            lw_seq_push(L, seq, lw_new_item(L, LW_BARRIER, LW_B, c));
        else if (clang_isExpression(k))
            lw_push_split(L, c, seq, LW_WRAP_EXPR, LW_NONE, LW_NONE);
        else
            lw_fail(L, c, "a barrier or warp operation inside a statement moxc does not restructure");
        break;
    }
}

void lw_build(lw *L, CXCursor body) {
    lw_find_jumps(L, body);
    /* the body's statements are the top sequence (its braces add nothing) */
    moxc__children ch;
    moxc__children_of(body, &ch);
    for (size_t i = 0; i < ch.count; i++)
        build_stmt(L, ch.items[i], &L->top);
    moxc__children_free(&ch);
}
