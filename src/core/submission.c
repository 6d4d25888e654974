/* submission.c - batch recording: the submission object and the
 * intra-batch dependency edges (read-after-write, write-after-read,
 * write-after-write) computed as launches are pushed, in O(1) per access
 * with no allocation for small batches. Dispatch storage is in
 * dispatch.c, submission in scheduler.c, completion in completion.c. */
#include "submission.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "trace.h"

mox__sub *mox__sub_create(mox_device *device)
{
    size_t be = device->info.submission_state_size;
    size_t head = MOX__SUB_OP_OFFSET + MOX__SUB_OP_ROOM;
    /* The backend's scratch, 64-aligned, in whole 16-byte chunks (zeroed
     * by mox__zero_small). */
    size_t size = head + (be ? ((be + 15) & ~(size_t)15) + 63 : 0);
    unsigned char *p = mox__block_alloc(size);
    if (!p)
        return NULL;
    mox__zero_fixed(p, offsetof(mox__sub, alloc_size));
    mox__sub *s = (mox__sub *)p;
    s->alloc_size = (uint32_t)size;
    s->pub.be = be ? (void *)(((uintptr_t)(p + head) + 63u) & ~(uintptr_t)63u) : NULL;
    if (be)
        mox__zero_small(s->pub.be, be);
    atomic_init(&s->refs, 1);
    atomic_init(&s->done, false);
    atomic_init(&s->pub.awaited, false);
    mox__spin_init(&s->lock);
    s->d = s->d_inline;
    s->cap = 2;
    s->preds = s->preds_inline;
    s->cap_preds = 4;
    s->ubs = s->ubs_inline;
    s->cap_ubs = 6;
    s->readers = s->readers_inline;
    s->cap_readers = 6;
    s->waits = s->waits_inline;
    s->cap_waits = 4;
    s->points = s->points_inline;
    s->cap_points = 4;
    s->succs = s->succs_inline;
    (void)device;
    return s;
}

/* The arrays a batch grew out of their inline storage (heap_arrays). */
static __attribute__((noinline)) void free_heap_arrays(mox__sub *sub)
{
    if (sub->d != sub->d_inline)
        mox__block_free(sub->d, sub->cap * sizeof *sub->d);
    if (sub->preds != sub->preds_inline)
        mox__block_free(sub->preds, sub->cap_preds * sizeof *sub->preds);
    if (sub->succs != sub->succs_inline)
        mox__block_free(sub->succs, sub->npreds * sizeof *sub->succs);
    if (sub->ubs != sub->ubs_inline)
        mox__block_free(sub->ubs, sub->cap_ubs * sizeof *sub->ubs);
    if (sub->readers != sub->readers_inline)
        mox__block_free(sub->readers, sub->cap_readers * sizeof *sub->readers);
    if (sub->waits != sub->waits_inline)
        mox__free(sub->waits);
    if (sub->points != sub->points_inline)
        mox__free(sub->points);
    if (sub->ub_index)
        mox__free(sub->ub_index);
    if (sub->gates != sub->gates_inline)
        mox__free(sub->gates);
    if (sub->cands && sub->cands != sub->cands_inline)
        mox__block_free(sub->cands, sub->cands_words * sizeof *sub->cands);
}

void mox__sub_free(mox__sub *sub)
{
    /* By now completion released the buffers, waits and result (or the sub
     * was never submitted): freeing a completed sub calls out to nobody, so
     * it is safe under the device lock (trackers drop only completed subs
     * there). A sub that never ran may still give an upload's pinned memory
     * back to its backend (host_free); it is never freed under a lock. */
    for (uint32_t i = 0; i < sub->count; i++) {
        if (sub->args_released)
            mox__dispatch_free_released(sub->d[i]);
        else
            mox__dispatch_free(sub->d[i]);
    }
    for (uint32_t i = 0; i < sub->nwaits; i++)
        mox__sub_unref(sub->waits[i]);
    /* Left only by a batch that never completed (never submitted): no lock
     * is held then. */
    mox__buffer_unref(sub->yield_bufs[0]);
    mox__buffer_unref(sub->yield_bufs[1]);
    mox__device_unref(sub->other);
    if (sub->staged)
        mox__sub_unref(sub->staged);
    if (sub->result)
        mox_result_release(sub->result);
    if (sub->owned_host)
        mox__free(sub->owned_host);
    if (__builtin_expect(sub->heap_arrays, 0))
        free_heap_arrays(sub);
    mox__sub_block_release(sub); /* its op may still use the block */
}

/* Grows an array that starts in inline storage. Its heap copies are
 * blocks (mox__block_free with cap * elem bytes): a batch of a few dozen
 * dispatches doubles its arrays several times, and a cached block is
 * cheaper than malloc's realloc. */
bool mox__sub_grow_slow(mox__sub *s, void **arr, uint32_t *cap, const void *inline_arr, size_t elem,
                        uint32_t need)
{
    uint32_t ncap = *cap * 2;
    while (ncap < need)
        ncap *= 2;
    void *n = mox__block_alloc((size_t)ncap * elem);
    if (!n)
        return false;
    memcpy(n, *arr, (size_t)*cap * elem);
    if (*arr != inline_arr)
        mox__block_free(*arr, (size_t)*cap * elem);
    *arr = n;
    *cap = ncap;
    s->heap_arrays = true;
    return true;
}

static inline bool grow(mox__sub *s, void **arr, uint32_t *cap, const void *inline_arr, size_t elem,
                        uint32_t need)
{
    return mox__sub_grow(s, arr, cap, inline_arr, elem, need);
}

static uint32_t hash_buffer(const mox_buffer *b, uint32_t mask)
{
    uintptr_t v = (uintptr_t)b;
    v ^= v >> 15;
    v *= UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(v >> 40) & mask;
}

static bool index_rebuild(mox__sub *s, uint32_t cap)
{
    uint32_t *idx = mox__calloc(cap, sizeof *idx);
    if (!idx)
        return false;
    for (uint32_t u = 0; u < s->nubs; u++) {
        uint32_t h = hash_buffer(s->ubs[u].buffer, cap - 1);
        while (idx[h])
            h = (h + 1) & (cap - 1);
        idx[h] = u + 1;
    }
    mox__free(s->ub_index);
    s->ub_index = idx;
    s->heap_arrays = true;
    s->ub_index_cap = cap;
    return true;
}

/* A new entry of the ub table. Its ext_writer is left as it was:
 * preparation sets it for every entry before anything reads it. */
static inline void ub_init(mox__ub *ub, mox_buffer *b)
{
    ub->buffer = b;
    ub->first_write = -1;
    ub->last_write = -1;
    ub->readers = -1;
    ub->refs = 0;
}

/* Index of `b` in the ub table, adding it. UINT32_MAX on out of memory. */
static uint32_t find_ub(mox__sub *s, mox_buffer *b)
{
    enum { LINEAR = 16 };
    if (!s->ub_index) {
        for (uint32_t u = 0; u < s->nubs; u++)
            if (s->ubs[u].buffer == b)
                return u;
    } else {
        uint32_t mask = s->ub_index_cap - 1;
        for (uint32_t h = hash_buffer(b, mask);; h = (h + 1) & mask) {
            uint32_t e = s->ub_index[h];
            if (!e)
                break;
            if (s->ubs[e - 1].buffer == b)
                return e - 1;
        }
    }
    if (!grow(s, (void **)&s->ubs, &s->cap_ubs, s->ubs_inline, sizeof *s->ubs, s->nubs + 1))
        return UINT32_MAX;
    uint32_t u = s->nubs;
    if (s->nubs + 1 > LINEAR && (s->nubs + 1) * 2 > s->ub_index_cap) {
        s->nubs++; /* so the rebuild includes it once filled */
        ub_init(&s->ubs[u], b);
        uint32_t cap = s->ub_index_cap ? s->ub_index_cap * 2 : 64;
        if (!index_rebuild(s, cap)) {
            s->nubs--;
            return UINT32_MAX;
        }
        return u;
    }
    ub_init(&s->ubs[u], b);
    s->nubs++;
    if (s->ub_index) {
        uint32_t mask = s->ub_index_cap - 1;
        uint32_t h = hash_buffer(b, mask);
        while (s->ub_index[h])
            h = (h + 1) & mask;
        s->ub_index[h] = u + 1;
    }
    return u;
}

static inline bool add_pred(mox__sub *s, mox__dispatch *d, uint32_t from)
{
    for (uint32_t k = d->pred_first; k < s->npreds; k++)
        if (s->preds[k] == from)
            return true;
    if (!grow(s, (void **)&s->preds, &s->cap_preds, s->preds_inline, sizeof *s->preds, s->npreds + 1))
        return false;
    s->preds[s->npreds++] = from;
    s->d[from]->succ_count++; /* prepare.c lays the successors out from these counts */
    return true;
}

/* Whether dispatch q follows p directly (p is one of q's predecessors). */
static bool follows(const mox__sub *s, uint32_t q, uint32_t p)
{
    const mox__dispatch *dq = s->d[q];
    for (uint32_t k = dq->pred_first; k < dq->pred_first + dq->pred_count; k++)
        if (s->preds[k] == p)
            return true;
    return false;
}

/* Drops the predecessors of d that another of its predecessors already
 * follows: the order holds through that one (a write after a read of the
 * previous write: the reader follows the writer). Fewer edges to track,
 * and a CUDA graph node whose only edge comes from the kernel just before
 * it can start while that kernel runs (programmatic dependent launch): a
 * second edge from further back kept the chain of a ping-pong sequence from
 * overlapping. One step of implication is checked; the predecessors of
 * earlier dispatches never change, so each dropped edge is implied by a
 * path of kept ones (predecessors have lower indices). */
static void drop_implied_preds(mox__sub *s, mox__dispatch *d)
{
    uint32_t first = d->pred_first, n = s->npreds - first;
    if (n < 2 || n > 64)
        return;
    uint64_t implied = 0;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++)
            if (b != a && s->preds[first + b] > s->preds[first + a] &&
                follows(s, s->preds[first + b], s->preds[first + a])) {
                implied |= UINT64_C(1) << a;
                break;
            }
    if (!implied)
        return;
    uint32_t kept = first;
    for (uint32_t a = 0; a < n; a++) {
        uint32_t p = s->preds[first + a];
        if (implied & (UINT64_C(1) << a))
            s->d[p]->succ_count--;
        else
            s->preds[kept++] = p;
    }
    s->npreds = kept;
}

mox_status mox__sub_push(mox__sub *s, mox__dispatch *d)
{
    if (!grow(s, (void **)&s->d, &s->cap, s->d_inline, sizeof *s->d, s->count + 1)) {
        mox__dispatch_free(d);
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory recording a batch");
    }
    uint32_t i = s->count++;
    s->d[i] = d;
    s->pub.dispatches = s->d;
    s->pub.count = s->count;
    d->index = i;
    s->unloaded += d->kind == MOX__CMD_KERNEL && !d->module;
    s->pub.transfer_count += d->kind != MOX__CMD_KERNEL;
    d->pred_first = s->npreds;
    d->pred_count = 0;
    /* Locals: the stores below (int32_t fields) could alias d->arg_count. */
    mox__karg *args = d->args;
    const uint32_t n = d->arg_count;
    for (uint32_t a = 0; a < n; a++) {
        mox__karg *k = &args[a];
        if (!k->buffer)
            continue;
        uint32_t u = find_ub(s, k->buffer);
        if (u == UINT32_MAX)
            goto oom;
        k->ub = u;
        mox__ub *ub = &s->ubs[u];
        ub->refs++;
        bool writes = k->access != MOX_ACCESS_READ;
        if (ub->last_write >= 0 && (uint32_t)ub->last_write != i && !add_pred(s, d, (uint32_t)ub->last_write))
            goto oom;
        if (writes) {
            for (int32_t r = ub->readers; r >= 0; r = s->readers[r].next)
                if (s->readers[r].dispatch != i && !add_pred(s, d, s->readers[r].dispatch))
                    goto oom;
            ub->readers = -1;
            ub->last_write = (int32_t)i;
            if (ub->first_write < 0)
                ub->first_write = (int32_t)i;
        } else if (ub->readers < 0 || s->readers[ub->readers].dispatch != i) {
            if (!grow(s, (void **)&s->readers, &s->cap_readers, s->readers_inline, sizeof *s->readers,
                      s->nreaders + 1))
                goto oom;
            s->readers[s->nreaders] = (mox__reader_node){i, ub->readers};
            ub->readers = (int32_t)s->nreaders++;
        }
    }
    drop_implied_preds(s, d);
    d->pred_count = s->npreds - d->pred_first;
    s->pub.preds = s->preds;
    if (mox__trace_on())
        mox__trace_record(s, d);
    return MOX_OK;
oom:
    d->pred_count = s->npreds - d->pred_first;
    s->pub.preds = s->preds;
    return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory recording a batch");
}

/* Pushes the batch's dispatches again, in order, into emptied tables (the
 * dispatch array keeps its room, so no push frees its dispatch). */
bool mox__sub_replay(mox__sub *s)
{
    const uint32_t count = s->count;
    if (s->ub_index) { /* (a batch following its memo has none) */
        mox__free(s->ub_index);
        s->ub_index = NULL;
        s->ub_index_cap = 0;
    }
    s->count = 0;
    s->nubs = 0;
    s->npreds = 0;
    s->nreaders = 0;
    s->unloaded = 0;
    s->pub.transfer_count = 0;
    for (uint32_t i = 0; i < count; i++)
        s->d[i]->succ_count = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (mox__sub_push(s, s->d[i]) != MOX_OK) {
            s->count = count; /* every dispatch stays the batch's, to be freed with it */
            s->pub.count = count;
            return false;
        }
    }
    return true;
}
