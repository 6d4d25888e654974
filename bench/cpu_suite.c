/* cpu_suite.c - the CPU backend against plain C: every workload of the
 * quality suite run through mox on the CPU backend (the generated
 * kernels_cpu.so, launched through the bindings, constructed and waited)
 * and as plain C loops (cpu_baseline.c), for thread counts from 1 to all
 * cores (mox_device_options.cpu_threads / OpenMP). Wall time per run, two
 * input sets alternating, every run verified against the CPU result.
 * This file runs the cases; the workloads' host side is in
 * cpu_suite_work.c, their mox side in cpu_suite_mox.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu_baseline.h"
#include "cpu_suite.h"
#include "runner.h"

/* One variant's warm-up and samples. The two variants run one after the
 * other, not interleaved: on a CPU they share the cores, and the threads
 * one leaves spinning would slow the other. */
static void run_variant(bench_report *r, bench_case *c, cpu_work *w, cpu_dev *d)
{
    uint32_t rounds = r->config.warmup + r->config.samples;
    for (uint32_t round = 0; round < rounds; round++) {
        uint32_t s = round % CPU_SUITE_SETS;
        char why[200] = "";
        bool ok;
        uint64_t t0, t1;
        if (d) {
            mox_status st = cpu_dev_reset(w, d, s);
            t0 = bench_now_ns();
            if (st == MOX_OK)
                st = cpu_dev_run(w, d, s);
            t1 = bench_now_ns();
            if (st == MOX_OK)
                st = mox_buffer_read(d->out[s], 0, mox_buffer_length(d->out[s]), w->host_out);
            ok = st == MOX_OK;
            if (!ok)
                snprintf(why, sizeof why, "%s: %s", mox_status_name(st), mox_error_last_message());
        } else {
            t0 = bench_now_ns();
            ok = cpu_work_run_c(w, s);
            t1 = bench_now_ns();
            if (!ok)
                snprintf(why, sizeof why, "out of memory");
        }
        if (ok && !cpu_work_check(w, s, why, sizeof why)) {
            ok = false;
            c->verified = 0;
        }
        if (!ok) {
            bench_case_fail(r, c, "round %u: %s", round, why);
            return;
        }
        if (round >= r->config.warmup)
            bench_case_sample(c, (double)(t1 - t0) / 1e3);
    }
    c->verified = 1;
}

static void run_pair(bench_report *r, cpu_work *w, uint32_t threads, const char *params, double bytes,
                     double flops)
{
    const char *name = cpu_work_names[w->kind];
    bench_case *mc = bench_case_add(r, "cpu", name, "mox-cpu", "us");
    bench_case *cc = bench_case_add(r, "cpu", name, cpu_baseline_name(), "us");
    bench_case *both[2] = {mc, cc};
    for (int i = 0; i < 2; i++) {
        snprintf(both[i]->params, sizeof both[i]->params, "%s", params);
        both[i]->threads = threads;
        both[i]->bytes = bytes;
        both[i]->flops = flops;
    }
    snprintf(mc->baseline, sizeof mc->baseline, "%s", cpu_baseline_name());
    snprintf(mc->note, sizeof mc->note, "launch (or sequence) constructed and waited, wall time");
    snprintf(cc->note, sizeof cc->note, "plain C loop (%s ISA), wall time", cpu_baseline_get()->isa);

    mox_device_options opts;
    memset(&opts, 0, sizeof opts);
    opts.backend = MOX_BACKEND_CPU;
    opts.cpu_threads = threads;
    cpu_dev d;
    memset(&d, 0, sizeof d);
    mox_status st = mox_device_open_with(&opts, &d.dev);
    if (st == MOX_OK) {
        bench_kv_str(&r->host, "mox_cpu_device", mox_device_name(d.dev));
        st = cpu_dev_make(&d, w);
        if (st == MOX_OK)
            run_variant(r, mc, w, &d);
        else
            bench_case_fail(r, mc, "buffers: %s: %s", mox_status_name(st), mox_error_last_message());
        cpu_dev_free(&d);
        mox_device_release(d.dev);
    } else {
        bench_case_fail(r, mc, "device: %s: %s", mox_status_name(st), mox_error_last_message());
    }
    cpu_baseline_threads(threads);
    run_variant(r, cc, w, NULL);
}

void bench_suite_cpu(bench_report *r)
{
    uint32_t cores = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t max = r->config.max_threads && r->config.max_threads < cores ? r->config.max_threads : cores;
    uint32_t counts[16], nc = 0;
    for (uint32_t t = 1; t < max && nc < 15; t *= 2)
        counts[nc++] = t;
    counts[nc++] = max;
    for (int kind = 0; kind < W_COUNT; kind++) {
        if (!bench_wants(r, "cpu", cpu_work_names[kind]))
            continue;
        cpu_work w;
        if (!cpu_work_make(&w, kind, r->config.smoke)) {
            bench_case *c = bench_case_add(r, "cpu", cpu_work_names[kind], "mox-cpu", "us");
            bench_case_fail(r, c, "out of host memory");
            continue;
        }
        char params[96];
        double bytes, flops;
        cpu_work_params(&w, params, sizeof params, &bytes, &flops);
        for (uint32_t i = 0; i < nc; i++)
            run_pair(r, &w, counts[i], params, bytes, flops);
        cpu_work_free(&w);
        /* A run stopped by a time limit keeps the workloads it finished. */
        if (r->config.json_path)
            bench_write_json(r, r->config.json_path);
    }
}
