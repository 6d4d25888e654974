/* runner_workloads_raw.c - the workloads suite's raw-CUDA side (see
 * runner_workloads_raw.h), set up: the driver's primary context with its
 * stream, events and spin kernel, and per workload instance the slots, the
 * generated and original modules loaded and each plan bound to functions
 * and device addresses. Runs on an instance are in
 * runner_workloads_raw_runs.c, the replayed graph in
 * runner_workloads_rawgraph.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mox/kernel_abi.h>

#include "runner_gpu.h"
#include "runner_workloads_raw.h"

const char *const raw_kind_names[RAW_KINDS] = {"raw-gen", "raw-orig", "raw-orig-fast"};

/* The gate of the generated entries, by value: a NULL status array means
 * no gating, as for a launch outside a runtime batch. */
static mox_gate no_gate;

bool raw_check(raw_ctx *rc, CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return true;
    snprintf(rc->err, sizeof rc->err, "%.500s: %s", what, mox__cuda_error_name(rc->cu, r));
    if (mox__cuda_error_is_sticky(r))
        rc->dead = true;
    return false;
}

bool raw_open(raw_ctx *rc)
{
    memset(rc, 0, sizeof *rc);
    const char *why = NULL;
    rc->cu = mox__cuda_api_get(&why);
    if (!rc->cu) {
        snprintf(rc->err, sizeof rc->err, "no CUDA driver: %s", why ? why : "?");
        return false;
    }
    const mox__cuda_api *cu = rc->cu;
    int count = 0;
    if (!raw_check(rc, cu->cuDeviceGetCount(&count), "cuDeviceGetCount"))
        return false;
    if (count < 1) {
        snprintf(rc->err, sizeof rc->err, "no CUDA device");
        return false;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/vec_add.fatbin", bench_ref_dir());
    void *spin = NULL;
    size_t size = 0;
    bool ok = raw_check(rc, cu->cuDeviceGet(&rc->device, 0), "cuDeviceGet") &&
              raw_check(rc, cu->cuDevicePrimaryCtxRetain(&rc->ctx, rc->device), "cuDevicePrimaryCtxRetain") &&
              raw_check(rc, cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent") &&
              raw_check(rc, cu->cuStreamCreate(&rc->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate") &&
              raw_check(rc, cu->cuEventCreate(&rc->start, CU_EVENT_DEFAULT), "cuEventCreate") &&
              raw_check(rc, cu->cuEventCreate(&rc->stop, CU_EVENT_DEFAULT), "cuEventCreate") &&
              raw_check(rc, cu->cuEventCreate(&rc->done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (ok && !bench_read_file(path, &spin, &size)) {
        snprintf(rc->err, sizeof rc->err, "%.600s: cannot read (set MOX_BENCH_REF_DIR)", path);
        ok = false;
    }
    ok = ok && raw_check(rc, cu->cuModuleLoadData(&rc->spin_module, spin), path) &&
         raw_check(rc, cu->cuModuleGetFunction(&rc->spin, rc->spin_module, "ref_spin"), "ref_spin");
    free(spin);
    /* Not in the runtime's table (it never reads module variables); only
     * originals with __constant__ or __device__ variables need it. */
    if (ok)
        *(void **)&rc->get_global = dlsym(cu->library, "cuModuleGetGlobal_v2");
    return ok;
}

void raw_close(raw_ctx *rc)
{
    if (!rc->ctx)
        return;
    const mox__cuda_api *cu = rc->cu;
    cu->cuCtxSetCurrent(rc->ctx);
    if (rc->stream)
        cu->cuStreamSynchronize(rc->stream);
    if (rc->start)
        cu->cuEventDestroy(rc->start);
    if (rc->stop)
        cu->cuEventDestroy(rc->stop);
    if (rc->done)
        cu->cuEventDestroy(rc->done);
    if (rc->stream)
        cu->cuStreamDestroy(rc->stream);
    if (rc->spin_module)
        cu->cuModuleUnload(rc->spin_module);
    cu->cuDevicePrimaryCtxRelease(rc->device);
    memset(rc, 0, sizeof *rc);
}

bool raw_has(const raw_instance *ri, raw_kind kind)
{
    return ri->module[kind] && ri->launches[kind];
}

/* True when a buffer the launch writes is also another of its arguments:
 * then mox runs a kernel's default entry, else its no-alias one. */
static bool launch_aliases(const wl_launch *l)
{
    for (uint32_t a = 0; a < l->arg_count; a++) {
        const wl_arg *w = &l->args[a];
        if (w->kind != WL_ARG_BUFFER || w->access == MOX_ACCESS_READ)
            continue;
        for (uint32_t b = 0; b < l->arg_count; b++)
            if (b != a && l->args[b].kind == WL_ARG_BUFFER && l->args[b].slot == w->slot)
                return true;
    }
    return false;
}

/* The function a launch runs: for the generated kernels the entry mox
 * picks for a launch no failure can reach (mox_entry_<k>__ungated, with
 * __noalias where that exists and nothing aliases, as the runtime decides
 * per launch; older artifacts lack some), for the originals their symbol. */
static bool find_function(raw_instance *ri, raw_kind kind, const wl_launch *src, CUfunction *fn)
{
    raw_ctx *rc = ri->rc;
    const char *kernel = raw_plan_of(ri, kind)->kernels[src->kernel];
    char name[192];
    static const char *const variants[][2] = {
        {MOX_ENTRY_UNGATED_SUFFIX, MOX_ENTRY_NOALIAS_SUFFIX}, {"", MOX_ENTRY_NOALIAS_SUFFIX},
        {MOX_ENTRY_UNGATED_SUFFIX, ""}}; /* the runtime's order (mox__cuda_entry_fn) */
    bool aliases = launch_aliases(src);
    for (size_t v = 0; kind == RAW_GEN && v < sizeof variants / sizeof variants[0]; v++) {
        if (aliases && variants[v][1][0])
            continue;
        snprintf(name, sizeof name, "mox_entry_%s%s%s", kernel, variants[v][0], variants[v][1]);
        if (rc->cu->cuModuleGetFunction(fn, ri->module[kind], name) == CUDA_SUCCESS)
            return true;
    }
    snprintf(name, sizeof name, "%s%s", kind == RAW_GEN ? "mox_entry_" : "", kernel);
    return raw_check(rc, rc->cu->cuModuleGetFunction(fn, ri->module[kind], name), name);
}

/* Binds kind's plan to functions and device addresses; a failure leaves
 * the kind out with the reason. */
static bool bind(raw_instance *ri, raw_kind kind)
{
    raw_ctx *rc = ri->rc;
    const wl_instance *in = ri->in;
    const wl_plan *p = raw_plan_of(ri, kind);
    for (uint32_t s = 0; kind != RAW_GEN && s < in->slot_count; s++) {
        if (!in->slots[s].symbol)
            continue;
        if (!rc->get_global) {
            snprintf(rc->err, sizeof rc->err, "the driver has no cuModuleGetGlobal_v2 (for %s)",
                     in->slots[s].symbol);
            return false;
        }
        size_t bytes = 0;
        if (!raw_check(rc, rc->get_global(&ri->sym[kind][s], &bytes, ri->module[kind], in->slots[s].symbol),
                       in->slots[s].symbol))
            return false;
        if (bytes < wl_slot_bytes(in, s)) {
            snprintf(rc->err, sizeof rc->err, "%s holds %zu bytes, the workload needs %zu",
                     in->slots[s].symbol, bytes, wl_slot_bytes(in, s));
            return false;
        }
    }
    raw_launch *ls = calloc(p->count ? p->count : 1, sizeof *ls);
    if (!ls) {
        snprintf(rc->err, sizeof rc->err, "out of host memory");
        return false;
    }
    ri->launches[kind] = ls;
    ri->count[kind] = p->count;
    for (size_t i = 0; i < p->count; i++) {
        const wl_launch *src = &p->launches[i];
        raw_launch *l = &ls[i];
        if (!find_function(ri, kind, src, &l->fn))
            return false;
        l->cfg = src->cfg;
        uint32_t n = 0;
        if (kind == RAW_GEN)
            l->params[n++] = &no_gate;
        for (uint32_t a = 0; a < src->arg_count; a++) {
            const wl_arg *arg = &src->args[a];
            if (arg->kind == WL_ARG_BUFFER) {
                l->ptr[a] = raw_slot_address(ri, kind, arg->slot) +
                            arg->offset * in->slots[arg->slot].type->size;
                l->params[n++] = &l->ptr[a];
            } else {
                l->params[n++] = (void *)(arg->data ? arg->data : arg->value);
            }
        }
    }
    return true;
}

static void leave_out(raw_instance *ri, raw_kind kind)
{
    snprintf(ri->missing[kind], sizeof ri->missing[kind], "%.250s", ri->rc->err);
    free(ri->launches[kind]);
    ri->launches[kind] = NULL;
    if (ri->module[kind])
        ri->rc->cu->cuModuleUnload(ri->module[kind]);
    ri->module[kind] = NULL;
}

static void load_kind(raw_instance *ri, raw_kind kind, const void *image, const char *what)
{
    raw_ctx *rc = ri->rc;
    if (!image) {
        snprintf(ri->missing[kind], sizeof ri->missing[kind], "%.250s", what);
        return;
    }
    if (!raw_check(rc, rc->cu->cuModuleLoadData(&ri->module[kind], image), what) || !bind(ri, kind))
        leave_out(ri, kind);
}

bool raw_instance_open(raw_ctx *rc, raw_instance *ri, const wl_instance *in, const void *gen_fatbin,
                       const char *orig_dir)
{
    memset(ri, 0, sizeof *ri);
    ri->rc = rc;
    ri->in = in;
    if (!raw_check(rc, rc->cu->cuCtxSetCurrent(rc->ctx), "cuCtxSetCurrent"))
        return false;
    for (uint32_t s = 0; s < in->slot_count; s++)
        if (!in->slots[s].symbol &&
            !raw_check(rc, rc->cu->cuMemAlloc(&ri->mem[s], wl_slot_bytes(in, s) + 4), "cuMemAlloc"))
            return false;
    load_kind(ri, RAW_GEN, gen_fatbin, "no generated fatbin");
    const char *stem = in->workload->orig_fatbin;
    for (int k = RAW_ORIG; k <= RAW_FAST; k++) {
        if (!stem || !in->orig.kernel_count) {
            snprintf(ri->missing[k], sizeof ri->missing[k], "no original kernels");
            continue;
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/%s%s.fatbin", orig_dir, stem, k == RAW_FAST ? "-fast" : "");
        void *image = NULL;
        size_t size = 0;
        if (!bench_read_file(path, &image, &size))
            snprintf(rc->err, sizeof rc->err, "%.600s: cannot read (set MOX_WORKLOADS_ORIG_DIR)", path);
        load_kind(ri, (raw_kind)k, image, image ? path : rc->err);
        free(image);
    }
    /* Timed runs start where mox's do: from the workload's initial state,
     * not from whatever cuMemAlloc left (data-dependent kernels such as
     * the histogram's atomics or mergesort run faster on that). */
    for (int k = 0; k < RAW_KINDS; k++)
        if (raw_has(ri, (raw_kind)k) && !raw_reset(ri, (raw_kind)k))
            return false;
    return true;
}

void raw_instance_close(raw_instance *ri)
{
    if (!ri->rc)
        return;
    const mox__cuda_api *cu = ri->rc->cu;
    cu->cuCtxSetCurrent(ri->rc->ctx);
    cu->cuStreamSynchronize(ri->rc->stream);
    raw_graph_close(ri);
    for (int k = 0; k < RAW_KINDS; k++) {
        free(ri->launches[k]);
        if (ri->module[k])
            cu->cuModuleUnload(ri->module[k]);
    }
    for (uint32_t s = 0; s < WL_MAX_SLOTS; s++)
        if (ri->mem[s])
            cu->cuMemFree(ri->mem[s]);
    memset(ri, 0, sizeof *ri);
}
