/* runner_workloads.h - the workloads suite's parts (docs/performance.md,
 * "The workloads suite"): the example workloads (runner_workloads_examples.c),
 * the per-workload measurement (runner_workloads.c) and the summary of
 * ratios printed after the main table (runner_workloads_summary.c). */
#ifndef MOX_BENCH_RUNNER_WORKLOADS_H
#define MOX_BENCH_RUNNER_WORKLOADS_H

#include "runner.h"
#include "wl.h"

/* The examples' kernels (module benchq) as workloads, without originals. */
extern const wl_workload *const bench_example_workloads[];
extern const size_t bench_example_workload_count;

/* Ratio table of the workloads cases: raw / mox per mode, and per port the
 * original's kernel time over the port's. Prints nothing without them. */
void bench_workloads_summary(const bench_report *r, FILE *f);

#endif
