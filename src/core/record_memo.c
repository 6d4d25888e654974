/* record_memo.c - the recording memo: a thread's last batch recording,
 * its dispatches' buffer arguments and the edges and ub table they gave.
 * A program records the same batch again and again (a pipeline's stages,
 * a solver's step), and the edges depend only on which arguments name the
 * same buffer and how each is accessed: a batch whose pushes name the very
 * buffers of the memo's, in the same places with the same accesses, takes
 * the memo's edges instead of computing them (mox__sub_push: the ub table's
 * lookups, the reader chains, the implied edges). Equal pointers give the
 * same pattern of equal buffers whatever the buffers are now, so a buffer
 * freed and another made at its address changes nothing.
 *
 * While a batch follows the memo, a push only appends its dispatch; its
 * seal (batch.c, when its recording ends, before anything reads the
 * tables) compares every argument with the memo's in one pass and, when
 * all agree, copies the memo's predecessors, successor counts and ub
 * table (one compare per argument instead of a lookup, a reader chain and
 * the implied-edge check). A batch that differs in a buffer, an access or
 * its length, a memo replaced meanwhile (the thread sealed another batch)
 * or a push or seal on another thread make the batch compute its edges
 * from its first dispatch (mox__sub_replay), as mox__sub_push would have.
 * A batch that did not follow the memo becomes the memo at its seal. */
#include <stdatomic.h>

#include "alloc.h"
#include "error.h"
#include "record_memo.h"
#include "trace.h"

/* The largest batch remembered (a larger one is recorded as before). At
 * most 16 ubs: a batch with more has a hash index (find_ub). */
enum { MEMO_DISPATCHES = 64, MEMO_ARGS = 4 * MEMO_DISPATCHES, MEMO_UBS = 16,
       MEMO_PREDS = 2 * MEMO_DISPATCHES };

typedef struct memo_dispatch {
    uint32_t arg_first, arg_count;
    uint32_t pred_first, pred_count, succ_first, succ_count;
} memo_dispatch;

/* The gate candidates' bytes (a count per dispatch, an index per
 * argument at most), in whole 8-byte words. */
enum { MEMO_CAND_WORDS = (MEMO_DISPATCHES + MEMO_ARGS + 7) / 8 };

struct mox__record_memo {
    /* Unique to this memo's contents: its first value comes from a
     * process-wide epoch (a memo made at a dead thread's memo's address
     * starts elsewhere), and each new recording adds one. */
    uint64_t gen;
    uint32_t count;            /* 0: empty */
    uint32_t npreds, nubs;
    memo_dispatch d[MEMO_DISPATCHES];
    mox__karg args[MEMO_ARGS]; /* buffer and access as recorded (not referenced) */
    mox__ub ubs[MEMO_UBS];     /* as the seal leaves them */
    uint32_t preds[MEMO_PREDS];
    uint32_t succs[MEMO_PREDS]; /* as preparation lays them out (prepare.c) */
    uint32_t cand_words;
    uint64_t cands[MEMO_CAND_WORDS]; /* as mox__sub.cands says (submission.h) */
};

static _Atomic uint64_t memo_epoch;

static inline mox__record_memo *thread_memo(void)
{
    return mox__thread_block_peek(MOX__SLOT_RECORD_MEMO);
}

/* A push while the batch follows the memo: the dispatch appended, its
 * edges left for the seal. false, with d not taken, on out of memory. */
static inline bool memo_push(mox__sub *s, mox__dispatch *d, uint32_t i)
{
    if (!mox__sub_grow(s, (void **)&s->d, &s->cap, s->d_inline, sizeof *s->d, i + 1))
        return false;
    mox__sub_memo_append(s, d, i);
    return true;
}

/* Stops following the memo: the edges of what was pushed, computed. */
static bool memo_leave(mox__sub *s)
{
    s->memo = NULL;
    return mox__sub_replay(s);
}

mox_status mox__sub_record_slow(mox__sub *s, mox__dispatch *d)
{
    uint32_t i = s->count;
    if (i == 0) {
        mox__record_memo *m = thread_memo();
        if (m && m->count && !mox__trace_on()) {
            s->memo = m;
            s->memo_gen = m->gen;
            s->memo_count = m->count;
        }
    }
    mox__record_memo *m = s->memo;
    if (!m)
        return mox__sub_push(s, d);
    /* (m is not read here: it may be another thread's) */
    if (i < s->memo_count && !mox__trace_on()) {
        if (memo_push(s, d, i))
            return MOX_OK;
    } else if (memo_leave(s)) {
        return mox__sub_push(s, d);
    }
    mox__dispatch_free(d);
    return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory recording a batch");
}

/* The memo's successors and gate candidates, copied into the batch (its
 * preds copied already): the batch is then `laid`. false on out of memory,
 * with nothing taken. */
static bool memo_lay(mox__sub *s, const mox__record_memo *m)
{
    const uint32_t words = m->cand_words, npreds = m->npreds;
    uint64_t *c = s->cands_inline;
    uint32_t *succs = s->succs_inline;
    if (words > sizeof s->cands_inline / sizeof *c && !(c = mox__block_alloc(words * sizeof *c)))
        return false;
    if (npreds > 4 && !(succs = mox__block_alloc(npreds * sizeof *succs))) {
        if (c != s->cands_inline)
            mox__block_free(c, words * sizeof *c);
        return false;
    }
    s->heap_arrays |= c != s->cands_inline || npreds > 4;
    for (uint32_t w = 0; w < words; w++)
        c[w] = m->cands[w];
    for (uint32_t p = 0; p < npreds; p++)
        succs[p] = m->succs[p];
    s->cands = c;
    s->cands_words = words;
    s->succs = succs;
    s->pub.succs = npreds ? succs : NULL;
    s->laid = true;
    return true;
}

/* The batch's edges, ub table, successors and gate candidates from the
 * memo when its dispatches name the same buffers in the same places with
 * the same accesses (it has as many dispatches as the memo). Its
 * arguments' ub indices are not written (a laid batch's are never read;
 * replay writes them when it differs). false when it differs, or on out
 * of memory (nothing else changed then). */
static bool memo_apply(mox__sub *s, const mox__record_memo *m)
{
    uintptr_t diff = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->d[i];
        const memo_dispatch *md = &m->d[i];
        const uint32_t n = d->arg_count;
        diff |= n ^ md->arg_count;
        if (diff)
            return false;
        const mox__karg *restrict k = d->args;
        const mox__karg *restrict ma = &m->args[md->arg_first];
        for (uint32_t a = 0; a < n; a++)
            diff |= ((uintptr_t)k[a].buffer ^ (uintptr_t)ma[a].buffer) |
                    (uintptr_t)(k[a].access ^ ma[a].access);
        /* (replay rewrites these when the batch differs further on) */
        d->pred_first = md->pred_first;
        d->pred_count = md->pred_count;
        d->succ_first = md->succ_first;
        d->succ_count = md->succ_count;
    }
    if (diff ||
        !mox__sub_grow(s, (void **)&s->preds, &s->cap_preds, s->preds_inline, sizeof *s->preds,
                       m->npreds) ||
        !mox__sub_grow(s, (void **)&s->ubs, &s->cap_ubs, s->ubs_inline, sizeof *s->ubs, m->nubs) ||
        !memo_lay(s, m))
        return false;
    for (uint32_t p = 0; p < m->npreds; p++)
        s->preds[p] = m->preds[p];
    for (uint32_t u = 0; u < m->nubs; u++)
        s->ubs[u] = m->ubs[u];
    s->npreds = m->npreds;
    s->nubs = m->nubs;
    s->pub.preds = s->preds;
    return true;
}

/* The successors of the sealed batch `s` as preparation lays them out
 * (prepare.c: each dispatch's after its predecessors', in dispatch order)
 * and its gate candidates, into the memo (its d[] filled in; the
 * candidates always fit: a count per dispatch, an index per argument at
 * most). */
static void memo_store_layout(mox__record_memo *m, const mox__sub *s)
{
    uint32_t fill[MEMO_DISPATCHES], at = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        m->d[i].succ_first = at;
        at += m->d[i].succ_count;
        fill[i] = 0;
    }
    for (uint32_t i = 0; i < s->count; i++)
        for (uint32_t k = m->d[i].pred_first; k < m->d[i].pred_first + m->d[i].pred_count; k++) {
            uint32_t p = s->preds[k];
            m->succs[m->d[p].succ_first + fill[p]++] = i;
        }
    uint8_t *c = (uint8_t *)m->cands;
    uint32_t len = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const mox__dispatch *d = s->d[i];
        const uint32_t head = len++;
        for (uint32_t a = 0; a < d->arg_count; a++) {
            const mox__karg *k = &d->args[a];
            if (!k->buffer)
                continue;
            /* (an argument of a buffer the batch wrote before it: the
             * in-batch writer carries the gate) */
            const mox__ub *ub = &s->ubs[k->ub];
            if (ub->first_write >= 0 && (int32_t)i > ub->first_write)
                continue;
            bool dup = false;
            for (uint32_t e = head + 1; e < len; e++)
                dup |= c[e] == k->ub;
            if (!dup)
                c[len++] = (uint8_t)k->ub;
        }
        c[head] = (uint8_t)(len - head - 1);
    }
    while (len % 8)
        c[len++] = 0;
    m->cand_words = len / 8;
}

/* Remembers the sealed batch `s` (its tables complete) in the thread's
 * memo, when it fits. */
static void memo_store(const mox__sub *s)
{
    if (s->count > MEMO_DISPATCHES || s->nubs > MEMO_UBS || s->npreds > MEMO_PREDS || s->ub_index)
        return;
    mox__record_memo *m = mox__thread_block(MOX__SLOT_RECORD_MEMO, sizeof *m);
    if (!m)
        return;
    if (m->gen == 0)
        m->gen = (atomic_fetch_add_explicit(&memo_epoch, 1, memory_order_relaxed) + 1) << 32;
    m->gen++;
    m->count = 0;
    uint32_t nargs = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const mox__dispatch *d = s->d[i];
        if (d->arg_count > MEMO_ARGS - nargs)
            return; /* (the memo stays empty) */
        m->d[i] = (memo_dispatch){nargs, d->arg_count, d->pred_first, d->pred_count, 0,
                                  d->succ_count};
        for (uint32_t a = 0; a < d->arg_count; a++) {
            const mox__karg *k = &d->args[a];
            m->args[nargs++] = (mox__karg){k->buffer, k->access, 0};
        }
    }
    memo_store_layout(m, s);
    for (uint32_t u = 0; u < s->nubs; u++) {
        const mox__ub *ub = &s->ubs[u];
        m->ubs[u] = (mox__ub){.buffer = ub->buffer, .first_write = ub->first_write,
                              .last_write = ub->last_write, .readers = -1, .refs = ub->refs};
    }
    for (uint32_t p = 0; p < s->npreds; p++)
        m->preds[p] = s->preds[p];
    m->npreds = s->npreds;
    m->nubs = s->nubs;
    m->count = s->count;
}

mox_status mox__sub_seal(mox__sub *s)
{
    mox__record_memo *m = s->memo;
    if (!m) {
        if (s->count && !mox__trace_on())
            memo_store(s);
        return MOX_OK;
    }
    s->memo = NULL;
    if (m == thread_memo() && m->gen == s->memo_gen && s->count == m->count && memo_apply(s, m))
        return MOX_OK;
    if (!mox__sub_replay(s))
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory recording a batch");
    if (!mox__trace_on())
        memo_store(s);
    return MOX_OK;
}
