/* line_set.h - a set of text lines (open addressing, FNV-1a): how moxc's
 * diagnostics print each line once in time linear in their number. */
#ifndef MOXC_LINE_SET_H
#define MOXC_LINE_SET_H

#include <stddef.h>

typedef struct moxc__line_set {
    char **slots; /* cap entries, NULL when empty; the set owns the copies */
    size_t count, cap;
} moxc__line_set;

/* Adds a copy of `line`: 1 when it was new, 0 when already there, -1 out of memory. */
int moxc__line_set_add(moxc__line_set *set, const char *line);
void moxc__line_set_free(moxc__line_set *set);

#endif
