/* wait.c - mox_op_wait (rule A2): drive the op, and before sleeping send
 * out the batch it waits for and, on a backend that can complete a batch on
 * the waiting thread (CUDA), watch it there for up to MOX_WAIT_SPIN_US
 * (docs/async.md "How mox_op_wait waits"). */
#include "op.h"

#include "debug_check.h"
#include "device.h"
#include "error.h"
#include "submission.h"
#include "sync.h"

/* The batch a waiter of `op` may help along: the submitted batch `op` waits
 * for now (following then/map to the stage in progress). */
typedef struct pending_batch {
    mox__sub *sub;      /* referenced */
    mox_device *device; /* referenced */
} pending_batch;

static bool pending_take(mox_op *submit, void *dst)
{
    pending_batch *out = dst;
    if (submit->stage != MOX__STAGE_SUBMITTED)
        return false;
    out->sub = mox__sub_ref(submit->u.submit.sub);
    out->device = mox__device_ref(submit->device);
    return true;
}

/* Then and map stages belong to the thread that holds the op, so they are
 * followed without a lock. A clone's inner op is shared: another clone's
 * thread may poll it (and resolve and drop it) at any moment, so it is
 * only looked at under the share's lock, while no clone polls it, and only
 * when it is the submitted batch itself; what is taken is referenced, so
 * it stays valid after the lock is dropped. */
static bool pending_submission(mox_op *op, pending_batch *out)
{
    while (op && op->stage != MOX__STAGE_RESOLVED) {
        switch (op->kind) {
        case MOX__OP_SUBMIT:
            return pending_take(op, out);
        case MOX__OP_THEN:
            op = op->u.then.current;
            break;
        case MOX__OP_MAP:
            op = op->u.map.inner;
            break;
        case MOX__OP_CLONE:
            return mox__clone_pending(op, pending_take, out);
        case MOX__OP_LAUNCH:
        case MOX__OP_READY:
            return false;
        }
    }
    return false;
}

/* Before blocking: if the backend holds the awaited batch back to merge
 * it, it goes out now, so it never waits for a backend thread to start it.
 * Then, for up to the device's wait_spin_ns (MOX_WAIT_SPIN_US), the
 * waiting thread offers itself to complete the batch the moment the device
 * is done (complete_inline), instead of waiting for a backend thread to
 * notice and hand the result over - two thread wake-ups, 20-100 us on a
 * virtual machine. When the backend cannot take the thread (the batch is
 * not out yet, or its launch also carries other batches), it watches for
 * the hand-over instead and offers again every few microseconds; the
 * backend's own threads do not sleep meanwhile (vtable watch), so that
 * hand-over comes within their query pace. A backend that took the thread
 * may sleep it through a run it can predict (help_nap), and keep it past
 * the spin, blocked until the batch is done (block_after): it would only
 * sleep here otherwise. Returns true when it completed the batch. */
typedef struct help_ctx {
    mox__sub *sub;
    mox__parker *parker;
} help_ctx;

static bool help_should_stop(void *p)
{
    help_ctx *h = p;
    return mox__parker_notified(h->parker) ||
           atomic_load_explicit(&h->sub->done, memory_order_acquire);
}

/* Sleeps until `until_ns` or an unpark (the op's waker ran); the unpark
 * stays for the park that follows if the waiter gives up. */
static bool help_nap(void *p, uint64_t until_ns)
{
    help_ctx *h = p;
    if (!atomic_load_explicit(&h->sub->done, memory_order_acquire))
        (void)mox__parker_nap(h->parker, until_ns);
    return help_should_stop(h);
}

static bool help_batch(mox__sub *sub, mox_device *dev, mox__parker *parker)
{
    enum { RETRY_NS = 2000 };
    mox__backend *be = dev->backend;
    if (atomic_load_explicit(&sub->done, memory_order_acquire))
        return false;
    if (be->vt->flush) {
        atomic_store_explicit(&sub->pub.awaited, true, memory_order_release);
        be->vt->flush(be, &sub->pub);
    }
    if (!be->vt->complete_inline)
        return false;
    help_ctx h = {sub, parker};
    /* Past the spin the thread would sleep until a backend thread wakes it:
     * the backend may as well keep it, blocked until the batch is done (one
     * wake-up instead of two). With no spin (MOX_WAIT_SPIN_US=0) that is
     * all it offers. */
    mox__inline_wait w = {mox__now_ns() + dev->wait_spin_ns, help_should_stop, &h, help_nap,
                          dev->wait_spin_ns != 0, true};
    if (dev->wait_spin_ns == 0)
        return be->vt->complete_inline(be, &sub->pub, &w);
    if (be->vt->watch)
        be->vt->watch(be, true);
    bool completed = false;
    for (uint64_t next = 0;;) {
        uint64_t t = mox__now_ns();
        if (t >= w.until_ns)
            break;
        if (t >= next) {
            if ((completed = be->vt->complete_inline(be, &sub->pub, &w)))
                break;
            next = mox__now_ns() + RETRY_NS;
        }
        if (help_should_stop(&h))
            break;
        for (int i = 0; i < 16; i++)
            mox__cpu_relax();
    }
    if (be->vt->watch)
        be->vt->watch(be, false);
    return completed;
}

static bool help_before_blocking(mox_op *op, mox__parker *parker)
{
    pending_batch pb;
    if (!pending_submission(op, &pb))
        return false;
    bool completed = help_batch(pb.sub, pb.device, parker);
    mox__sub_unref(pb.sub);
    mox__device_unref(pb.device);
    return completed;
}

mox_status mox_op_wait(mox_op *op)
{
    MOX__CHECK(op, OP);
    if (!op)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_op_wait: op is NULL");
    if (op->stage != MOX__STAGE_RESOLVED) {
        /* Every cell that ever held this waker is quiesced by the time the
         * op resolves (see sync.h), so the parker may live on the stack. */
        mox__parker parker;
        mox__parker_init(&parker);
        mox_waker w = {mox__parker_unpark, &parker};
        while (mox_op_poll(op, w) == MOX_PENDING)
            if (!help_before_blocking(op, &parker))
                mox__parker_park(&parker);
        mox__parker_destroy(&parker);
    }
    return mox_result_status(mox_op_result(op));
}
