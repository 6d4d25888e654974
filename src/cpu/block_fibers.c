/* block_fibers.c - the fiber executor: each thread of a cooperative block
 * is a fiber of the calling worker, scheduled round-robin; barriers and
 * warp exchanges are services kernel code calls through its lane
 * (block_fibers.h). Kernels run here when moxc did not turn them into a
 * work-group function, or when MOX_CPU_EXECUTOR=fibers asks for it. */
#include "block_fibers.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "fiber.h"

#define WARP 32u
#define MAX_WARPS (MOX__CPU_MAX_BLOCK_THREADS / WARP)

/* One warp's exchange state. Exchange k of a warp uses slots[k & 1]:
 * the last lane to deposit completes exchange k and runs on, possibly into
 * exchange k + 1, while lanes that waited in k have not been resumed yet to
 * read its values. So k + 1 must not overwrite k's slots. It cannot need
 * k's buffer again before k + 2, and exchange k + 1 only completes once
 * every lane has deposited into it, i.e. has finished reading k (a lane
 * reads an exchange's values before its next call). Two buffers suffice. */
typedef struct warp_state {
    uint32_t slots[2][WARP];
    uint32_t arrived[2];
    uint32_t completed;     /* exchanges completed; the pending one is this index */
    uint32_t lanes;         /* lanes that exist in this warp */
    uint32_t live;          /* lanes that have not returned */
    uint32_t finished_mask; /* lanes that have returned */
} warp_state;

/* One worker thread's cooperative machinery, reused block after block. */
typedef struct worker {
    mox__fiber main; /* the thread's own context: the scheduler */
    mox__fiber *fibers[MOX__CPU_MAX_BLOCK_THREADS];
    uint32_t fiber_count;
    size_t stack_size;

    /* the block running now */
    mox__cpu_dispatch *d;
    mox_cpu_lane **slot;      /* the module's lane slot on this thread */
    mox_cpu_lane *slot_saved; /* its value before the block */
    uint32_t n;               /* threads in the block */
    uint32_t current;         /* the running fiber */
    uint32_t live;            /* threads that have not returned */
    uint32_t idle;            /* consecutive resumes that made no progress */
    uint32_t barrier_arrived;
    uint32_t barrier_gen;
    int aborted;
    uint16_t next[MOX__CPU_MAX_BLOCK_THREADS]; /* ring of live threads */
    uint16_t prev[MOX__CPU_MAX_BLOCK_THREADS];
    unsigned char finished[MOX__CPU_MAX_BLOCK_THREADS];
    mox_cpu_lane lanes[MOX__CPU_MAX_BLOCK_THREADS];
    warp_state warps[MAX_WARPS];
} worker;

/* ---------------- services ---------------- */

void mox__cpu_svc_fail(void *dispatch, uint32_t code) {
    mox__cpu_dispatch *d = dispatch;
    uint32_t expected = MOX_DISPATCH_OK;
    if (atomic_compare_exchange_strong_explicit(&d->fail_state, &expected, MOX_DISPATCH_FAILED,
                                                memory_order_relaxed, memory_order_relaxed))
        d->fail_code = code;
}

/* Switches from the running fiber to fiber `to` of the block. */
static void switch_to(worker *w, uint32_t to) {
    uint32_t from = w->current;
    w->current = to;
    *w->slot = &w->lanes[to];
    mox__fiber_switch(w->fibers[from], w->fibers[to]);
}

static void switch_to_main(worker *w) {
    *w->slot = w->slot_saved;
    mox__fiber_switch(w->fibers[w->current], &w->main);
}

/* Every live thread is waiting for something only another waiting thread
 * could provide: give up on the block (fiber.h's restart reclaims the
 * stacks). */
static void abort_block(worker *w) {
    w->aborted = 1;
    atomic_store_explicit(&w->d->fault, MOX__CPU_FAULT_DIVERGENT, memory_order_relaxed);
    switch_to_main(w);
    /* run_block restarts this fiber instead of resuming it */
    fprintf(stderr, "mox: internal error: an abandoned fiber was resumed\n");
    abort();
}

/* Lets the other threads run until *word changes. The caller has just
 * arrived somewhere (progress). In round-robin order, `live` consecutive
 * resumes of waiting threads without any arrival in between means every
 * live thread waits and none can move: a deadlock. */
static void wait_while_equal(worker *w, const uint32_t *word, uint32_t value) {
    w->idle = 0;
    for (;;) {
        uint32_t nx = w->next[w->current];
        if (nx == w->current) abort_block(w);
        switch_to(w, nx);
        if (*word != value) break;
        if (++w->idle >= w->live) abort_block(w);
    }
    w->idle = 0;
}

static void barrier_release(worker *w) {
    w->barrier_gen++;
    w->barrier_arrived = 0;
}

static void svc_barrier(void *block) {
    worker *w = block;
    if (w->barrier_arrived + 1u >= w->live) {
        barrier_release(w);
        w->idle = 0;
        return;
    }
    w->barrier_arrived++;
    wait_while_equal(w, &w->barrier_gen, w->barrier_gen);
}

/* Lanes that returned contribute 0 to the exchanges they miss. */
static void exchange_complete(warp_state *ws) {
    uint32_t p = ws->completed & 1u;
    for (uint32_t m = ws->finished_mask; m != 0; m &= m - 1u) ws->slots[p][__builtin_ctz(m)] = 0;
    ws->arrived[p] = 0;
    ws->completed++;
}

static const uint32_t *svc_warp_exchange(void *block, uint32_t value, uint32_t *active_lanes) {
    worker *w = block;
    uint32_t me = w->current;
    warp_state *ws = &w->warps[me / WARP];
    uint32_t p = ws->completed & 1u;
    ws->slots[p][me % WARP] = value;
    if (++ws->arrived[p] >= ws->live) {
        exchange_complete(ws);
        w->idle = 0;
    } else {
        wait_while_equal(w, &ws->completed, ws->completed);
    }
    *active_lanes = ws->lanes;
    return ws->slots[p];
}

static const mox_cpu_services coop_services = {svc_barrier, svc_warp_exchange, mox__cpu_svc_fail};

/* The running thread returned from the kernel: it counts as arrived at
 * every later barrier and exchange (a kernel bug moxc rejects, but one
 * that must not hang), and leaves the ring. */
static void thread_done(worker *w) {
    uint32_t me = w->current;
    warp_state *ws = &w->warps[me / WARP];
    w->finished[me] = 1;
    w->live--;
    ws->live--;
    ws->finished_mask |= 1u << (me % WARP);
    uint32_t p = ws->completed & 1u;
    if (ws->arrived[p] > 0 && ws->arrived[p] >= ws->live) exchange_complete(ws);
    if (w->barrier_arrived > 0 && w->barrier_arrived >= w->live) barrier_release(w);
    w->idle = 0;
    if (w->live == 0) {
        switch_to_main(w);
        return;
    }
    uint32_t nx = w->next[me], pv = w->prev[me];
    w->next[pv] = (uint16_t)nx;
    w->prev[nx] = (uint16_t)pv;
    switch_to(w, nx);
}

/* Each fiber runs one thread of whatever block is current, forever. */
static void fiber_entry(void *arg) {
    worker *w = arg;
    for (;;) {
        w->d->kernel->thread_fn(w->d->args);
        thread_done(w);
    }
}

/* ---------------- per-thread workers ---------------- */

static pthread_key_t worker_key;
static pthread_once_t worker_key_once = PTHREAD_ONCE_INIT;
static _Thread_local worker *tls_worker;

static void worker_free(worker *w) {
    for (uint32_t i = 0; i < w->fiber_count; i++) {
        mox__fiber_destroy(w->fibers[i]);
        mox__free(w->fibers[i]);
    }
    mox__free(w);
}

static void worker_key_destroy(void *p) {
    if (p != NULL) worker_free(p);
}

static void worker_key_init(void) {
    if (pthread_key_create(&worker_key, worker_key_destroy) != 0) {
        fprintf(stderr, "mox: cannot create the CPU executor's thread key\n");
        abort();
    }
}

static worker *worker_get(void) {
    if (tls_worker != NULL) return tls_worker;
    pthread_once(&worker_key_once, worker_key_init);
    worker *w = mox__calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    if (pthread_setspecific(worker_key, w) != 0) {
        mox__free(w);
        return NULL;
    }
    mox__fiber_init_thread(&w->main);
    w->stack_size = mox__fiber_stack_size();
    tls_worker = w;
    return w;
}

void mox__cpu_thread_release(void) {
    worker *w = tls_worker;
    if (w == NULL) return;
    tls_worker = NULL;
    pthread_setspecific(worker_key, NULL);
    worker_free(w);
}

static int worker_reserve(worker *w, uint32_t n) {
    while (w->fiber_count < n) {
        mox__fiber *f = mox__malloc(sizeof *f);
        if (f == NULL) return ENOMEM;
        int rc = mox__fiber_create(f, w->stack_size, fiber_entry, w);
        if (rc != 0) {
            mox__free(f);
            return rc;
        }
        w->fibers[w->fiber_count++] = f;
    }
    return 0;
}

/* ---------------- blocks ---------------- */

mox_kdim3 mox__cpu_block_coords(const mox__cpu_dispatch *d, uint64_t linear) {
    mox_kdim3 b;
    b.x = (uint32_t)(linear % d->grid.x);
    linear /= d->grid.x;
    b.y = (uint32_t)(linear % d->grid.y);
    b.z = (uint32_t)(linear / d->grid.y);
    return b;
}

void mox__cpu_lane_init(mox_cpu_lane *l, mox__cpu_dispatch *d, const mox_cpu_services *svc, void *block,
                        void *dynamic_shared) {
    memset(l, 0, sizeof *l);
    l->block_dim = d->block;
    l->grid_dim = d->grid;
    l->svc = svc;
    l->block = block;
    l->dispatch = d;
    l->dynamic_shared = dynamic_shared;
    l->dynamic_shared_bytes = dynamic_shared ? d->dynamic_shared_bytes : 0;
}

static void run_block(worker *w, mox_kdim3 block_idx) {
    uint32_t n = w->n;
    for (uint32_t i = 0; i < n; i++) {
        w->lanes[i].block_idx = block_idx;
        w->finished[i] = 0;
        w->next[i] = (uint16_t)(i + 1u == n ? 0u : i + 1u);
        w->prev[i] = (uint16_t)(i == 0 ? n - 1u : i - 1u);
    }
    for (uint32_t k = 0; k * WARP < n; k++) {
        warp_state *ws = &w->warps[k];
        ws->lanes = n - k * WARP < WARP ? n - k * WARP : WARP;
        ws->live = ws->lanes;
        ws->arrived[0] = ws->arrived[1] = 0;
        ws->completed = 0;
        ws->finished_mask = 0;
    }
    w->live = n;
    w->idle = 0;
    w->barrier_arrived = 0;
    w->barrier_gen = 0;
    w->aborted = 0;
    w->current = 0;
    *w->slot = &w->lanes[0];
    mox__fiber_switch(&w->main, w->fibers[0]);
    /* back when every thread returned, or the block was abandoned */
    if (w->aborted) {
        for (uint32_t i = 0; i < n; i++)
            if (!w->finished[i]) mox__fiber_restart(w->fibers[i]);
    }
}

int mox__cpu_run_fibers(mox__cpu_dispatch *d, uint32_t n, uint64_t first, uint64_t count,
                        void *dynamic_shared) {
    worker *w = worker_get();
    if (w == NULL) return ENOMEM;
    int rc = worker_reserve(w, n);
    if (rc != 0) return rc;
    w->d = d;
    w->n = n;
    w->slot = d->lane_slot();
    w->slot_saved = *w->slot;
    for (uint32_t i = 0; i < n; i++) {
        mox_cpu_lane *l = &w->lanes[i];
        mox__cpu_lane_init(l, d, &coop_services, w, dynamic_shared);
        l->linear = i;
        l->thread_idx.x = i % d->block.x;
        l->thread_idx.y = i / d->block.x % d->block.y;
        l->thread_idx.z = i / d->block.x / d->block.y;
    }
    for (uint64_t b = first; b < first + count; b++) {
        if (atomic_load_explicit(&d->fault, memory_order_relaxed) != MOX__CPU_FAULT_NONE) break;
        run_block(w, mox__cpu_block_coords(d, b));
    }
    *w->slot = w->slot_saved;
    w->d = NULL;
    return 0;
}
