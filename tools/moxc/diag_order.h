/* diag_order.h - moxc's diagnostic lines held back and printed in source
 * order: the checks run pass by pass (clang's diagnostics, the kernel
 * checks, uniformity, the CPU lowering's notes...), so a line later in a
 * source can be found before an earlier one. */
#ifndef MOXC_DIAG_ORDER_H
#define MOXC_DIAG_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct moxc__diag_line {
    char *text;        /* the whole line, "file:line:col: error: ..." */
    size_t file_rank;  /* order of its file's first line; lines without a place: SIZE_MAX */
    unsigned line, col;
    size_t seq;        /* arrival order, for ties and lines without a place */
} moxc__diag_line;

typedef struct moxc__diag_order {
    moxc__diag_line *lines;
    size_t count, cap;
} moxc__diag_order;

/* Holds a copy of `line` back; false out of memory (then the caller prints it now). */
bool moxc__diag_order_add(moxc__diag_order *o, const char *line);
/* Prints the lines held back to `out` (if not NULL) - by file in the order
 * their first lines came, then by line and column, lines without a place
 * last, each group in arrival order - and forgets them. */
void moxc__diag_order_flush(moxc__diag_order *o, FILE *out);

#endif
