/* block_exec.c - runs blocks of a dispatch on the calling thread: one call
 * of the kernel's work-group function per block, or the fiber executor
 * (block_fibers.c) for kernels without one; the dynamic shared memory of
 * the blocks; the MOX_CPU_EXECUTOR setting. */
#include "block_exec.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_fibers.h"
#include "core/alloc.h"

/* ---------------- MOX_CPU_EXECUTOR ---------------- */

static pthread_once_t setting_once = PTHREAD_ONCE_INIT;
static bool setting_fibers;
static bool setting_bad;
static char setting_text[64];

static void read_setting(void) {
    const char *v = getenv("MOX_CPU_EXECUTOR");
    if (v == NULL || *v == '\0') return;
    if (strcmp(v, "fibers") == 0) {
        setting_fibers = true;
        return;
    }
    setting_bad = true;
    snprintf(setting_text, sizeof setting_text, "%s", v);
}

bool mox__cpu_executor_setting_valid(char *why, size_t why_size) {
    pthread_once(&setting_once, read_setting);
    if (!setting_bad) return true;
    snprintf(why, why_size, "MOX_CPU_EXECUTOR must be 'fibers' (or unset), not '%s'", setting_text);
    return false;
}

/* ---------------- work-group functions ---------------- */

/* The serial lane's barrier and exchange: a work-group function never
 * calls them (barriers and warp operations are steps between its loops),
 * so getting here means the module's entry table is wrong. */
static void group_misuse(const char *what) {
    fprintf(stderr, "mox: internal error: %s called from a kernel's work-group function\n", what);
    abort();
}
static void group_barrier(void *block) {
    (void)block;
    group_misuse("barrier");
}
static const uint32_t *group_exchange(void *block, uint32_t value, uint32_t *active_lanes) {
    (void)block, (void)value, (void)active_lanes;
    group_misuse("a warp operation");
    return NULL;
}

static const mox_cpu_services group_services = {group_barrier, group_exchange, mox__cpu_svc_fail};

static void run_groups(mox__cpu_dispatch *d, uint64_t first, uint64_t count, void *dynamic_shared) {
    mox_cpu_lane **slot = d->lane_slot();
    mox_cpu_lane *saved = *slot;
    mox_cpu_lane lane;
    mox__cpu_lane_init(&lane, d, &group_services, NULL, dynamic_shared);
    mox_cpu_group g;
    memset(&g, 0, sizeof g);
    g.block_dim = d->block;
    g.grid_dim = d->grid;
    g.lane = &lane;
    g.dynamic_shared = lane.dynamic_shared;
    g.dynamic_shared_bytes = lane.dynamic_shared_bytes;
    *slot = &lane;
    for (uint64_t b = first; b < first + count; b++) {
        if (atomic_load_explicit(&d->fault, memory_order_relaxed) != MOX__CPU_FAULT_NONE) break;
        g.block_idx = lane.block_idx = mox__cpu_block_coords(d, b);
        d->kernel->group_fn(d->args, &g);
    }
    *slot = saved;
}

/* ---------------- dispatches ---------------- */

void mox__cpu_dispatch_init(mox__cpu_dispatch *d, const mox_cpu_kernel_entry *kernel,
                            mox_cpu_lane **(*lane_slot)(void), mox_kdim3 grid, mox_kdim3 block,
                            void *const *args) {
    d->kernel = kernel;
    d->lane_slot = lane_slot;
    d->grid = grid;
    d->block = block;
    d->args = args;
    d->dynamic_shared_bytes = 0;
    atomic_init(&d->fail_state, MOX_DISPATCH_OK);
    d->fail_code = 0;
    atomic_init(&d->fault, MOX__CPU_FAULT_NONE);
}

uint64_t mox__cpu_dispatch_block_count(const mox__cpu_dispatch *d) {
    return (uint64_t)d->grid.x * d->grid.y * d->grid.z;
}

uint64_t mox__cpu_dispatch_block_threads(const mox__cpu_dispatch *d) {
    return (uint64_t)d->block.x * d->block.y * d->block.z;
}

int mox__cpu_run_blocks(mox__cpu_dispatch *d, uint64_t first, uint64_t count) {
    uint64_t total = mox__cpu_dispatch_block_count(d);
    uint64_t threads = mox__cpu_dispatch_block_threads(d);
    if (threads == 0 || threads > MOX__CPU_MAX_BLOCK_THREADS) return EINVAL;
    if (first > total || count > total - first) return EINVAL;
    if (count == 0) return 0;
    pthread_once(&setting_once, read_setting);
    /* One block at a time on this thread: one allocation serves the range. */
    void *dynamic_shared = NULL;
    if (d->dynamic_shared_bytes) {
        size_t bytes = ((size_t)d->dynamic_shared_bytes + 63u) & ~(size_t)63u;
        if (!(dynamic_shared = mox__aligned_alloc(64, bytes))) return ENOMEM;
    }
    int rc = 0;
    if (d->kernel->group_fn != NULL && !setting_fibers)
        run_groups(d, first, count, dynamic_shared);
    else
        rc = mox__cpu_run_fibers(d, (uint32_t)threads, first, count, dynamic_shared);
    mox__free(dynamic_shared);
    return rc;
}
