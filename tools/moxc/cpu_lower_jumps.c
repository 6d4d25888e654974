/* cpu_lower_jumps.c - the level (per thread, per warp, per block) each
 * statement of a kernel needs: the barriers and warp calls inside it, and
 * its jumps that leave it over cooperative code (a return skips what
 * follows it and the rest of every loop around it; a break or continue
 * the rest of its loop). */
#include "cpu_lower.h"

#include <stdlib.h>
#include <string.h>

unsigned lw_end_offset(CXCursor c) {
    return lw_offset(clang_getRangeEnd(clang_getCursorExtent(c)));
}

unsigned lw_start_offset(CXCursor c) {
    return lw_offset(moxc__cursor_start(c));
}

static int coop_in(lw *L, unsigned start, unsigned end) {
    int level = LW_T;
    for (size_t i = 0; i < L->coop_count; i++)
        if (L->coop_offsets[i] >= start && L->coop_offsets[i] < end && L->coop_levels[i] > level)
            level = L->coop_levels[i];
    return level;
}

typedef struct scope {
    unsigned start, end;
    bool is_switch;
} scope;

typedef struct jump_walk {
    lw *L;
    unsigned body_end;
    scope *scopes;
    size_t depth, cap;
} jump_walk;

static void add_jump(jump_walk *w, CXCursor c, enum CXCursorKind k) {
    lw *L = w->L;
    if (!moxc__grow(&L->jumps, &L->jump_cap, L->jump_count + 1, sizeof *L->jumps)) {
        L->oom = L->failed = true;
        return;
    }
    lw_jump *j = &L->jumps[L->jump_count++];
    memset(j, 0, sizeof *j);
    j->at = lw_start_offset(c);
    j->is_return = k == CXCursor_ReturnStmt;
    if (j->is_return) {
        /* what follows it, and all of every loop around it (the next iteration) */
        j->level = coop_in(L, j->at, w->body_end);
        for (size_t i = 0; i < w->depth; i++)
            if (!w->scopes[i].is_switch) {
                int l = coop_in(L, w->scopes[i].start, w->scopes[i].end);
                j->level = l > j->level ? l : j->level;
            }
        return;
    }
    for (size_t i = w->depth; i-- > 0;) {
        if (k == CXCursor_ContinueStmt && w->scopes[i].is_switch)
            continue;
        j->target_start = w->scopes[i].start;
        j->target_end = w->scopes[i].end;
        j->level = w->scopes[i].is_switch ? LW_T : coop_in(L, j->target_start, j->target_end);
        return;
    }
}

static enum CXChildVisitResult walk_jumps(CXCursor c, CXCursor parent, void *data) {
    (void)parent;
    jump_walk *w = data;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_ReturnStmt || k == CXCursor_BreakStmt || k == CXCursor_ContinueStmt)
        add_jump(w, c, k);
    bool scoped = k == CXCursor_ForStmt || k == CXCursor_WhileStmt || k == CXCursor_DoStmt ||
                  k == CXCursor_SwitchStmt;
    if (!scoped)
        return CXChildVisit_Recurse;
    if (!moxc__grow(&w->scopes, &w->cap, w->depth + 1, sizeof *w->scopes)) {
        w->L->oom = w->L->failed = true;
        return CXChildVisit_Break;
    }
    w->scopes[w->depth++] = (scope){lw_start_offset(c), lw_end_offset(c), k == CXCursor_SwitchStmt};
    clang_visitChildren(c, walk_jumps, w);
    w->depth--;
    return CXChildVisit_Continue;
}

/* The level statement c needs: its barriers and warp calls, and its jumps
 * that leave it over cooperative code. */
int lw_stmt_level(lw *L, CXCursor c) {
    unsigned start = lw_start_offset(c), end = lw_end_offset(c);
    int level = coop_in(L, start, end);
    for (size_t i = 0; i < L->jump_count; i++) {
        const lw_jump *j = &L->jumps[i];
        if (j->at < start || j->at >= end || j->level <= level)
            continue;
        if (j->is_return || j->target_start < start || j->target_end > end)
            level = j->level;
    }
    return level;
}


void lw_find_jumps(lw *L, CXCursor body) {
    jump_walk w = {L, lw_end_offset(body), NULL, 0, 0};
    clang_visitChildren(body, walk_jumps, &w);
    free(w.scopes);
}
