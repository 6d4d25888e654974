/* record_memo.h - recording a batch through the thread's recording memo
 * (record_memo.c): the pushes of mox_batch_push and the seal that ends
 * the recording. */
#ifndef MOX_CORE_RECORD_MEMO_H
#define MOX_CORE_RECORD_MEMO_H

#include "submission.h"

/* A batch's recording (batch.c) goes through these: mox__sub_record
 * pushes as mox__sub_push does, taking the edges from the thread's memo of
 * its last batch while the batch repeats it; mox__sub_seal completes the
 * batch's tables when its recording ends, before anything reads them, and
 * remembers a batch that did not follow the memo (record_memo.c). A batch
 * whose seal took the memo's tables is `laid` (submission.h): its
 * successors and gate candidates come from the memo, and its arguments'
 * ub indices are not written (nothing reads them then).
 * Codes: MOX_ERR_OUT_OF_MEMORY (the batch must then be discarded). */
mox_status mox__sub_record_slow(mox__sub *s, mox__dispatch *d);
mox_status mox__sub_seal(mox__sub *s);
/* Appends dispatch i to a batch that follows the memo (its edges left for
 * the seal). */
static inline void mox__sub_memo_append(mox__sub *s, mox__dispatch *d, uint32_t i)
{
    s->d[i] = d;
    s->count = i + 1;
    s->pub.dispatches = s->d;
    s->pub.count = i + 1;
    d->index = i;
    s->unloaded += d->kind == MOX__CMD_KERNEL && !d->module;
    s->pub.transfer_count += d->kind != MOX__CMD_KERNEL;
}
/* (Inline: every push of a batch that repeats the memo only appends; its
 * first push, a batch off the memo and a grown array go out of line.) */
static inline mox_status mox__sub_record(mox__sub *s, mox__dispatch *d)
{
    uint32_t i = s->count;
    if (__builtin_expect(i != 0 && s->memo && i < s->memo_count && i < s->cap &&
                         !mox__trace_on(), 1)) {
        mox__sub_memo_append(s, d, i);
        return MOX_OK;
    }
    return mox__sub_record_slow(s, d);
}

#endif
