/* tracker_ops.h - the tracker's per-access operations (tracker.h), inline:
 * a batch's preparation runs them for every buffer it touches (prepare.c),
 * with its visitor inlined, and only growing the reader array calls out
 * (tracker.c). Everything here runs under the device's submission lock. */
#ifndef MOX_CORE_TRACKER_OPS_H
#define MOX_CORE_TRACKER_OPS_H

#include "submission.h"
#include "tracker.h"

static inline bool mox__tracker_finished(const mox__sub *sub)
{
    return atomic_load_explicit(&((mox__sub *)sub)->done, memory_order_acquire);
}

static inline mox__access *mox__tracker_readers(mox__tracker *t)
{
    return t->reader_cap ? t->heap : t->inline_readers;
}

/* Calls add(ctx, sub) for each unfinished submission a new access must wait
 * for (the writer for a read; the writer and every reader for a write).
 * `since`: the new access's queued_at (0 when it was never queued): a
 * writer that finished after it counts as unfinished - the batch waited in
 * the admission queue while it ran, so it was unfinished when the batch was
 * submitted - and is kept for its gate (A9). */
typedef void (*mox__tracker_visit)(void *ctx, mox__sub *sub);
static inline void mox__tracker_deps(mox__tracker *t, bool writes, uint64_t since, mox__tracker_visit add,
                                     void *ctx)
{
    if (t->writer.sub && mox__tracker_finished(t->writer.sub) &&
        (since == 0 || t->writer.sub->done_at <= since)) {
        mox__sub_unref(t->writer.sub);
        t->writer.sub = NULL;
    }
    if (t->writer.sub)
        add(ctx, t->writer.sub);
    if (writes) {
        /* A reader only looks at the writer (O(1)); a writer visits the
         * readers anyway, and prunes them on the way. */
        mox__access *r = mox__tracker_readers(t);
        uint32_t kept = 0;
        for (uint32_t i = 0; i < t->reader_count; i++) {
            if (mox__tracker_finished(r[i].sub)) {
                mox__sub_unref(r[i].sub);
            } else {
                add(ctx, r[i].sub);
                r[kept++] = r[i];
            }
        }
        t->reader_count = kept;
    }
}

/* Makes room for one more reader (so that recording cannot fail halfway
 * through a submission). false on out of memory. */
static inline bool mox__tracker_reserve(mox__tracker *t)
{
    uint32_t cap = t->reader_cap ? t->reader_cap : MOX__TRACKER_INLINE;
    return t->reader_count < cap || mox__tracker_grow(t);
}

/* Records `sub` as the new last writer (with the dispatch that wrote last)
 * or as a reader (room reserved), without taking a reference: the caller
 * takes one per call on sub, all at once (mox__tracker_record takes it). */
static inline void mox__tracker_record_unref(mox__tracker *t, mox__sub *sub, bool writes,
                                             uint32_t dispatch)
{
    if (writes) {
        /* The new writer waited for the old writer and every reader, so it
         * stands for all of them from now on. */
        mox__access *r = mox__tracker_readers(t);
        for (uint32_t i = 0; i < t->reader_count; i++)
            mox__sub_unref(r[i].sub);
        t->reader_count = 0;
        if (t->writer.sub)
            mox__sub_unref(t->writer.sub);
        t->writer.sub = sub;
        t->writer.dispatch = dispatch;
        return;
    }
    /* A reader on the queue of the last one listed stands for it: it
     * signals a higher value of the same timeline, and a writer waits for
     * the highest value of each other queue (prepare.c, build_points) and
     * for its own queue not at all. So the list holds one reader per run
     * on a queue instead of every batch in flight that reads the buffer (a
     * pipeline's input), which a writer would visit and growing would
     * prune. */
    mox__access *r = mox__tracker_readers(t);
    uint32_t n = t->reader_count;
    if (n && r[n - 1].sub->pub.signal.sem == sub->pub.signal.sem) {
        mox__sub_unref(r[n - 1].sub);
        r[n - 1].sub = sub;
        return;
    }
    r[t->reader_count++] = (mox__access){sub, 0};
}

/* Records `sub` (referenced) as the new last writer or as a reader. */
static inline void mox__tracker_record(mox__tracker *t, mox__sub *sub, bool writes,
                                       uint32_t dispatch)
{
    mox__tracker_record_unref(t, mox__sub_ref(sub), writes, dispatch);
}

#endif
