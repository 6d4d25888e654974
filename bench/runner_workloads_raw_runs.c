/* runner_workloads_raw_runs.c - runs of a workload instance's plans on the
 * raw CUDA stream (see runner_workloads_raw.h): the slots reset to the
 * initial state, runs enqueued and waited by spinning on an event, one run
 * timed by events behind a spin kernel, outputs read back and verified. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_workloads_raw.h"

bool raw_reset(raw_instance *ri, raw_kind kind)
{
    raw_ctx *rc = ri->rc;
    const wl_instance *in = ri->in;
    bool ok = raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent");
    for (uint32_t s = 0; ok && s < in->slot_count; s++) {
        if (in->slots[s].symbol && kind == RAW_GEN)
            continue;
        CUdeviceptr dst = raw_slot_address(ri, kind, s);
        size_t bytes = wl_slot_bytes(in, s);
        if (in->slots[s].init)
            ok = raw_check(rc, rc->cu->cuMemcpyHtoDAsync(dst, in->slots[s].init, bytes, rc->stream),
                           "cuMemcpyHtoDAsync");
        else
            ok = raw_check(rc, rc->cu->cuMemsetD8Async(dst, 0xff, bytes, rc->stream), "cuMemsetD8Async");
    }
    return ok && raw_check(rc, rc->cu->cuStreamSynchronize(rc->stream), "cuStreamSynchronize (reset)");
}

static bool enqueue_run(raw_instance *ri, raw_kind kind)
{
    raw_ctx *rc = ri->rc;
    const raw_launch *ls = ri->launches[kind];
    for (size_t i = 0; i < ri->count[kind]; i++) {
        const raw_launch *l = &ls[i];
        CUresult r = rc->cu->cuLaunchKernel(l->fn, l->cfg.grid.x, l->cfg.grid.y, l->cfg.grid.z,
                                            l->cfg.block.x, l->cfg.block.y, l->cfg.block.z,
                                            l->cfg.shared_bytes, rc->stream, (void **)l->params, NULL);
        if (r != CUDA_SUCCESS) {
            char what[96];
            snprintf(what, sizeof what, "cuLaunchKernel (launch %zu)", i);
            return raw_check(rc, r, what);
        }
    }
    return true;
}

bool raw_runs(raw_instance *ri, raw_kind kind, uint32_t runs)
{
    raw_ctx *rc = ri->rc;
    bool ok = !rc->dead && raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent");
    for (uint32_t r = 0; ok && r < runs; r++)
        ok = enqueue_run(ri, kind);
    ok = ok && raw_check(rc, rc->cu->cuEventRecord(rc->done, rc->stream), "cuEventRecord");
    CUresult q = CUDA_ERROR_NOT_READY;
    while (ok && q == CUDA_ERROR_NOT_READY)
        q = rc->cu->cuEventQuery(rc->done);
    return ok && raw_check(rc, q, "cuEventQuery");
}

bool raw_kernel_time(raw_instance *ri, raw_kind kind, double *us)
{
    raw_ctx *rc = ri->rc;
    /* About 100 us at the H200's 1.98 GHz, plus 10 us per launch: longer
     * than the host takes to queue the run, so the events time the GPU. */
    unsigned long long cycles = 200000ull + 20000ull * ri->count[kind];
    void *spin_params[] = {&cycles};
    float ms = 0;
    bool ok =
        !rc->dead && raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent") &&
        raw_check(rc, rc->cu->cuLaunchKernel(rc->spin, 1, 1, 1, 1, 1, 1, 0, rc->stream, spin_params, NULL),
                  "cuLaunchKernel (ref_spin)") &&
        raw_check(rc, rc->cu->cuEventRecord(rc->start, rc->stream), "cuEventRecord") &&
        enqueue_run(ri, kind) &&
        raw_check(rc, rc->cu->cuEventRecord(rc->stop, rc->stream), "cuEventRecord") &&
        raw_check(rc, rc->cu->cuEventSynchronize(rc->stop), "cuEventSynchronize") &&
        raw_check(rc, rc->cu->cuEventElapsedTime(&ms, rc->start, rc->stop), "cuEventElapsedTime");
    *us = (double)ms * 1e3;
    return ok;
}

bool raw_read(raw_instance *ri, raw_kind kind, void **outputs)
{
    raw_ctx *rc = ri->rc;
    const wl_plan *p = raw_plan_of(ri, kind);
    memset(outputs, 0, p->output_count * sizeof *outputs);
    bool ok = raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent");
    for (uint32_t o = 0; ok && o < p->output_count; o++) {
        uint32_t s = p->outputs[o];
        size_t bytes = wl_slot_bytes(ri->in, s);
        outputs[o] = malloc(bytes + 1);
        if (!outputs[o]) {
            snprintf(rc->err, sizeof rc->err, "out of host memory");
            ok = false;
        } else {
            ok = raw_check(rc, rc->cu->cuMemcpyDtoH(outputs[o], raw_slot_address(ri, kind, s), bytes),
                           "cuMemcpyDtoH");
        }
    }
    if (!ok)
        wl_outputs_free(outputs, p->output_count);
    return ok;
}

bool raw_holds_initial_state(raw_instance *ri, raw_kind kind, char *why, size_t why_len)
{
    raw_ctx *rc = ri->rc;
    const wl_instance *in = ri->in;
    bool ok = raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent");
    for (uint32_t s = 0; ok && s < in->slot_count; s++) {
        if (!in->slots[s].init || (in->slots[s].symbol && kind == RAW_GEN))
            continue;
        size_t bytes = wl_slot_bytes(in, s);
        unsigned char *got = malloc(bytes ? bytes : 1);
        ok = got && raw_check(rc, rc->cu->cuMemcpyDtoH(got, raw_slot_address(ri, kind, s), bytes), "cuMemcpyDtoH");
        if (ok && memcmp(got, in->slots[s].init, bytes) != 0) {
            snprintf(rc->err, sizeof rc->err, "%s: slot '%s' does not hold the workload's initial state",
                     raw_kind_names[kind], in->slots[s].name);
            ok = false;
        } else if (!got) {
            snprintf(rc->err, sizeof rc->err, "out of host memory");
        }
        free(got);
    }
    if (!ok)
        snprintf(why, why_len, "%.400s", rc->err);
    return ok;
}

bool raw_verify(raw_instance *ri, raw_kind kind, char *why, size_t why_len)
{
    void *outputs[WL_MAX_SLOTS];
    if (!raw_reset(ri, kind) || !raw_runs(ri, kind, 1) || !raw_read(ri, kind, outputs)) {
        snprintf(why, why_len, "%.400s", ri->rc->err);
        return false;
    }
    bool ok = ri->in->workload->verify(ri->in, kind != RAW_GEN, (const void *const *)outputs, why, why_len);
    wl_outputs_free(outputs, raw_plan_of(ri, kind)->output_count);
    return ok;
}
