/* runner_rt.h - helpers of the suites that go through the public mox API
 * (overhead, pipeline): devices, buffers from host data, the stage chain
 * x*4+3, x*5+7, ... recorded into one sequence, and its CPU result. */
#ifndef MOX_BENCH_RUNNER_RT_H
#define MOX_BENCH_RUNNER_RT_H

#include <mox/mox.h>

#include "runner.h"

/* Opens the current device (MOX_BACKEND honoured) with a command capacity
 * (0: default); records its backend and name in the report's device facts
 * when no other suite did. NULL with a message in `err` on failure. */
mox_device *rt_open(bench_report *r, uint32_t capacity, char *err, size_t err_len);

/* A chain of `count` dependent launches over n floats: launch 0 is
 * stage_a(src -> t[0]); launch i > 0 reads t[(i-1) % 2], writes t[i % 2],
 * stage_a for even i, stage_b for odd i. */
typedef struct rt_chain {
    mox_device *dev;
    mox_buffer *src, *t[2];
    uint32_t n, count;
} rt_chain;

/* Random src, zeroed t[]; false with `err` on failure. */
bool rt_chain_create(rt_chain *c, mox_device *dev, uint32_t n, uint32_t count, uint64_t seed,
                     char *err, size_t err_len);
void rt_chain_destroy(rt_chain *c);
/* mox_record_fn: pushes the chain's launches. */
mox_status rt_chain_record(void *ctx, mox_batch *batch);
/* The buffer the last launch writes. */
mox_buffer *rt_chain_output(const rt_chain *c);
/* Reads the output and compares it with the chain on the CPU (bit for bit).
 * false with `err` on a mismatch. */
bool rt_chain_verify(const rt_chain *c, char *err, size_t err_len);
/* Runs the chain's sequence once and waits. */
mox_status rt_chain_run(rt_chain *c, char *err, size_t err_len);
/* Measures case `c` with a fresh chain of `count` launches over n floats:
 * warm-up runs, then per sample the mean wall time (us) of `reps` runs,
 * then the output checked against the CPU (c->verified). A failure is
 * recorded in the case. */
void rt_chain_measure(bench_report *r, bench_case *c, mox_device *dev, uint32_t n, uint32_t count,
                      uint64_t seed, uint32_t reps);

/* A waker that does nothing (ops polled once, never waited on). */
mox_waker rt_no_waker(void);
/* "<status name>: <last error message>" */
void rt_error(char *err, size_t err_len, const char *what, mox_status st);

#endif
