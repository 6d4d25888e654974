/* runner_workloads_summary.c - the workloads suite's ratio table, printed
 * after mox_bench's main table: per workload and mode the raw stream's
 * median over mox's (> 1: mox is faster), with the generated kernels and
 * with the original ones; per port the original's GPU time per run over
 * the port's, with the same numerics and with nvcc's defaults (> 1: the
 * port is faster). Medians of one run, as the main table's. */
#include <string.h>

#include "runner_workloads.h"

static const bench_case *find(const bench_report *r, const char *suite, const char *name, const char *variant)
{
    for (size_t i = 0; i < r->count; i++) {
        const bench_case *c = r->cases[i];
        if (strcmp(c->suite, suite) == 0 && strcmp(c->name, name) == 0 && strcmp(c->variant, variant) == 0)
            return c;
    }
    return NULL;
}

/* median(num) / median(den), or a dash. */
static void ratio(FILE *f, const bench_case *num, const bench_case *den)
{
    bench_stats a, b;
    if (num && den && !num->error[0] && !den->error[0] && bench_stats_of(num, &a) &&
        bench_stats_of(den, &b) && b.median > 0)
        fprintf(f, " %.3f |", a.median / b.median);
    else
        fputs(" - |", f);
}

static bool seen_before(const bench_report *r, size_t upto, const char *workload, size_t len)
{
    for (size_t i = 0; i < upto; i++) {
        const bench_case *c = r->cases[i];
        if (strcmp(c->suite, "workloads") == 0 && strncmp(c->name, workload, len) == 0 && c->name[len] == '.')
            return true;
    }
    return false;
}

void bench_workloads_summary(const bench_report *r, FILE *f)
{
    static const char *const modes[] = {"single", "pipelined", "ops"};
    bool header = false, any_raw = false;
    for (size_t i = 0; i < r->count; i++)
        any_raw = any_raw || (strcmp(r->cases[i]->suite, "workloads") == 0 &&
                              strncmp(r->cases[i]->variant, "raw-", 4) == 0);
    if (!any_raw)
        return; /* nothing to divide: mox alone (no CUDA) */
    for (size_t i = 0; i < r->count; i++) {
        const bench_case *c = r->cases[i];
        const char *dot = strchr(c->name, '.');
        if (strcmp(c->suite, "workloads") != 0 || !dot || seen_before(r, i, c->name, (size_t)(dot - c->name)))
            continue;
        if (!header) {
            fputs(
                "\n| workload | params | single raw-gen/mox | single raw-orig/mox | pipelined raw-gen/mox | "
                "pipelined raw-orig/mox | ops raw-gen/mox | ops raw-orig/mox | kernel orig/port | "
                "kernel orig-fast/port | pipelined raw-gen/raw-gen-graph (graph bound) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n",
                f);
            header = true;
        }
        char workload[48];
        snprintf(workload, sizeof workload, "%.*s", (int)(dot - c->name), c->name);
        fprintf(f, "| %s | %s |", workload, c->params);
        for (size_t m = 0; m < 3; m++) {
            char name[64];
            snprintf(name, sizeof name, "%s.%s", workload, modes[m]);
            const bench_case *mox = find(r, "workloads", name, "mox");
            ratio(f, find(r, "workloads", name, "raw-gen"), mox);
            ratio(f, find(r, "workloads", name, "raw-orig"), mox);
        }
        const bench_case *port = find(r, "workloads-kernel", workload, "port");
        ratio(f, find(r, "workloads-kernel", workload, "orig"), port);
        ratio(f, find(r, "workloads-kernel", workload, "orig-fast"), port);
        char pipelined[64];
        snprintf(pipelined, sizeof pipelined, "%s.pipelined", workload);
        ratio(f, find(r, "workloads", pipelined, "raw-gen"), find(r, "workloads", pipelined, "raw-gen-graph"));
        fputs("\n", f);
    }
    if (header)
        fputs("\nraw/mox > 1: mox is faster than the raw stream; orig/port > 1: the port's kernels are "
              "faster than the original's (same GPU, events); raw-gen/raw-gen-graph: what replaying each "
              "run as one graph of the same kernels in stream order gains over the stream (the bound for "
              "a runtime that makes a run one graph, unless it finds independent launches).\n",
              f);
}
