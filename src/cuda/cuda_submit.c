/* src/cuda/cuda_submit.c - turns one batch from the core into work on a
 * stream: picks the stream (the one an earlier submission it waits on runs
 * on, so in-order streams give the ordering for free; otherwise round
 * robin), orders it after submissions on other streams with
 * cuStreamWaitEvent, resolves gate dependencies on earlier submissions to
 * their status slots, launches an idle instance of the batch's plan and
 * records the completion event the completion thread watches.
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mox__cuda_sub *mox__cuda_sub_retain(mox__cuda_sub *sub)
{
    atomic_fetch_add(&sub->refs, 1);
    return sub;
}

void mox__cuda_sub_release(mox__cuda_sub *sub)
{
    if (!sub || atomic_fetch_sub(&sub->refs, 1) != 1)
        return;
    free(sub->states);
    free(sub->read_insts);
    free(sub);
}

static void drop_readers(mox__cuda_dev *dev, mox__cuda_sub *sub)
{
    for (uint32_t i = 0; i < sub->read_count; i++) {
        mox__cuda_inst *ri = sub->read_insts[i];
        ri->readers--;
        mox__cuda_inst_release(dev, ri);
    }
    sub->read_count = 0;
}

/* Resolves every external gate dependency to a slot. Caller holds the lock. */
static mox_status resolve_ext(mox__cuda_dev *dev, mox__cuda_sub *sub, const mox__cuda_batch *b,
                              uint32_t *slots)
{
    uint32_t k = 0, cap = 0;
    for (uint32_t i = 0; i < b->count; i++)
        cap += b->dispatches[i].ext_count;
    if (cap) {
        sub->read_insts = malloc(cap * sizeof *sub->read_insts);
        if (!sub->read_insts)
            return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory submitting a batch");
    }
    for (uint32_t i = 0; i < b->count; i++) {
        const mox__cuda_dispatch *d = &b->dispatches[i];
        if (d->inherited_failure)
            sub->check_status = true;
        for (uint32_t e = 0; e < d->ext_count; e++) {
            mox__cuda_sub *x = d->ext[e].sub;
            uint32_t j = d->ext[e].dispatch;
            if (x->done) {
                /* Finished already: its outcome is known on the host. */
                bool bad = x->states && x->states[j] != MOX_DISPATCH_OK;
                slots[k++] = bad ? MOX__CUDA_SENTINEL_SLOT : MOX__CUDA_OK_SLOT;
                if (bad)
                    sub->check_status = true;
                continue;
            }
            /* Still running: read its slot on the device. The reader count
             * keeps its instance from being re-launched (which would reset
             * the slot) until this submission completes. */
            slots[k++] = x->inst->slot_base + j;
            x->inst->readers++;
            sub->read_insts[sub->read_count++] = x->inst;
            /* A gated dispatch does not raise our flag: read the words. */
            sub->check_status = true;
        }
    }
    return MOX_OK;
}

static uint32_t pick_stream(mox__cuda_dev *dev, const mox__cuda_batch *b)
{
    for (uint32_t i = b->wait_count; i-- > 0;)
        if (!b->waits[i]->done)
            return b->waits[i]->stream;
    for (uint32_t i = 0; i < b->count; i++)
        for (uint32_t e = 0; e < b->dispatches[i].ext_count; e++)
            if (!b->dispatches[i].ext[e].sub->done)
                return b->dispatches[i].ext[e].sub->stream;
    uint32_t s = dev->next_stream;
    dev->next_stream = (s + 1) % MOX__CUDA_STREAMS;
    return s;
}

static mox_status wait_for(mox__cuda_dev *dev, mox__cuda_sub *w, uint32_t stream)
{
    if (w->done || w->stream == stream)
        return MOX_OK;
    CUresult r = dev->api->cuStreamWaitEvent(dev->streams[stream], w->event, 0);
    return r == CUDA_SUCCESS ? MOX_OK : mox__cuda_fail(dev->api, r, "cuStreamWaitEvent", NULL);
}

mox_status mox__cuda_submit(mox__cuda_dev *dev, const mox__cuda_batch *b, mox__cuda_done_fn done,
                            void *done_ctx, mox__cuda_sub **out)
{
    *out = NULL;
    if (atomic_load(&dev->health) != MOX_OK)
        return mox__cuda_error(MOX_ERR_DEVICE_LOST, "CUDA device lost: %s", dev->lost_message);
    mox_status st = mox__cuda_dev_enter(dev);
    if (st != MOX_OK)
        return st;
    mox__cuda_sub *sub = calloc(1, sizeof *sub);
    uint32_t ext_total = 0;
    for (uint32_t i = 0; i < b->count; i++)
        ext_total += b->dispatches[i].ext_count;
    uint32_t stack_slots[64];
    uint32_t *slots = ext_total <= 64 ? stack_slots : malloc(ext_total * sizeof *slots);
    if (!sub || !slots) {
        free(sub);
        if (slots != stack_slots)
            free(slots);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory submitting a batch");
    }
    atomic_init(&sub->refs, 2); /* the caller's and the in-flight list's */
    sub->dev = dev;
    sub->count = b->count;
    sub->done_fn = done;
    sub->done_ctx = done_ctx;

    pthread_mutex_lock(&dev->lock);
    sub->stream = pick_stream(dev, b);
    CUstream stream = dev->streams[sub->stream];
    st = resolve_ext(dev, sub, b, slots);
    for (uint32_t i = 0; st == MOX_OK && i < b->wait_count; i++)
        st = wait_for(dev, b->waits[i], sub->stream);
    for (uint32_t i = 0; st == MOX_OK && i < b->count; i++)
        for (uint32_t e = 0; st == MOX_OK && e < b->dispatches[i].ext_count; e++)
            st = wait_for(dev, b->dispatches[i].ext[e].sub, sub->stream);
    if (st == MOX_OK)
        st = mox__cuda_event_get(dev, &sub->event);
    if (st == MOX_OK)
        st = mox__cuda_plan_acquire(dev, b, &sub->inst);
    if (st == MOX_OK) {
        st = mox__cuda_inst_launch(dev, sub->inst, b, slots, stream);
        if (st == MOX_OK) {
            CUresult r = dev->api->cuEventRecord(sub->event, stream);
            if (r != CUDA_SUCCESS)
                st = mox__cuda_fail(dev->api, r, "cuEventRecord", NULL);
        }
        if (st != MOX_OK) {
            /* Part of the batch may be queued: let it drain before the
             * instance can be reused. Rare (driver errors only). */
            dev->api->cuStreamSynchronize(stream);
            sub->inst->busy = false;
            sub->inst->dirty = true;
            mox__cuda_inst_release(dev, sub->inst);
        }
    }
    if (st == MOX_OK) {
        mox__cuda_completion_push(dev, sub);
    } else {
        drop_readers(dev, sub);
        if (sub->event)
            mox__cuda_event_put(dev, sub->event);
    }
    pthread_mutex_unlock(&dev->lock);
    if (slots != stack_slots)
        free(slots);
    if (st != MOX_OK) {
        if (st == MOX_ERR_DEVICE_LOST)
            mox__cuda_dev_lost(dev, mox__cuda_last_message());
        free(sub->read_insts);
        free(sub);
        return st;
    }
    *out = sub;
    return MOX_OK;
}

void mox__cuda_sub_finish(mox__cuda_dev *dev, mox__cuda_sub *sub, mox_status status,
                          const char *message)
{
    const mox__cuda_api *api = dev->api;
    mox__cuda_inst *inst = sub->inst;
    bool flagged = status == MOX_OK && *(volatile uint32_t *)inst->host_flag != 0;
    uint32_t *words = NULL;
    if (status == MOX_OK && (flagged || sub->check_status)) {
        words = malloc(8u * (sub->count ? sub->count : 1));
        sub->states = malloc(8u * (sub->count ? sub->count : 1));
        if (!words || !sub->states) {
            status = MOX_ERR_OUT_OF_MEMORY;
            message = "out of memory reading CUDA dispatch status";
        } else {
            CUresult r = api->cuMemcpyDtoH(words, dev->pool + 8ull * inst->slot_base,
                                           8u * sub->count);
            atomic_fetch_add(&dev->stats.status_reads, 1);
            if (r != CUDA_SUCCESS) {
                status = mox__cuda_fail(api, r, "cuMemcpyDtoH", "(reading dispatch status)");
                message = mox__cuda_last_message();
                if (status == MOX_ERR_DEVICE_LOST)
                    mox__cuda_dev_lost(dev, message);
            } else {
                sub->codes = sub->states + sub->count;
                for (uint32_t i = 0; i < sub->count; i++) {
                    sub->states[i] = words[2u * i];
                    sub->codes[i] = words[2u * i + 1u];
                    if (words[2u * i] != MOX_DISPATCH_OK)
                        sub->failed_any = true;
                }
            }
        }
    }
    free(words);
    if (!sub->failed_any) {
        free(sub->states);
        sub->states = NULL;
        sub->codes = NULL;
    }

    pthread_mutex_lock(&dev->lock);
    sub->done = true;
    inst->busy = false;
    if (flagged || sub->failed_any || status != MOX_OK)
        inst->dirty = true;
    mox__cuda_inst_release(dev, inst);
    drop_readers(dev, sub);
    mox__cuda_event_put(dev, sub->event);
    pthread_mutex_unlock(&dev->lock);

    mox__cuda_outcome o;
    o.status = status;
    o.message = message;
    o.count = sub->count;
    o.states = sub->states;
    o.codes = sub->codes;
    if (sub->done_fn)
        sub->done_fn(sub->done_ctx, sub, &o);
    mox__cuda_sub_release(sub);
}
