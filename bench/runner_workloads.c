/* runner_workloads.c - the workloads suite: every public-sample port of
 * bench/workloads and the examples' kernels, at sizes where kernels take
 * 5-500 us on an H200, run through mox and, on CUDA, on one raw stream of
 * the same process. Cases (suite "workloads", name "<workload>.<mode>"):
 *   single     one run constructed and waited (a sample: the mean of reps)
 *   pipelined  `runs` runs back to back (one sequence each), then one wait
 *   ops        the same runs with every launch its own op, ordered across
 *              batches by the runtime (A6)
 * variants mox, raw-gen (the same generated kernels on a raw stream) and
 * raw-orig (the unchanged original kernels on a raw stream, ports only);
 * mox's baseline is raw-gen, so "vs baseline" is raw / mox (> 1: mox is
 * faster). Suite "workloads-kernel": a port's GPU time per run (events)
 * for the port, the original built with moxc's numerics (-fmad=false) and
 * the original with nvcc's defaults. Every case is verified (the sample's
 * own CPU code, or bit for bit against the same runs waited one by one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_gpu.h"
#include "runner_rt.h"
#include "runner_workloads.h"
#include "runner_workloads_raw.h"
#include "wl_mox.h"

enum { MODE_SINGLE, MODE_PIPELINED, MODE_OPS, MODES };
/* Command capacity of the suite's device: the ops mode puts up to 30 x 49
 * launches (mergeSort) in flight, each its own batch; the default (64)
 * would hold the rest back until earlier ones finish. */
#define SUITE_CAPACITY 4096u
static const char *const mode_names[MODES] = {"single", "pipelined", "ops"};

typedef struct suite {
    bench_report *r;
    mox_device *dev;
    raw_ctx rc;
    bool raw; /* the raw side is usable */
    const char *orig_dir;
    uint32_t runs; /* back-to-back runs per sample */
    uint32_t reps; /* single-shot runs per sample */
} suite;

/* One workload in flight: its instance, its mox and raw sides, and the
 * state `runs` runs leave when waited one by one (the reference for the
 * back-to-back modes). */
typedef struct wl_run {
    suite *s;
    wl_instance in;
    wl_mox m;
    raw_instance ri;
    bool raw;
    void *stepped[WL_MAX_SLOTS];
    bool have_stepped;
} wl_run;

typedef struct variant {
    bool mox;
    raw_kind kind;
    bench_case *c;
    bool failed;
    bool graph; /* raw-gen replayed as one CUDA graph per run */
} variant;

/* `runs` raw runs of v, then a spin wait. */
static bool raw_variant_runs(wl_run *w, const variant *v, uint32_t runs)
{
    return v->graph ? raw_graph_runs(&w->ri, runs) : raw_runs(&w->ri, v->kind, runs);
}

static bool sample_once(wl_run *w, const variant *v, int mode, double *us, char *err, size_t err_len)
{
    uint32_t n = mode == MODE_SINGLE ? w->s->reps : 1;
    uint64_t t0 = bench_now_ns();
    bool ok = true;
    for (uint32_t i = 0; ok && i < n; i++) {
        if (v->mox)
            ok = wl_mox_runs(&w->m, mode == MODE_SINGLE ? 1 : w->s->runs, mode == MODE_OPS, err, err_len);
        else if (!(ok = raw_variant_runs(w, v, mode == MODE_SINGLE ? 1 : w->s->runs)))
            snprintf(err, err_len, "%.400s", w->s->rc.err);
    }
    *us = (double)(bench_now_ns() - t0) / 1e3 / n;
    return ok;
}

/* The outputs of kind's runs compared bit for bit with the one-by-one state. */
static bool same_as_stepped(wl_run *w, void **outputs, char *why, size_t why_len)
{
    const wl_plan *p = &w->in.port;
    bool ok = true;
    for (uint32_t o = 0; ok && o < p->output_count; o++) {
        const wl_slot *slot = &w->in.slots[p->outputs[o]];
        ok = wl_check_bits(outputs[o], w->stepped[o], slot->length, slot->type->size, slot->name, why,
                           why_len);
    }
    if (ok)
        snprintf(why, why_len, "%u runs leave the bits of the same runs waited one by one", w->s->runs);
    return ok;
}

static bool verify_variant(wl_run *w, const variant *v, int mode, char *why, size_t why_len)
{
    if (mode == MODE_SINGLE || (!v->mox && v->kind != RAW_GEN) || !w->in.deterministic)
        return v->mox ? wl_mox_reset(&w->m, why, why_len) && wl_mox_runs(&w->m, 1, false, why, why_len) &&
                            wl_mox_verify(&w->m, why, why_len)
                      : raw_verify(&w->ri, v->kind, why, why_len);
    if (!w->have_stepped) {
        if (!wl_mox_state_after(&w->m, w->s->runs, false, true, w->stepped, why, why_len))
            return false;
        w->have_stepped = true;
    }
    void *outputs[WL_MAX_SLOTS] = {NULL};
    bool ok;
    if (v->mox)
        ok = wl_mox_state_after(&w->m, w->s->runs, mode == MODE_OPS, false, outputs, why, why_len);
    else if (!(ok = raw_reset(&w->ri, v->kind) && raw_variant_runs(w, v, w->s->runs) &&
                    raw_read(&w->ri, v->kind, outputs)))
        snprintf(why, why_len, "%.400s", w->s->rc.err);
    ok = ok && same_as_stepped(w, outputs, why, why_len);
    wl_outputs_free(outputs, w->in.port.output_count);
    return ok;
}

static void describe(wl_run *w, const variant *v, int mode)
{
    bench_case *c = v->c;
    const char *how = mode == MODE_SINGLE      ? "one run constructed and waited (mean of %u)"
                      : mode == MODE_PIPELINED ? "%u runs back to back, one sequence each, then waited"
                                               : "%u runs back to back, one op per launch, then waited";
    char what[128];
    snprintf(what, sizeof what, how, mode == MODE_SINGLE ? w->s->reps : w->s->runs);
    snprintf(c->note, sizeof c->note, "%s; %s", what,
             v->mox               ? "through mox"
             : v->graph           ? "generated kernels, one raw graph per run, replayed"
             : v->kind == RAW_GEN ? "generated kernels, one raw stream"
                                  : "original kernels, one raw stream");
    snprintf(c->params, sizeof c->params, "%.80s", w->in.params);
    uint32_t per = mode == MODE_SINGLE ? 1 : w->s->runs;
    c->bytes = w->in.bytes * per;
    c->flops = w->in.flops * per;
    c->per = per;
    if (v->mox && w->raw && raw_has(&w->ri, RAW_GEN))
        snprintf(c->baseline, sizeof c->baseline, "raw-gen");
}

static void run_mode(wl_run *w, int mode)
{
    bench_report *r = w->s->r;
    char name[48];
    snprintf(name, sizeof name, "%.38s.%s", w->in.workload->name, mode_names[mode]);
    if (!bench_wants(r, "workloads", name))
        return;
    variant vs[2 + RAW_FAST];
    size_t nv = 0;
    vs[nv++] = (variant){true, RAW_GEN, NULL, false, false};
    for (int k = RAW_GEN; w->raw && k <= RAW_ORIG; k++)
        if (raw_has(&w->ri, (raw_kind)k))
            vs[nv++] = (variant){false, (raw_kind)k, NULL, false, false};
    if (w->raw && raw_has(&w->ri, RAW_GEN) && mode != MODE_OPS)
        vs[nv++] = (variant){false, RAW_GEN, NULL, false, true};
    for (size_t i = 0; i < nv; i++) {
        const char *vname = vs[i].mox ? "mox" : vs[i].graph ? "raw-gen-graph" : raw_kind_names[vs[i].kind];
        vs[i].c = bench_case_add(r, "workloads", name, vname, "us");
        describe(w, &vs[i], mode);
    }
    char err[512];
    uint32_t rounds = r->config.warmup + r->config.samples;
    for (uint32_t round = 0; round < rounds; round++)
        for (size_t j = 0; j < nv; j++) {
            variant *v = &vs[(round + j) % nv];
            double us = 0;
            if (v->failed)
                continue;
            if (!sample_once(w, v, mode, &us, err, sizeof err)) {
                bench_case_fail(r, v->c, "run: %s", err);
                v->failed = true;
            } else if (round >= r->config.warmup) {
                bench_case_sample(v->c, us);
            }
        }
    for (size_t i = 0; i < nv; i++) {
        char why[512] = "";
        if (vs[i].failed)
            continue;
        bool ok = verify_variant(w, &vs[i], mode, why, sizeof why);
        vs[i].c->verified = ok;
        if (!ok)
            bench_case_fail(r, vs[i].c, "verification: %s", why);
    }
}

/* GPU time of one run: the port, the original with the same numerics, the
 * original with nvcc's defaults; rotating, verified afterwards. */
static void run_kernels(wl_run *w)
{
    bench_report *r = w->s->r;
    if (!w->raw || !raw_has(&w->ri, RAW_GEN) || !w->in.orig.kernel_count ||
        !bench_wants(r, "workloads-kernel", w->in.workload->name))
        return;
    static const char *const names[RAW_KINDS] = {"port", "orig", "orig-fast"};
    bench_case *cs[RAW_KINDS] = {NULL};
    for (int k = 0; k < RAW_KINDS; k++) {
        cs[k] = bench_case_add(r, "workloads-kernel", w->in.workload->name, names[k], "us");
        snprintf(cs[k]->params, sizeof cs[k]->params, "%.80s", w->in.params);
        snprintf(cs[k]->note, sizeof cs[k]->note, "GPU time of one run (events, queued behind a spin); %s",
                 k == RAW_GEN    ? "moxc's kernels (-fmad=false)"
                 : k == RAW_ORIG ? "original kernels, nvcc -O3 -fmad=false -prec-div=true -prec-sqrt=true"
                                 : "original kernels, nvcc -O3 (defaults: contraction on)");
        cs[k]->bytes = w->in.bytes;
        cs[k]->flops = w->in.flops;
        if (k == RAW_GEN)
            snprintf(cs[k]->baseline, sizeof cs[k]->baseline, "orig");
        if (!raw_has(&w->ri, (raw_kind)k))
            bench_case_fail(r, cs[k], "%s", w->ri.missing[k]);
    }
    bool failed[RAW_KINDS] = {false};
    uint32_t rounds = r->config.warmup + r->config.samples;
    for (uint32_t round = 0; round < rounds && !w->s->rc.dead; round++)
        for (int j = 0; j < RAW_KINDS; j++) {
            int k = (int)((round + (uint32_t)j) % RAW_KINDS);
            double us = 0;
            if (failed[k] || !raw_has(&w->ri, (raw_kind)k))
                continue;
            if (!raw_kernel_time(&w->ri, (raw_kind)k, &us)) {
                bench_case_fail(r, cs[k], "run: %s", w->s->rc.err);
                failed[k] = true;
            } else if (round >= r->config.warmup) {
                bench_case_sample(cs[k], us);
            }
        }
    for (int k = 0; k < RAW_KINDS; k++) {
        char why[512] = "";
        if (failed[k] || !raw_has(&w->ri, (raw_kind)k))
            continue;
        cs[k]->verified = raw_verify(&w->ri, (raw_kind)k, why, sizeof why);
        if (!cs[k]->verified)
            bench_case_fail(r, cs[k], "verification: %s", why);
    }
}

static bool open_raw_side(wl_run *w, char *err, size_t err_len)
{
    char dir[1024];
    void *fatbin = NULL;
    size_t size = 0;
    bool have =
        bench_artifact_fatbin(w->in.workload->module, &fatbin, &size, NULL, dir, sizeof dir, err, err_len);
    bool ok = raw_instance_open(&w->s->rc, &w->ri, &w->in, have ? fatbin : NULL, w->s->orig_dir);
    free(fatbin);
    if (!ok)
        snprintf(err, err_len, "%.400s", w->s->rc.err);
    else if (have && raw_has(&w->ri, RAW_GEN) && !raw_holds_initial_state(&w->ri, RAW_GEN, err, err_len)) {
        /* Raw timings from another state than mox's would not compare. */
        bench_case *c = bench_case_add(w->s->r, "workloads", w->in.workload->name, "raw-setup", "us");
        bench_case_fail(w->s->r, c, "%s", err);
        ok = false;
    } else if (!have)
        snprintf(w->ri.missing[RAW_GEN], sizeof w->ri.missing[RAW_GEN], "%.250s", err);
    return ok;
}

/* Whether the filter names any case of the workload (a mode's or its kernel time). */
static bool wants_workload(const bench_report *r, const wl_workload *workload)
{
    bool any = bench_wants(r, "workloads-kernel", workload->name);
    for (int m = 0; !any && m < MODES; m++) {
        char name[48];
        snprintf(name, sizeof name, "%.38s.%s", workload->name, mode_names[m]);
        any = bench_wants(r, "workloads", name);
    }
    return any;
}

static void run_workload(suite *s, const wl_workload *workload)
{
    bench_report *r = s->r;
    if (!wants_workload(r, workload))
        return;
    wl_run *w = calloc(1, sizeof *w);
    char err[512] = "";
    bool ok = w != NULL;
    if (ok) {
        w->s = s;
        w->in.workload = workload;
        ok = workload->create(&w->in, r->config.smoke ? WL_TINY : WL_FULL, err, sizeof err) &&
             wl_mox_open(&w->m, s->dev, &w->in, err, sizeof err);
    } else {
        snprintf(err, sizeof err, "out of host memory");
    }
    if (ok && s->raw && !s->rc.dead)
        w->raw = open_raw_side(w, err, sizeof err);
    if (ok && s->raw && !w->raw)
        fprintf(stderr, "mox_bench: %s: raw CUDA side left out: %s\n", workload->name, err);
    if (!ok) {
        bench_case *c = bench_case_add(r, "workloads", workload->name, "setup", "us");
        bench_case_fail(r, c, "%s", err);
    }
    for (int mode = 0; ok && mode < MODES; mode++)
        run_mode(w, mode);
    if (ok)
        run_kernels(w);
    if (w) {
        wl_outputs_free(w->stepped, w->in.port.output_count);
        raw_instance_close(&w->ri);
        wl_mox_close(&w->m);
        wl_instance_free(&w->in);
        free(w);
    }
}

bool bench_suite_workloads(bench_report *r)
{
    suite s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.runs = r->config.smoke ? 3 : 30;
    s.reps = r->config.smoke ? 1 : 10;
    const char *dir = getenv("MOX_WORKLOADS_ORIG_DIR");
    s.orig_dir = dir && *dir ? dir : MOX_WORKLOADS_ORIG_DIR_DEFAULT;
    char err[256];
    s.dev = rt_open(r, SUITE_CAPACITY, err, sizeof err);
    if (!s.dev) {
        fprintf(stderr, "mox_bench: workloads suite skipped: %s\n", err);
        return false;
    }
    /* MOX_BENCH_WORKLOADS_RAW=1: the raw side even beside the CPU backend
     * (a test of the raw path on a stand-in driver, MOX_CUDA_LIBRARY). */
    const char *force = getenv("MOX_BENCH_WORKLOADS_RAW");
    if (mox_device_backend(s.dev) == MOX_BACKEND_CUDA || (force && strcmp(force, "1") == 0)) {
        s.raw = raw_open(&s.rc);
        if (!s.raw)
            fprintf(stderr, "mox_bench: workloads: no raw CUDA side: %s\n", s.rc.err);
    }
    /* The JSON is rewritten after every workload: a run stopped by a time
     * limit keeps the workloads it finished. */
    for (size_t i = 0; i < wl_port_count + bench_example_workload_count; i++) {
        run_workload(&s, i < wl_port_count ? wl_ports[i] : bench_example_workloads[i - wl_port_count]);
        if (r->config.json_path)
            bench_write_json(r, r->config.json_path);
    }
    if (s.raw)
        raw_close(&s.rc);
    mox_device_release(s.dev);
    return true;
}
