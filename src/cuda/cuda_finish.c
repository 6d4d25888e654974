/* src/cuda/cuda_finish.c - a finished (or failed) launch towards the
 * core: dispatch states (the host flag, then the status words only when
 * something failed), copybacks out of staging, the instance, event and
 * staging given back, the stream's held-back work asked of the launcher,
 * then mox__execution_complete for every member with no backend lock held.
 */
#include "cuda/cuda_internal.h"

#include <stdlib.h>
#include <string.h>

/* A driver failure `call` reported while finishing: its code, and *error
 * made for it (the device marked lost for a sticky one). */
static mox_status finish_failure(mox__cuda_dev *dev, CUresult r, const char *call, const char *what,
                                 mox_error **error)
{
    mox_status status = mox__cuda_fail(dev->api, r, call, what);
    if (status == MOX_ERR_DEVICE_LOST) {
        mox__lock(&dev->lock);
        mox__cuda_dev_lost(dev, mox__cuda_last_message());
        mox__unlock(&dev->lock);
        *error = mox__error_new(MOX_ERR_DEVICE_LOST, "%s", dev->lost_message);
    } else {
        *error = mox__cuda_last_error(status);
    }
    return status;
}

/* How the launch ended as a whole, before its dispatches are looked at:
 * its own status, the failure of another device it waited for, or the
 * query's result `r`. *error is taken over from the group. */
static mox_status launch_status(mox__cuda_dev *dev, mox__cuda_group *g, CUresult r, mox_error **error)
{
    mox_status status = g->status;
    *error = g->error;
    g->error = NULL;
    /* Another device it waited for was lost: whatever ran, it completes
     * with that failure (the same error object: the core then knows this
     * device is not the lost one). */
    mox_error *foreign = status == MOX_OK && g->foreign_count ? mox__cuda_foreign_failure(g) : NULL;
    if (foreign) {
        *error = mox_error_retain(foreign);
        return mox_error_code(foreign);
    }
    if (status == MOX_OK && r != CUDA_SUCCESS)
        return finish_failure(dev, r, "cuEventQuery", "(waiting for a launch)", error);
    if (status == MOX_ERR_DEVICE_LOST && !*error)
        *error = mox__error_new(MOX_ERR_DEVICE_LOST, "%s", dev->lost_message);
    else if (status != MOX_OK && !*error)
        *error = mox__cuda_last_error(status);
    return status;
}

/* Every dispatch of a launch whose status words were not read ended OK;
 * returns false (none failed). */
static bool states_ok(const mox__cuda_group *g)
{
    for (uint32_t s = 0, nsubs = g->nsubs; s < nsubs; s++) {
        const mox__submission *pub = g->subs[s];
        for (mox__dispatch *const *d = pub->dispatches, *const *end = d + pub->count; d != end; d++) {
            (*d)->state = MOX_DISPATCH_OK;
            (*d)->fail_code = 0;
        }
    }
    return false;
}

/* Whether a dependency of dispatch d of `pub` did not end OK: a
 * predecessor in its execution, or a gate on an earlier one. Both come
 * before it in the launch or completed before it did (launches complete
 * in order), so their states are final here. */
static bool dependency_not_ok(const mox__submission *pub, const mox__dispatch *d)
{
    for (uint32_t k = 0; k < d->pred_count; k++)
        if (pub->dispatches[pub->preds[d->pred_first + k]]->state != MOX_DISPATCH_OK)
            return true;
    for (uint32_t k = 0; k < d->gate_count; k++) {
        const mox__gate *gate = &pub->gates[d->gate_first + k];
        if (gate->sub->dispatches[gate->dispatch]->state != MOX_DISPATCH_OK)
            return true;
    }
    return false;
}

/* The dispatches' states from the launch's status words (2 per node);
 * whether one did not end OK. */
static bool states_from(const mox__cuda_group *g, const uint32_t *words)
{
    bool failed = false;
    uint32_t at = 0;
    for (uint32_t s = 0; s < g->nsubs; s++) {
        mox__submission *pub = g->subs[s];
        for (uint32_t i = 0; i < pub->count; i++, at++) {
            mox__dispatch *d = pub->dispatches[i];
            d->state = words[2u * at];
            d->fail_code = words[2u * at + 1u];
            if ((d->kind == MOX__CMD_COPY || d->kind == MOX__CMD_FILL) &&
                d->state != MOX_DISPATCH_OK) {
                /* a copy or fill cannot fail itself: its slot held a mirrored failure */
                d->state = MOX_DISPATCH_GATED;
                d->fail_code = 0;
            }
            /* A deferred kernel whose threads stored nothing left its word
             * OK behind a failed dependency (cuda_gates.c): it was gated,
             * as the check at entry would have said. */
            if (d->state == MOX_DISPATCH_OK && (d->kernel_features & MOX_KFEAT_GATE_DEFERRED) &&
                d->kind == MOX__CMD_KERNEL && dependency_not_ok(pub, d)) {
                d->state = MOX_DISPATCH_GATED;
                d->fail_code = 0;
            }
            failed |= d->state != MOX_DISPATCH_OK;
        }
    }
    return failed;
}

/* The states of a launch that ran: all OK when its host flag is clear and
 * nothing it gated on may have failed, else from its status words (one
 * cuMemcpyDtoH). Copybacks are copied out. Returns the launch's status
 * (not OK only if the words cannot be read); *failed_any: a dispatch did
 * not end OK. */
static mox_status read_states(mox__cuda_dev *dev, mox__cuda_group *g, mox_error **error,
                              bool *failed_any)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_inst *inst = g->inst;
    bool flagged = *(volatile uint32_t *)inst->host_flag != 0;
    bool read = flagged || g->check_status;
    /* Earlier launches completed before this one: their states are final.
     * A deferred dispatch a gate names is there with its derived state,
     * which is not OK whenever a slot it carried into this launch's gates
     * is not (cuda_gates.c): those need no test of their own. */
    for (uint32_t i = 0; !read && i < g->live_count; i++)
        read = g->live_gates[i].sub->dispatches[g->live_gates[i].dispatch]->state != MOX_DISPATCH_OK;
    uint32_t stack_words[64];
    uint32_t *words = NULL;
    if (read) {
        /* The status words are read in this device's context: a
         * completion of another device may have left the thread in its
         * own. Only here: a launch that succeeded makes no call that
         * needs a context (launches and the trace set theirs). */
        api->cuCtxSetCurrent(dev->ctx);
        words = g->count <= 32 ? stack_words : mox__malloc(8u * g->count);
        CUresult rr = words ? api->cuMemcpyDtoH(words, dev->pool + 8ull * inst->slot_base, 8u * g->count)
                            : CUDA_ERROR_OUT_OF_MEMORY;
        atomic_fetch_add(&dev->stats.status_reads, 1);
        if (rr != CUDA_SUCCESS) {
            if (words != stack_words)
                mox__free(words);
            return finish_failure(dev, rr, "cuMemcpyDtoH", "(reading dispatch states)", error);
        }
    }
    *failed_any = flagged | (words ? states_from(g, words) : states_ok(g));
    for (uint32_t c = 0; c < g->copyback_count; c++)
        memcpy(g->copybacks[c].host, g->copybacks[c].stage, g->copybacks[c].bytes);
    if (words && words != stack_words)
        mox__free(words);
    return MOX_OK;
}

/* Under dev->lock: the launch's resources and its place in the stream go
 * back, held-back work of its stream is asked of the launcher. Returns
 * whether the group must be left for the completion thread to free (a
 * waiting thread finishes it, `by_waiter`, and it is in that thread's
 * snapshot). */
static bool release_locked(mox__cuda_dev *dev, mox__cuda_group *g, bool failed,
                           const mox__cuda_seen *by_waiter)
{
    if (by_waiter) {
        /* Claimed until now: the completion thread neither queried nor
         * finished it, and a launch that waits on one of its points made
         * it a predecessor (npred, dropped by mox__cuda_group_finish) as it would any launch
         * still in flight. Its event is still its own (given back below). */
        if (by_waiter->inst)
            mox__cuda_run_observe(dev, by_waiter->inst, by_waiter->ns, by_waiter->gap,
                                  by_waiter->napped);
        mox__cuda_inflight_retire(dev, g);
        mox__cuda_quiet_after_inline(dev, by_waiter->seen);
    }
    /* States are final: other devices need neither its event nor its
     * status words any more (one that still waits to call
     * cuStreamWaitEvent on the event gives it back itself). */
    if (mox__cuda_sem_unregister(dev, g) && g->launched)
        mox__cuda_event_keep(dev, g->event_spin, g->event);
    for (uint32_t s = 0; s < g->nsubs; s++) {
        mox__cuda_sub *me = mox__cuda_sub_of(g->subs[s]);
        me->done = true;
        me->group = NULL; /* g is freed below; its address may be reused */
    }
    /* ss->last stays g until its executions completed (settle_locked): a
     * later launch of its stream is still its successor. */
    mox__cuda_stream_state *ss = &dev->stream_state[g->stream];
    if (g->launched) {
        ss->depth--;
        g->inst->busy = false;
        g->inst->dirty |= failed;
        mox__cuda_inst_release(dev, g->inst);
        /* The stream's held-back executions go out now that it drains
         * (lost: they fail at once): asked of the launcher. */
        bool lost = atomic_load(&dev->lost);
        if (ss->pending_head && (lost || (!mox__cuda_held(dev) && ss->depth < dev->defer_depth)))
            dev->flush_mask |= 1u << g->stream;
    }
    mox__cuda_drop_readers(dev, g);
    /* Every other request is run by whoever made it (cuda_submit.c): with
     * no flush asked there is nothing to launch. */
    if (dev->flush_mask)
        mox__cuda_launcher_enter(dev); /* unless someone launches already */
    /* Unlinked: no later snapshot takes it, so a clear flag stays clear. */
    return by_waiter && g->snapped;
}

/* Under dev->lock, once g's executions completed towards the core: g
 * leaves the finishing list and its stream, so it takes no successor any
 * more, and only now may its successors finish (a waiting thread claims
 * one whose npred is 0). Their ops then resolve after g's, never before
 * an op they were ordered after - also when one was launched after g's
 * end was seen (mox__cuda_group_of_point finds g here). */
static void settle_locked(mox__cuda_dev *dev, mox__cuda_group *g)
{
    if (g->finishing) {
        if (g->fin_prev)
            g->fin_prev->fin_next = g->fin_next;
        else
            dev->finishing = g->fin_next;
        if (g->fin_next)
            g->fin_next->fin_prev = g->fin_prev;
        g->fin_next = g->fin_prev = NULL;
        g->finishing = false;
    }
    mox__cuda_stream_state *ss = &dev->stream_state[g->stream];
    if (ss->last == g)
        ss->last = NULL;
    for (uint32_t i = 0; i < g->nsucc; i++)
        atomic_fetch_sub_explicit(&g->succs[i]->npred, 1, memory_order_release);
}

void mox__cuda_group_finish(mox__cuda_dev *dev, mox__cuda_group *g, CUresult r,
                            const mox__cuda_seen *by_waiter)
{
    mox_error *error = NULL;
    mox_status status = launch_status(dev, g, r, &error);
    bool failed_any = false;
    if (status == MOX_OK)
        status = read_states(dev, g, &error, &failed_any);
    if (status != MOX_OK) {
        /* Nothing of it is known to have finished. */
        for (uint32_t s = 0; s < g->nsubs; s++)
            for (uint32_t i = 0; i < g->subs[s]->count; i++) {
                g->subs[s]->dispatches[i]->state = MOX_DISPATCH_GATED;
                g->subs[s]->dispatches[i]->fail_code = 0;
            }
    }
    if (g->trace_start) /* the states are final, the launch has finished */
        mox__cuda_trace_finish(dev, g);

    mox__lock(&dev->lock);
    bool reap = release_locked(dev, g, failed_any || status != MOX_OK, by_waiter);
    mox__unlock(&dev->lock);
    if (g->pin_count)
        mox__cuda_foreign_release(g); /* other devices' instances it read */
    for (uint32_t i = 0; i < g->stage_count; i++)
        mox__cuda_stage_put(dev, g->stages[i]);
    g->stage_count = 0;

    if (status != MOX_OK && !error)
        error = mox__error_new(status, "the CUDA backend failed the launch");
    for (uint32_t s = 0; s < g->nsubs; s++)
        mox__execution_complete(g->subs[s], error ? mox_error_retain(error) : NULL);
    mox_error_release(error);
    mox__lock(&dev->lock);
    settle_locked(dev, g);
    if (reap) {
        g->next = dev->reap;
        dev->reap = g;
    }
    mox__unlock(&dev->lock);
    if (!reap)
        mox__cuda_group_free(g);
}

void mox__cuda_groups_reap(mox__cuda_dev *dev)
{
    while (dev->reap) {
        mox__cuda_group *g = dev->reap;
        dev->reap = g->next;
        mox__cuda_group_free(g);
    }
}
