/* trace_spans.c - the async spans (op tracks, batches) the trace being
 * written began, so that it records no end or mark of one that began
 * before it (in an earlier trace, or with no trace on): a set of 64-bit
 * track keys, open addressing with linear probing, removal by shifting
 * back (no tombstones). Used under the trace lock (trace.c). */
#include "trace_internal.h"

#include <string.h>

#include "alloc.h"

static size_t slot_of(const mox__trace_spans *s, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (s->cap - 1u);
}

static size_t find(const mox__trace_spans *s, uint64_t key)
{
    size_t i = slot_of(s, key);
    while (s->keys[i] && s->keys[i] != key)
        i = (i + 1u) & (s->cap - 1u);
    return i;
}

static bool grow(mox__trace_spans *s)
{
    size_t cap = s->cap ? 2u * s->cap : 64u;
    uint64_t *old = s->keys;
    size_t old_cap = s->cap;
    s->keys = mox__calloc(cap, sizeof *s->keys);
    if (!s->keys) {
        s->keys = old;
        return false;
    }
    s->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            s->keys[find(s, old[i])] = old[i];
    mox__free(old);
    return true;
}

bool mox__trace_spans_add(mox__trace_spans *s, uint64_t key)
{
    if (2u * (s->count + 1u) > s->cap && !grow(s))
        return false;
    size_t i = find(s, key);
    if (!s->keys[i]) {
        s->keys[i] = key;
        s->count++;
    }
    return true;
}

bool mox__trace_spans_has(const mox__trace_spans *s, uint64_t key)
{
    return s->cap && s->keys[find(s, key)] == key;
}

void mox__trace_spans_remove(mox__trace_spans *s, uint64_t key)
{
    if (!s->cap)
        return;
    size_t i = find(s, key);
    if (s->keys[i] != key)
        return;
    s->keys[i] = 0;
    s->count--;
    /* Keys after it in its run move back where a lookup would stop early. */
    for (size_t j = (i + 1u) & (s->cap - 1u); s->keys[j]; j = (j + 1u) & (s->cap - 1u)) {
        size_t home = slot_of(s, s->keys[j]);
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            s->keys[i] = s->keys[j];
            s->keys[j] = 0;
            i = j;
        }
    }
}

void mox__trace_spans_clear(mox__trace_spans *s)
{
    mox__free(s->keys);
    memset(s, 0, sizeof *s);
}
