/* trace_nvtx.c - the trace's NVTX side, for Nsight Systems (docs/trace.md):
 * every batch is an NVTX range from submission to completion (a process
 * range, since it ends on another thread), launches, module preparations
 * and device spans are marks. Compiled only where the NVTX 3 headers (part
 * of the CUDA toolkit, header-only) were found at build time; active only
 * when a tool injects itself through NVTX_INJECTION64_PATH, as nsys does,
 * from the first device open on. nvtx3 loads the tool itself; mox needs no
 * NVTX library. */
#include "trace_internal.h"

#include <pthread.h>
#include <stdlib.h>

#include <nvtx3/nvToolsExt.h>

#include "hal/hal.h"

static atomic_bool nvtx_on;

bool mox__trace_nvtx_start(void)
{
    const char *tool = getenv("NVTX_INJECTION64_PATH");
    atomic_store(&nvtx_on, tool && *tool);
    return atomic_load(&nvtx_on);
}

bool mox__trace_nvtx_on(void) { return atomic_load_explicit(&nvtx_on, memory_order_relaxed); }

void mox__trace_nvtx_mark(const char *text) { nvtxMarkA(text); }

/* The open ranges of batches in flight; a batch that finds the table full
 * gets no range (bounded by the devices' command capacity in practice). */
#define RANGE_SLOTS 256
static struct {
    const mox__submission *sub;
    nvtxRangeId_t id;
} ranges[RANGE_SLOTS];
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

void mox__trace_nvtx_batch_begin(const mox__submission *sub, const char *label)
{
    nvtxRangeId_t id = nvtxRangeStartA(label);
    bool kept = false;
    pthread_mutex_lock(&ranges_lock);
    for (size_t i = 0; i < RANGE_SLOTS && !kept; i++) {
        if (!ranges[i].sub) {
            ranges[i].sub = sub;
            ranges[i].id = id;
            kept = true;
        }
    }
    pthread_mutex_unlock(&ranges_lock);
    if (!kept)
        nvtxRangeEnd(id);
}

void mox__trace_nvtx_batch_end(const mox__submission *sub)
{
    nvtxRangeId_t id = 0;
    bool found = false;
    pthread_mutex_lock(&ranges_lock);
    for (size_t i = 0; i < RANGE_SLOTS && !found; i++) {
        if (ranges[i].sub == sub) {
            id = ranges[i].id;
            ranges[i].sub = NULL;
            found = true;
        }
    }
    pthread_mutex_unlock(&ranges_lock);
    if (found)
        nvtxRangeEnd(id);
}
