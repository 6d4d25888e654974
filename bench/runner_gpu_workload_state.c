/* runner_gpu_workload_state.c - the kernel-quality workloads' shared state
 * (see runner_gpu_workload_state.h): allocation and release of the
 * per-set buffers, the poisoned outputs, the word-by-word verification. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_gpu_workload_state.h"

void gpu_wl_destroy(gpu_ctx *g, void *state)
{
    gpu_wl_state *w = state;
    if (!w)
        return;
    for (uint32_t s = 0; s < GPU_MAX_SETS; s++) {
        for (int b = 0; b < GPU_MAX_BUFS; b++)
            gpu_free(g, &w->in[s][b]);
        gpu_free(g, &w->out[s]);
        free(w->expect[s]);
    }
    for (uint32_t l = 0; l < GPU_SCAN_LEVELS; l++) {
        gpu_free(g, &w->totals[l]);
        gpu_free(g, &w->prefix[l]);
    }
    free(w->host);
    free(w);
}

gpu_wl_state *gpu_wl_new(gpu_ctx *g, uint32_t sets, size_t out_bytes)
{
    gpu_wl_state *w = calloc(1, sizeof *w);
    if (w) {
        w->sets = sets;
        w->out_bytes = out_bytes;
        w->host = malloc(out_bytes ? out_bytes : 4);
        for (uint32_t s = 0; s < sets && w->host; s++)
            w->expect[s] = malloc(out_bytes ? out_bytes : 4);
        for (uint32_t s = 0; s < sets && w->host; s++)
            if (!w->expect[s]) {
                free(w->host);
                w->host = NULL;
            }
    }
    if (!w || !w->host) {
        gpu_wl_destroy(g, w);
        snprintf(g->err, sizeof g->err, "out of host memory");
        return NULL;
    }
    return w;
}

bool gpu_wl_input(gpu_ctx *g, gpu_wl_state *w, uint32_t set, int slot, const void *data, size_t bytes)
{
    return gpu_alloc(g, &w->in[set][slot], bytes) && gpu_upload(g, w->in[set][slot], data, bytes);
}

bool gpu_wl_outputs(gpu_ctx *g, gpu_wl_state *w)
{
    for (uint32_t s = 0; s < w->sets; s++)
        if (!gpu_alloc(g, &w->out[s], w->out_bytes) || !gpu_fill32(g, w->out[s], GPU_POISON, w->out_bytes))
            return false;
    return true;
}

void gpu_wl_fill(gpu_workload *out, const char *name, gpu_wl_state *w)
{
    out->name = name;
    out->state = w;
    out->sets = w->sets;
    out->destroy = gpu_wl_destroy;
}

void gpu_wl_kernel_note(gpu_workload *out, const gpu_kernel *k, const char *what)
{
    size_t len = strlen(out->note);
    snprintf(out->note + len, sizeof out->note - len, "%s%s regs gen/ref %d/%d, local bytes %d/%d",
             len ? "; " : "", what, k->regs[1], k->regs[0], k->local_bytes[1], k->local_bytes[0]);
}

bool gpu_wl_verify_words(gpu_ctx *g, void *state, uint32_t set, char *why, size_t why_len)
{
    gpu_wl_state *w = state;
    if (!gpu_download(g, w->host, w->out[set], w->out_bytes))
        return false;
    size_t words = w->out_bytes / 4, bad = work_first_diff32(w->host, w->expect[set], words);
    if (bad < words) {
        uint32_t got, want;
        memcpy(&got, (const char *)w->host + 4 * bad, 4);
        memcpy(&want, (const char *)w->expect[set] + 4 * bad, 4);
        snprintf(why, why_len, "word %zu of %zu is 0x%08x, expected 0x%08x", bad, words, got, want);
        return false;
    }
    return gpu_fill32(g, w->out[set], GPU_POISON, w->out_bytes);
}
