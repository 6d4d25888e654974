/* cpu_lower_warp_calls.c - a statement or expression with warp calls,
 * taken apart for the work-group function: the calls' arguments (the PRE
 * part, per thread, into the staging arrays), one warp step per call, then
 * the rest with the calls' results (the POST part). Calls that cannot be
 * taken out that way (under &&, ||, ?:, a comma, inside another warp
 * call's argument, written by a macro) keep the kernel on its old
 * executor. */
#include "cpu_lower.h"

#include <string.h>

typedef struct call_walk {
    lw *L;
    size_t first;
    bool conditional; /* under &&, ||, ?: or a comma */
    bool in_call;     /* inside a warp call's arguments */
} call_walk;

/* A call written out in the kernel source itself: its text starts with
 * the callee's name (libclang reports calls from a macro's body at the
 * macro's use, where another name is written). */
static bool plain_call(lw *L, CXCursor c, const char *name) {
    unsigned start, end;
    if (!lw_stmt_range(L, c, false, &start, &end))
        return false;
    size_t len = strlen(name);
    return end - start > len && memcmp(L->text + start, name, len) == 0 &&
           !(L->text[start + len] == '_' || (L->text[start + len] >= '0' && L->text[start + len] <= '9') ||
             ((L->text[start + len] | 32) >= 'a' && (L->text[start + len] | 32) <= 'z'));
}

static void add_call(call_walk *w, CXCursor c, const lw_op *op) {
    lw *L = w->L;
    if (w->conditional) {
        lw_fail(L, c, "a warp operation inside &&, ||, ?: or a comma expression");
        return;
    }
    if (w->in_call) {
        lw_fail(L, c, "a warp operation inside the argument of another");
        return;
    }
    if (!plain_call(L, c, op->name)) {
        lw_fail(L, c, "a warp operation written by a macro");
        return;
    }
    if (!moxc__grow(&L->calls, &L->call_cap, L->call_count + 1, sizeof *L->calls)) {
        L->oom = L->failed = true;
        return;
    }
    lw_call *call = &L->calls[L->call_count++];
    memset(call, 0, sizeof *call);
    call->call = c;
    call->op = op;
    call->arg[0] = clang_Cursor_getArgument(c, 0);
    call->arg[1] = op->arg2 ? clang_Cursor_getArgument(c, 1) : clang_getNullCursor();
}

static void walk_calls(call_walk *w, CXCursor c);

static enum CXChildVisitResult walk_call_child(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    walk_calls(data, c);
    return CXChildVisit_Continue;
}

static void walk_calls(call_walk *w, CXCursor c) {
    lw *L = w->L;
    if (L->failed)
        return;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_CallExpr) {
        const char *name = lw_intrinsic(L, c, NULL);
        int coop = name ? moxc__intrinsic_coop(name) : MOXC_COOP_NONE;
        if (coop == MOXC_COOP_BLOCK) {
            lw_fail(L, c, "a barrier inside an expression");
            return;
        }
        if (coop == MOXC_COOP_WARP) {
            add_call(w, c, lw_find_op(name));
            bool saved = w->in_call;
            w->in_call = true;
            clang_visitChildren(c, walk_call_child, w);
            w->in_call = saved;
            return;
        }
    }
    /* children after the first of ?:, && and || may not run; a comma's
     * right side runs after its left side's effects */
    size_t unconditional = (size_t)-1;
    if (k == CXCursor_ConditionalOperator) {
        unconditional = 1;
    } else if (k == CXCursor_BinaryOperator) {
        char op[8];
        lw_operator(L, c, op, sizeof op);
        if (strcmp(op, "&&") == 0 || strcmp(op, "||") == 0)
            unconditional = 1;
        else if (strcmp(op, ",") == 0)
            unconditional = 0;
    }
    moxc__children ch;
    moxc__children_of(c, &ch);
    bool saved = w->conditional;
    for (size_t i = 0; i < ch.count && !L->failed; i++) {
        w->conditional = saved || i >= unconditional;
        walk_calls(w, ch.items[i]);
    }
    w->conditional = saved;
    moxc__children_free(&ch);
}

void lw_push_split(lw *L, CXCursor c, lw_seq *seq, int wrap, size_t flag, size_t owner) {
    call_walk w = {L, L->call_count, false, false};
    walk_calls(&w, c);
    size_t count = L->call_count - w.first;
    if (L->failed)
        return;
    if (count == 0) {
        size_t it = lw_new_item(L, LW_CODE, LW_T, c);
        if (it != LW_NONE) {
            L->items[it].wrap = wrap;
            L->items[it].flag = flag;
            L->items[it].owner = owner;
        }
        lw_seq_push(L, seq, it);
        return;
    }
    for (int phase = LW_PRE; phase <= LW_POST; phase++) {
        if (phase == LW_POST)
            for (size_t i = 0; i < count; i++) {
                size_t step = lw_new_item(L, LW_WARP, LW_W, L->calls[w.first + i].call);
                if (step != LW_NONE) {
                    L->items[step].call_first = w.first + i;
                    L->items[step].call_count = 1;
                    L->items[step].owner = owner;
                }
                lw_seq_push(L, seq, step);
            }
        size_t it = lw_new_item(L, LW_CODE, LW_T, c);
        if (it == LW_NONE)
            return;
        L->items[it].wrap = wrap;
        L->items[it].phase = phase;
        L->items[it].flag = flag;
        L->items[it].owner = owner;
        L->items[it].call_first = w.first;
        L->items[it].call_count = count;
        lw_seq_push(L, seq, it);
    }
}
