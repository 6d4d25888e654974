/* runner_gpu_cases.c - the kernel-quality workloads: their sizes (well
 * above the 60 MB L2 for the memory-bound ones), the bytes and operations
 * counted for each run, input sets with CPU results computed once, and the
 * launches (the same grid for the generated and the reference kernel).
 * Their shared state is in runner_gpu_workload_state.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_gpu_workload_state.h"

/* ---- vec-add: out = a + b ---- */

static bool vec_add_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    uint32_t n = (uint32_t)w->n;
    void *p[] = {&w->in[set][0], &w->in[set][1], &w->out[set], &n};
    return gpu_launch(g, &w->k[0], variant, 0, work_blocks(n, WORK_BLOCK), 1, WORK_BLOCK, 1, p, 4);
}

bool gpu_make_vec_add(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    size_t n = smoke ? (size_t)1 << 16 : (size_t)1 << 26;
    gpu_wl_state *w = gpu_wl_new(g, GPU_MAX_SETS, n * 4);
    float *a = malloc(n * 4), *b = malloc(n * 4);
    bool ok = w && a && b && gpu_kernel_find(g, "vec_add", &w->k[0]);
    if (w && (!a || !b))
        snprintf(g->err, sizeof g->err, "out of host memory");
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        work_fill_f32(a, n, 100 + 2 * s);
        work_fill_f32(b, n, 101 + 2 * s);
        work_vec_add(a, b, w->expect[s], n);
        ok = gpu_wl_input(g, w, s, 0, a, n * 4) && gpu_wl_input(g, w, s, 1, b, n * 4);
    }
    free(a);
    free(b);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->n = n;
    gpu_wl_fill(out, "vec-add", w);
    snprintf(out->params, sizeof out->params, "n=%zu", n);
    out->bytes = 12.0 * (double)n; /* a and b read, out written */
    gpu_wl_kernel_note(out, &w->k[0], "vec_add");
    out->launch = vec_add_launch;
    out->verify = gpu_wl_verify_words;
    return true;
}

/* ---- reduction: one sum per 256-element block ---- */

static bool reduce_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    uint32_t n = (uint32_t)w->n;
    void *p[] = {&w->in[set][0], &w->out[set], &n};
    return gpu_launch(g, &w->k[0], variant, 0, work_blocks(n, WORK_BLOCK), 1, WORK_BLOCK, 1, p, 3);
}

bool gpu_make_reduce(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    size_t n = smoke ? (size_t)1 << 16 : (size_t)1 << 26;
    size_t blocks = work_blocks(n, WORK_BLOCK);
    gpu_wl_state *w = gpu_wl_new(g, GPU_MAX_SETS, blocks * 4);
    float *x = malloc(n * 4);
    bool ok = w && x && gpu_kernel_find(g, "reduce", &w->k[0]);
    if (w && !x)
        snprintf(g->err, sizeof g->err, "out of host memory");
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        work_fill_f32(x, n, 200 + s);
        work_reduce(x, n, w->expect[s]);
        ok = gpu_wl_input(g, w, s, 0, x, n * 4);
    }
    free(x);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->n = n;
    gpu_wl_fill(out, "reduction", w);
    snprintf(out->params, sizeof out->params, "n=%zu", n);
    out->bytes = 4.0 * (double)n + 4.0 * (double)blocks;
    out->flops = (double)n;
    gpu_wl_kernel_note(out, &w->k[0], "reduce");
    out->launch = reduce_launch;
    out->verify = gpu_wl_verify_words;
    return true;
}

/* ---- histogram: 16 bins of v & 15 ---- */

static bool histogram_reset(gpu_ctx *g, void *state, uint32_t set)
{
    gpu_wl_state *w = state;
    return gpu_fill32(g, w->out[set], 0, w->out_bytes); /* the bins accumulate */
}

static bool histogram_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    uint32_t n = (uint32_t)w->n;
    void *p[] = {&w->in[set][0], &w->out[set], &n};
    return gpu_launch(g, &w->k[0], variant, 0, work_blocks(n, WORK_BLOCK), 1, WORK_BLOCK, 1, p, 3);
}

bool gpu_make_histogram(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    size_t n = smoke ? (size_t)1 << 16 : (size_t)1 << 26;
    gpu_wl_state *w = gpu_wl_new(g, GPU_MAX_SETS, WORK_HIST_BINS * 4);
    uint32_t *x = malloc(n * 4);
    bool ok = w && x && gpu_kernel_find(g, "histogram", &w->k[0]);
    if (w && !x)
        snprintf(g->err, sizeof g->err, "out of host memory");
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        work_fill_u32(x, n, 300 + s, 0xffffffffu);
        work_histogram(x, n, w->expect[s]);
        ok = gpu_wl_input(g, w, s, 0, x, n * 4);
    }
    free(x);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->n = n;
    gpu_wl_fill(out, "histogram", w);
    snprintf(out->params, sizeof out->params, "n=%zu bins=16", n);
    out->bytes = 4.0 * (double)n;
    gpu_wl_kernel_note(out, &w->k[0], "histogram");
    out->reset = histogram_reset;
    out->launch = histogram_launch;
    out->verify = gpu_wl_verify_words;
    return true;
}

/* ---- scan: multi-level exclusive prefix sum (u32) ----
 * Level 0 scans the input into the set's output, one total per block; each
 * level above scans the totals of the one below until one block is left;
 * then add_offsets adds the scanned totals back down. */

static bool scan_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    uint32_t self = 0;
    for (uint32_t l = 0; l < w->levels; l++) {
        CUdeviceptr input = l ? w->totals[l - 1] : w->in[set][0];
        CUdeviceptr prefix = l ? w->prefix[l] : w->out[set];
        uint32_t n = (uint32_t)w->level_n[l];
        void *p[] = {&input, &prefix, &w->totals[l], &n};
        if (!gpu_launch(g, &w->k[0], variant, self++, work_blocks(n, WORK_BLOCK), 1, WORK_BLOCK, 1, p, 4))
            return false;
    }
    for (uint32_t l = w->levels - 1; l >= 1; l--) {
        CUdeviceptr data = l - 1 ? w->prefix[l - 1] : w->out[set];
        uint32_t n = (uint32_t)w->level_n[l - 1];
        void *p[] = {&data, &w->prefix[l], &n};
        if (!gpu_launch(g, &w->k[1], variant, self++, work_blocks(n, WORK_BLOCK), 1, WORK_BLOCK, 1, p, 3))
            return false;
    }
    return true;
}

bool gpu_make_scan(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    size_t n = smoke ? (size_t)1 << 16 : (size_t)1 << 26;
    gpu_wl_state *w = gpu_wl_new(g, GPU_MAX_SETS, n * 4);
    uint32_t *x = malloc(n * 4);
    bool ok = w && x && gpu_kernel_find(g, "block_scan", &w->k[0]) &&
              gpu_kernel_find(g, "add_offsets", &w->k[1]);
    if (w && !x)
        snprintf(g->err, sizeof g->err, "out of host memory");
    if (ok) {
        size_t level_n = n;
        for (;;) {
            if (w->levels == GPU_SCAN_LEVELS) {
                snprintf(g->err, sizeof g->err, "scan of %zu needs too many levels", n);
                ok = false;
                break;
            }
            uint32_t l = w->levels++;
            w->level_n[l] = level_n;
            size_t blocks = work_blocks(level_n, WORK_BLOCK);
            ok = gpu_alloc(g, &w->totals[l], blocks * 4);
            if (!ok || blocks <= 1)
                break;
            level_n = blocks;
            ok = gpu_alloc(g, &w->prefix[l + 1], level_n * 4);
            if (!ok)
                break;
        }
    }
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        work_fill_u32(x, n, 400 + s, 0xffffffffu); /* the sums wrap, as the kernel's do */
        work_scan(x, n, w->expect[s]);
        ok = gpu_wl_input(g, w, s, 0, x, n * 4);
    }
    free(x);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->n = n;
    gpu_wl_fill(out, "scan", w);
    snprintf(out->params, sizeof out->params, "n=%zu levels=%u", n, w->levels);
    out->bytes = 8.0 * (double)n; /* input read once, prefix written once */
    gpu_wl_kernel_note(out, &w->k[0], "block_scan");
    gpu_wl_kernel_note(out, &w->k[1], "add_offsets");
    out->launch = scan_launch;
    out->verify = gpu_wl_verify_words;
    return true;
}

/* ---- particle-update: two Euler steps per 28-byte record ---- */

static bool particles_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    uint32_t n = (uint32_t)w->n;
    void *p[] = {&w->in[set][0], &w->out[set], &w->config, &n};
    return gpu_launch(g, &w->k[0], variant, 0, work_blocks(n, 64), 1, 64, 1, p, 4);
}

static bool particles_verify(gpu_ctx *g, void *state, uint32_t set, char *why, size_t why_len)
{
    gpu_wl_state *w = state;
    if (!gpu_download(g, w->host, w->out[set], w->out_bytes))
        return false;
    size_t bad = work_first_diff_particle(w->host, w->expect[set], w->n);
    if (bad < w->n) {
        snprintf(why, why_len, "particle %zu of %zu differs", bad, w->n);
        return false;
    }
    return gpu_fill32(g, w->out[set], GPU_POISON, w->out_bytes);
}

bool gpu_make_particles(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    size_t n = smoke ? (size_t)1 << 14 : (size_t)1 << 23;
    gpu_wl_state *w = gpu_wl_new(g, GPU_MAX_SETS, n * sizeof(Particle));
    Particle *x = malloc(n * sizeof *x);
    bool ok = w && x && gpu_kernel_find(g, "particle_update", &w->k[0]);
    if (w && !x)
        snprintf(g->err, sizeof g->err, "out of host memory");
    if (ok)
        w->config = work_particle_config();
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        work_fill_particles(x, n, 500 + s);
        work_particles(x, w->expect[s], n, w->config);
        ok = gpu_wl_input(g, w, s, 0, x, n * sizeof *x);
    }
    free(x);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->n = n;
    gpu_wl_fill(out, "particle-update", w);
    snprintf(out->params, sizeof out->params, "n=%zu record=%zuB", n, sizeof(Particle));
    out->bytes = 2.0 * (double)sizeof(Particle) * (double)n;
    out->flops = 16.0 * (double)n; /* 2 steps x 2 axes x 2 (mul+add) x 2 updates */
    gpu_wl_kernel_note(out, &w->k[0], "particle_update");
    out->launch = particles_launch;
    out->verify = particles_verify;
    return true;
}

/* ---- matmul: 16x16 shared-memory tiles, f32 accumulate ---- */

static bool matmul_launch(gpu_ctx *g, void *state, int variant, uint32_t set)
{
    gpu_wl_state *w = state;
    void *p[] = {&w->in[set][0], &w->in[set][1], &w->out[set], &w->rows, &w->cols, &w->inner};
    return gpu_launch(g, &w->k[0], variant, 0, work_blocks(w->cols, 16), work_blocks(w->rows, 16), 16,
                      16, p, 6);
}

static bool make_matmul(gpu_ctx *g, bool smoke, bool f16, gpu_workload *out)
{
    uint32_t dim = smoke ? 96 : 2048;
    size_t elems = (size_t)dim * dim, in_size = f16 ? 2 : 4;
    /* Compute-bound: two sets are enough to keep every run's inputs new. */
    gpu_wl_state *w = gpu_wl_new(g, 2, elems * 4);
    void *a = malloc(elems * in_size), *b = malloc(elems * in_size);
    bool ok = w && a && b && gpu_kernel_find(g, f16 ? "matmul_f16" : "matmul", &w->k[0]);
    if (w && (!a || !b))
        snprintf(g->err, sizeof g->err, "out of host memory");
    for (uint32_t s = 0; ok && s < w->sets; s++) {
        if (f16) {
            work_fill_f16(a, elems, 600 + 2 * s);
            work_fill_f16(b, elems, 601 + 2 * s);
            work_matmul_f16(a, b, w->expect[s], dim, dim, dim);
        } else {
            work_fill_f32(a, elems, 700 + 2 * s);
            work_fill_f32(b, elems, 701 + 2 * s);
            work_matmul_f32(a, b, w->expect[s], dim, dim, dim);
        }
        ok = gpu_wl_input(g, w, s, 0, a, elems * in_size) && gpu_wl_input(g, w, s, 1, b, elems * in_size);
    }
    free(a);
    free(b);
    if (!(ok && gpu_wl_outputs(g, w))) {
        gpu_wl_destroy(g, w);
        return false;
    }
    w->rows = w->cols = w->inner = dim;
    gpu_wl_fill(out, f16 ? "matmul-f16" : "matmul-f32", w);
    snprintf(out->params, sizeof out->params, "%ux%ux%u", dim, dim, dim);
    out->flops = 2.0 * (double)dim * dim * dim;
    out->bytes = (double)elems * (2.0 * (double)in_size + 4.0);
    gpu_wl_kernel_note(out, &w->k[0], f16 ? "matmul_f16" : "matmul");
    out->launch = matmul_launch;
    out->verify = gpu_wl_verify_words;
    return true;
}

bool gpu_make_matmul(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    return make_matmul(g, smoke, false, out);
}

bool gpu_make_matmul_f16(gpu_ctx *g, bool smoke, gpu_workload *out)
{
    return make_matmul(g, smoke, true, out);
}
