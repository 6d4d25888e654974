/* tracker.c - per-buffer last writer / readers-since bookkeeping (see
 * tracker.h): what is off a batch's path (the rest is inline, in
 * tracker_ops.h). Runs under the device's submission lock. */
#include "tracker.h"

#include "alloc.h"
#include "tracker_ops.h"

void mox__tracker_init(mox__tracker *t)
{
    t->writer.sub = NULL;
    t->writer.dispatch = 0;
    t->reader_count = 0;
    t->reader_cap = 0;
    t->heap = NULL;
}

void mox__tracker_clear(mox__tracker *t)
{
    if (t->writer.sub)
        mox__sub_unref(t->writer.sub);
    mox__access *r = mox__tracker_readers(t);
    for (uint32_t i = 0; i < t->reader_count; i++)
        mox__sub_unref(r[i].sub);
    mox__free(t->heap);
    mox__tracker_init(t);
}

static void prune_readers(mox__tracker *t)
{
    mox__access *r = mox__tracker_readers(t);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->reader_count; i++) {
        if (mox__tracker_finished(r[i].sub))
            mox__sub_unref(r[i].sub);
        else
            r[kept++] = r[i];
    }
    t->reader_count = kept;
}

void mox__tracker_prune(mox__tracker *t)
{
    if (t->writer.sub && mox__tracker_finished(t->writer.sub)) {
        mox__sub_unref(t->writer.sub);
        t->writer.sub = NULL;
    }
    prune_readers(t);
}

bool mox__tracker_grow(mox__tracker *t)
{
    uint32_t cap = t->reader_cap ? t->reader_cap : MOX__TRACKER_INLINE;
    /* Full: drop finished readers first (amortised O(1) per read). Not the
     * writer: a finished one is kept for the gates of batches queued while
     * it ran (mox__tracker_deps). */
    prune_readers(t);
    /* Grown also when more than half are still unfinished: a buffer that
     * many batches in flight read (a pipeline's input) would otherwise be
     * pruned every few reads, each time scanning them all. */
    if (t->reader_count <= cap / 2)
        return true;
    uint32_t ncap = cap * 2;
    mox__access *n = mox__malloc(ncap * sizeof *n);
    if (!n)
        return false;
    mox__access *old = mox__tracker_readers(t);
    for (uint32_t i = 0; i < t->reader_count; i++)
        n[i] = old[i];
    mox__free(t->heap);
    t->heap = n;
    t->reader_cap = ncap;
    return true;
}
