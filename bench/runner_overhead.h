/* runner_overhead.h - the overhead suite's cases that need a device of
 * their own: first use (cold module load, time to first result) and host
 * memory per in-flight operation (runner_overhead_mem.c). */
#ifndef MOX_BENCH_RUNNER_OVERHEAD_H
#define MOX_BENCH_RUNNER_OVERHEAD_H

#include "runner.h"

void bench_overhead_first_use(bench_report *r);
void bench_overhead_memory(bench_report *r);

#endif
