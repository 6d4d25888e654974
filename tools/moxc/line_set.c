/* line_set.c - the set of line_set.h. Kept at most half full, so a probe
 * ends after a few slots; growing re-inserts every line once. */
#include "line_set.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *text)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * UINT64_C(0x100000001b3);
    return h;
}

/* The slot holding `line`, or the empty slot where it belongs. */
static char **find(char **slots, size_t cap, const char *line)
{
    size_t i = (size_t)hash(line) & (cap - 1);
    while (slots[i] && strcmp(slots[i], line) != 0)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow(moxc__line_set *set)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    char **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i])
            *find(slots, cap, set->slots[i]) = set->slots[i];
    free(set->slots);
    set->slots = slots;
    set->cap = cap;
    return 0;
}

int moxc__line_set_add(moxc__line_set *set, const char *line)
{
    if (set->cap && *find(set->slots, set->cap, line))
        return 0;
    if ((set->count + 1) * 2 > set->cap && grow(set) != 0)
        return -1;
    char **slot = find(set->slots, set->cap, line);
    size_t n = strlen(line) + 1;
    if (!(*slot = malloc(n)))
        return -1;
    memcpy(*slot, line, n);
    set->count++;
    return 1;
}

void moxc__line_set_free(moxc__line_set *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slots[i]);
    free(set->slots);
    set->slots = NULL;
    set->count = set->cap = 0;
}
