/* diag_order.c - diagnostic lines printed in source order (diag_order.h). */
#include "diag_order.h"

#include "front_internal.h" /* moxc__grow, moxc__strdup */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Parses "<file>:<line>:<col>: " at the start of `text`: the file's length,
 * or 0 when the line names no place. The first ":<digits>:<digits>: " ends
 * the file name. */
static size_t place_of(const char *text, unsigned *line, unsigned *col)
{
    for (const char *p = strchr(text, ':'); p; p = strchr(p + 1, ':')) {
        char *end;
        if (p[1] < '0' || p[1] > '9')
            continue;
        unsigned long l = strtoul(p + 1, &end, 10);
        if (*end != ':' || end[1] < '0' || end[1] > '9')
            continue;
        unsigned long c = strtoul(end + 1, &end, 10);
        if (end[0] != ':' || end[1] != ' ' || p == text)
            continue;
        *line = l > UINT32_MAX ? UINT32_MAX : (unsigned)l;
        *col = c > UINT32_MAX ? UINT32_MAX : (unsigned)c;
        return (size_t)(p - text);
    }
    return 0;
}

/* The rank of the file of `text` (its first `len` bytes): that of an
 * earlier line of the same file, else a new one. */
static size_t rank_of(const moxc__diag_order *o, const char *text, size_t len)
{
    size_t next = 0;
    for (size_t i = 0; i < o->count; i++) {
        const moxc__diag_line *d = &o->lines[i];
        if (d->file_rank == SIZE_MAX)
            continue;
        if (strncmp(d->text, text, len) == 0 && d->text[len] == ':')
            return d->file_rank;
        if (d->file_rank >= next)
            next = d->file_rank + 1;
    }
    return next;
}

bool moxc__diag_order_add(moxc__diag_order *o, const char *line)
{
    if (!moxc__grow(&o->lines, &o->cap, o->count + 1, sizeof *o->lines))
        return false;
    char *copy = moxc__strdup(line);
    if (!copy)
        return false;
    moxc__diag_line d = {copy, SIZE_MAX, 0, 0, o->count};
    size_t len = place_of(line, &d.line, &d.col);
    if (len)
        d.file_rank = rank_of(o, line, len);
    o->lines[o->count++] = d;
    return true;
}

static int by_place(const void *a, const void *b)
{
    const moxc__diag_line *x = a, *y = b;
    if (x->file_rank != y->file_rank)
        return x->file_rank < y->file_rank ? -1 : 1;
    if (x->file_rank != SIZE_MAX && (x->line != y->line || x->col != y->col))
        return x->line != y->line ? (x->line < y->line ? -1 : 1) : (x->col < y->col ? -1 : 1);
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void moxc__diag_order_flush(moxc__diag_order *o, FILE *out)
{
    if (o->count)
        qsort(o->lines, o->count, sizeof *o->lines, by_place);
    for (size_t i = 0; i < o->count; i++) {
        if (out)
            fprintf(out, "%s\n", o->lines[i].text);
        free(o->lines[i].text);
    }
    free(o->lines);
    o->lines = NULL;
    o->count = o->cap = 0;
}
