/* tracker.c - per-buffer last writer / readers-since bookkeeping (see
 * tracker.h). Runs under the device's submission lock. */
#include "tracker.h"

#include "alloc.h"
#include "submission.h"

static inline bool finished(const mox__sub *sub)
{
    return atomic_load_explicit(&((mox__sub *)sub)->done, memory_order_acquire);
}

static inline mox__access *readers(mox__tracker *t)
{
    return t->reader_cap ? t->heap : t->inline_readers;
}

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
    mox__access *r = readers(t);
    for (uint32_t i = 0; i < t->reader_count; i++)
        mox__sub_unref(r[i].sub);
    mox__free(t->heap);
    mox__tracker_init(t);
}

void mox__tracker_prune(mox__tracker *t)
{
    if (t->writer.sub && finished(t->writer.sub)) {
        mox__sub_unref(t->writer.sub);
        t->writer.sub = NULL;
    }
    mox__access *r = readers(t);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < t->reader_count; i++) {
        if (finished(r[i].sub))
            mox__sub_unref(r[i].sub);
        else
            r[kept++] = r[i];
    }
    t->reader_count = kept;
}

void mox__tracker_deps(mox__tracker *t, bool writes, mox__tracker_visit add, void *ctx)
{
    if (t->writer.sub && finished(t->writer.sub)) {
        mox__sub_unref(t->writer.sub);
        t->writer.sub = NULL;
    }
    if (t->writer.sub)
        add(ctx, t->writer.sub);
    if (writes) {
        /* A reader only looks at the writer (O(1)); a writer visits the
         * readers anyway, and prunes them on the way. */
        mox__access *r = readers(t);
        uint32_t kept = 0;
        for (uint32_t i = 0; i < t->reader_count; i++) {
            if (finished(r[i].sub)) {
                mox__sub_unref(r[i].sub);
            } else {
                add(ctx, r[i].sub);
                r[kept++] = r[i];
            }
        }
        t->reader_count = kept;
    }
}

bool mox__tracker_reserve(mox__tracker *t)
{
    uint32_t cap = t->reader_cap ? t->reader_cap : MOX__TRACKER_INLINE;
    if (t->reader_count < cap)
        return true;
    /* Full: drop finished readers first (amortised O(1) per read). */
    mox__tracker_prune(t);
    if (t->reader_count < cap)
        return true;
    uint32_t ncap = cap * 2;
    mox__access *n = mox__malloc(ncap * sizeof *n);
    if (!n)
        return false;
    mox__access *old = readers(t);
    for (uint32_t i = 0; i < t->reader_count; i++)
        n[i] = old[i];
    mox__free(t->heap);
    t->heap = n;
    t->reader_cap = ncap;
    return true;
}

void mox__tracker_record(mox__tracker *t, mox__sub *sub, bool writes, uint32_t dispatch)
{
    if (writes) {
        /* The new writer waited for the old writer and every reader, so it
         * stands for all of them from now on. */
        mox__access *r = readers(t);
        for (uint32_t i = 0; i < t->reader_count; i++)
            mox__sub_unref(r[i].sub);
        t->reader_count = 0;
        if (t->writer.sub)
            mox__sub_unref(t->writer.sub);
        t->writer.sub = mox__sub_ref(sub);
        t->writer.dispatch = dispatch;
        return;
    }
    readers(t)[t->reader_count++] = (mox__access){mox__sub_ref(sub), 0};
}
