/* harness.c - runs a test dispatch through mox__cpu_run_blocks on several
 * pthreads, as the CPU backend's pool would: workers claim chunks of
 * blocks from a shared counter (harness.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

typedef struct job {
    mox__cpu_dispatch *d;
    uint64_t total, chunk;
    _Atomic uint64_t next;
    _Atomic int rc;
} job;

static void *worker_main(void *arg) {
    job *j = arg;
    for (;;) {
        uint64_t first = atomic_fetch_add(&j->next, j->chunk);
        if (first >= j->total) break;
        uint64_t count = j->total - first < j->chunk ? j->total - first : j->chunk;
        int rc = mox__cpu_run_blocks(j->d, first, count);
        if (rc != 0) {
            int zero = 0;
            atomic_compare_exchange_strong(&j->rc, &zero, rc);
        }
    }
    return NULL;
}

int harness_run_entry(const mox_cpu_kernel_entry *kernel, mox_cpu_lane **(*lane_slot)(void), mox_kdim3 grid,
                      mox_kdim3 block, void *const *args, unsigned threads, uint64_t chunk, mox__cpu_dispatch *d) {
    mox__cpu_dispatch_init(d, kernel, lane_slot, grid, block, args);
    job j;
    j.d = d;
    j.total = mox__cpu_dispatch_block_count(d);
    j.chunk = chunk == 0 ? 1 : chunk;
    atomic_init(&j.next, 0);
    atomic_init(&j.rc, 0);
    if (threads <= 1) {
        worker_main(&j);
        return atomic_load(&j.rc);
    }
    pthread_t tids[16];
    if (threads > 16) threads = 16;
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&tids[i], NULL, worker_main, &j) != 0) {
            fprintf(stderr, "harness: pthread_create failed\n");
            abort();
        }
    }
    for (unsigned i = 0; i < threads; i++) pthread_join(tids[i], NULL);
    return atomic_load(&j.rc);
}
