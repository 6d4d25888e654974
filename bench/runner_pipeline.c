/* runner_pipeline.c - the pipeline the peers (bench/peers: CuPy
 * RawKernel, PyTorch eager) also run, through mox: stage_a then stage_b
 * (x*4+3, then x*5+7) recorded in one sequence, submitted and waited.
 *   pipeline-256    n = 256: the runtime's cost dominates
 *   pipeline-big    n = 2^28 on CUDA (2^24 on the CPU backend): bandwidth
 *   repeated-64     one sequence of 64 dependent launches at n = 256
 * A sample is the mean wall time of `reps` runs; the peers use the same
 * definition, so bench/peers/merge.py can divide one by the other. */
#include <stdio.h>
#include <string.h>

#include "runner_rt.h"

static void pipeline_case(bench_report *r, mox_device *dev, const char *name, uint32_t n,
                          uint32_t count, uint32_t reps)
{
    if (!bench_wants(r, "pipeline", name))
        return;
    bench_case *c = bench_case_add(r, "pipeline", name, "mox", "us");
    snprintf(c->params, sizeof c->params, "n=%u dispatches=%u", n, count);
    snprintf(c->note, sizeof c->note,
             "mean wall time of one sequence of %u stage launches, submitted and waited (%u per sample)",
             count, reps);
    /* Each stage reads and writes n floats. */
    c->bytes = 8.0 * (double)n * count;
    c->flops = 2.0 * (double)n * count;
    c->per = count;
    rt_chain_measure(r, c, dev, n, count, 1300 + count, reps);
}

void bench_suite_pipeline(bench_report *r)
{
    char err[256];
    mox_device *dev = rt_open(r, 0, err, sizeof err);
    if (!dev) {
        bench_case *c = bench_case_add(r, "pipeline", "setup", "mox", "us");
        bench_case_fail(r, c, "%s", err);
        return;
    }
    bool cuda = mox_device_backend(dev) == MOX_BACKEND_CUDA;
    uint32_t big = r->config.smoke ? 1u << 16 : cuda ? 1u << 28 : 1u << 24;
    pipeline_case(r, dev, "pipeline-256", 256, 2, r->config.smoke ? 4 : 200);
    pipeline_case(r, dev, "pipeline-big", big, 2, r->config.smoke ? 1 : cuda ? 5 : 2);
    pipeline_case(r, dev, "repeated-64", 256, 64, r->config.smoke ? 2 : 20);
    mox_device_release(dev);
}
