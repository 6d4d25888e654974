/* tracker.h - per-buffer access tracking across submissions (rule A6).
 *
 * Each buffer remembers its last writer (submission + the dispatch in it
 * that wrote last) and the submissions that read it since. A new submission
 * waits for the last writer if it reads, for the writer and the readers if
 * it writes. Entries of finished submissions are pruned when met. Small
 * inline arrays mean no allocation per access on the hot path. Everything
 * here runs under the device's submission lock. */
#ifndef MOX_CORE_TRACKER_H
#define MOX_CORE_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct mox__sub mox__sub;

typedef struct mox__access {
    mox__sub *sub;             /* retained */
    uint32_t dispatch;         /* writer: the dispatch that wrote last */
} mox__access;

#define MOX__TRACKER_INLINE 3

typedef struct mox__tracker {
    mox__access writer;        /* sub == NULL: none pending */
    uint32_t reader_count;
    uint32_t reader_cap;       /* 0: the inline array is in use */
    mox__access *heap;
    mox__access inline_readers[MOX__TRACKER_INLINE];
} mox__tracker;

void mox__tracker_init(mox__tracker *t);
/* Releases every entry (the buffer is being freed). */
void mox__tracker_clear(mox__tracker *t);
/* Drops entries of finished submissions. */
void mox__tracker_prune(mox__tracker *t);

/* The unfinished last writer, or NULL. */
static inline const mox__access *mox__tracker_writer(const mox__tracker *t)
{
    return t->writer.sub ? &t->writer : (const mox__access *)0;
}
/* The reader array is full: prunes finished readers, and doubles it if
 * that freed nothing (mox__tracker_reserve's slow path). false on out of
 * memory. */
bool mox__tracker_grow(mox__tracker *t);
/* The per-access operations (deps, reserve, record) are inline, in
 * tracker_ops.h. */

#endif
