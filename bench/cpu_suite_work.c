/* cpu_suite_work.c - the CPU suite's workloads on the host (see
 * cpu_suite.h): their sizes, input sets with expected results computed
 * once (runner_work.h), the plain C run (cpu_baseline.h), the check of a
 * result, and what a run reads, writes and computes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_baseline.h"
#include "cpu_suite.h"
#include "runner_work.h"

const char *const cpu_work_names[W_COUNT] = {"vec-add", "reduction", "histogram", "scan",
                                                "particle-update", "matmul-f32", "matmul-f16"};

static size_t work_size(int kind, bool smoke)
{
    switch (kind) {
    /* Full sizes exceed the last-level cache of small machines yet keep a
     * run of the fiber-executed kernels (barriers, warp ops) under a second
     * per thread count. */
    case W_PART:
        return smoke ? (size_t)1 << 12 : (size_t)1 << 20;
    case W_MM:
    case W_MM16:
        return smoke ? 48 : 256;
    default:
        return smoke ? (size_t)1 << 14 : (size_t)1 << 22;
    }
}

void cpu_work_free(cpu_work *w)
{
    for (int s = 0; s < CPU_SUITE_SETS; s++) {
        free(w->in[s][0]);
        free(w->in[s][1]);
        free(w->expect[s]);
    }
    free(w->host_out);
    memset(w, 0, sizeof *w);
}

/* Byte sizes of kind's inputs and output (and a particle config). */
static void work_layout(cpu_work *w, int kind, bool smoke)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    size_t n = w->n = work_size(kind, smoke);
    switch (kind) {
    case W_VEC:
        w->in_bytes[0] = w->in_bytes[1] = w->out_bytes = n * 4;
        break;
    case W_RED:
        w->in_bytes[0] = n * 4;
        w->out_bytes = work_blocks(n, WORK_BLOCK) * 4;
        break;
    case W_HIST:
        w->in_bytes[0] = n * 4;
        w->out_bytes = WORK_HIST_BINS * 4;
        break;
    case W_SCAN:
        w->in_bytes[0] = w->out_bytes = n * 4;
        break;
    case W_PART:
        w->in_bytes[0] = w->out_bytes = n * sizeof(Particle);
        w->config = work_particle_config();
        break;
    default:
        w->in_bytes[0] = w->in_bytes[1] = n * n * (kind == W_MM ? 4 : 2);
        w->out_bytes = n * n * 4;
        break;
    }
}

/* Fills set s's (allocated) inputs and computes its expected result. */
static void work_fill_set(cpu_work *w, int s)
{
    size_t n = w->n;
    uint64_t seed = 2000 + 10 * (uint64_t)w->kind + 2 * (uint64_t)s;
    switch (w->kind) {
    case W_VEC:
        work_fill_f32(w->in[s][0], n, seed);
        work_fill_f32(w->in[s][1], n, seed + 1);
        work_vec_add(w->in[s][0], w->in[s][1], w->expect[s], n);
        break;
    case W_RED:
        work_fill_f32(w->in[s][0], n, seed);
        work_reduce(w->in[s][0], n, w->expect[s]);
        break;
    case W_HIST:
        work_fill_u32(w->in[s][0], n, seed, 0xffffffffu);
        work_histogram(w->in[s][0], n, w->expect[s]);
        break;
    case W_SCAN:
        work_fill_u32(w->in[s][0], n, seed, 0xffffffffu);
        work_scan(w->in[s][0], n, w->expect[s]);
        break;
    case W_PART:
        work_fill_particles(w->in[s][0], n, seed);
        work_particles(w->in[s][0], w->expect[s], n, w->config);
        break;
    case W_MM:
        work_fill_f32(w->in[s][0], n * n, seed);
        work_fill_f32(w->in[s][1], n * n, seed + 1);
        work_matmul_f32(w->in[s][0], w->in[s][1], w->expect[s], n, n, n);
        break;
    default:
        work_fill_f16(w->in[s][0], n * n, seed);
        work_fill_f16(w->in[s][1], n * n, seed + 1);
        work_matmul_f16(w->in[s][0], w->in[s][1], w->expect[s], n, n, n);
        break;
    }
}

bool cpu_work_make(cpu_work *w, int kind, bool smoke)
{
    work_layout(w, kind, smoke);
    w->host_out = malloc(w->out_bytes);
    bool ok = w->host_out != NULL;
    for (int s = 0; ok && s < CPU_SUITE_SETS; s++) {
        for (int i = 0; i < 2; i++)
            if (w->in_bytes[i] && !(w->in[s][i] = malloc(w->in_bytes[i])))
                ok = false;
        ok = ok && (w->expect[s] = malloc(w->out_bytes)) != NULL;
        if (!ok)
            break;
        work_fill_set(w, s);
    }
    if (!ok)
        cpu_work_free(w);
    return ok;
}

bool cpu_work_run_c(const cpu_work *w, uint32_t s)
{
    const void *a = w->in[s][0], *b = w->in[s][1];
    const cpu_baseline_ops *c = cpu_baseline_get();
    switch (w->kind) {
    case W_VEC:
        c->vec_add(a, b, w->host_out, w->n);
        return true;
    case W_RED:
        c->reduce(a, w->n, w->host_out);
        return true;
    case W_HIST:
        c->histogram(a, w->n, w->host_out);
        return true;
    case W_SCAN:
        c->scan(a, w->n, w->host_out);
        return true;
    case W_PART:
        c->particles(a, w->host_out, w->n, w->config);
        return true;
    case W_MM:
        c->matmul(a, b, w->host_out, w->n, w->n, w->n);
        return true;
    default:
        return c->matmul_f16(a, b, w->host_out, w->n, w->n, w->n) == 0;
    }
}

bool cpu_work_check(const cpu_work *w, uint32_t s, char *why, size_t why_len)
{
    size_t bad, count;
    if (w->kind == W_PART) {
        count = w->n;
        bad = work_first_diff_particle(w->host_out, w->expect[s], count);
    } else {
        count = w->out_bytes / 4;
        bad = work_first_diff32(w->host_out, w->expect[s], count);
    }
    if (bad < count)
        snprintf(why, why_len, "element %zu of %zu differs", bad, count);
    memset(w->host_out, 0xff, w->out_bytes);
    return bad == count;
}

void cpu_work_params(const cpu_work *w, char *out, size_t size, double *bytes, double *flops)
{
    size_t n = w->n;
    *flops = 0;
    switch (w->kind) {
    case W_MM:
    case W_MM16:
        snprintf(out, size, "%zux%zux%zu", n, n, n);
        *bytes = (double)(w->in_bytes[0] + w->in_bytes[1] + w->out_bytes);
        *flops = 2.0 * (double)n * n * n;
        return;
    case W_SCAN:
        snprintf(out, size, "n=%zu", n);
        *bytes = 8.0 * (double)n;
        return;
    default:
        snprintf(out, size, "n=%zu", n);
        *bytes = (double)(w->in_bytes[0] + w->in_bytes[1] + w->out_bytes);
        return;
    }
}
