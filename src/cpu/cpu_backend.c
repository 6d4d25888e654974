/* cpu_backend.c - the CPU backend: host memory as device memory, modules
 * loaded from verified bytes (memfd + dlopen of /proc/self/fd/N, never the
 * artifact path again), and submissions executed on the thread pool: each
 * ready dispatch is one pool job whose chunks are block ranges run by
 * mox__cpu_run_blocks; the worker finishing a dispatch's last chunk
 * releases its successors (or gates them), and the one finishing a
 * submission's last dispatch starts the submissions that waited for it and
 * reports completion to the core. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "block_exec.h"
#include "core/alloc.h"
#include "core/trace.h"
#include "hal/hal.h"
#include "cpu_backend_module.h"
#include "cpu_device.h"
#include "fiber.h"
#include "thread_pool.h"

#define TRANSFER_CHUNK (1u << 20)

typedef struct cpu_backend cpu_backend;

typedef struct cpu_sub cpu_sub;

/* Points an execution usually waits for: its queue's previous value and a
 * few other queues'; more take an allocation. */
#define INLINE_WAITS 4

struct cpu_sub {
    cpu_backend *be;
    mox__submission *sub;
    _Atomic uint32_t dispatches_left;
    _Atomic uint32_t waits_left;   /* points not reached yet, +1 while registering */
    mox__sem_waiter inline_waiters[INLINE_WAITS];
    mox__sem_waiter *waiters;      /* inline_waiters or allocated */
    mox_error *failure;            /* a waited semaphore failed: run nothing */
    cpu_sub *next;                 /* held list */
    mox__pool_job start_job;       /* starts the roots on a worker */
};

typedef struct cpu_disp {
    mox__pool_job job;         /* first: the pool hands this back */
    mox__cpu_dispatch exec;
    cpu_sub *cs;
    mox__dispatch *d;
    _Atomic uint32_t preds_left;
    _Atomic int run_error;     /* errno from mox__cpu_run_blocks */
    _Atomic uint64_t trace_start; /* while tracing: when its first chunk started */
    struct cpu_disp *next_work;
} cpu_disp;

struct cpu_backend {
    mox__backend base;
    mox__pool *pool;
    pthread_mutex_t lock;      /* the held list */
    cpu_sub *held_head, *held_tail;
    bool hold;
    uint32_t ordinal;          /* which virtual device (cpu_device.c) */
};

static inline cpu_sub *sub_state(const mox__submission *s) { return s->be; }
static inline cpu_disp *disp_state(const mox__dispatch *d) { return d->be; }

/* ---------------- dispatch graph ---------------- */

static void finish_dispatch(cpu_disp *cd);

static bool must_gate(const mox__submission *s, const mox__dispatch *d)
{
    if (d->kind != MOX__CMD_KERNEL && d->kind != MOX__CMD_COPY)
        return false; /* host access ignores earlier failures */
    for (uint32_t k = d->pred_first; k < d->pred_first + d->pred_count; k++)
        if (s->dispatches[s->preds[k]]->state != MOX_DISPATCH_OK)
            return true;
    for (uint32_t g = d->gate_first; g < d->gate_first + d->gate_count; g++) {
        const mox__gate *gate = &s->gates[g];
        if (gate->sub->dispatches[gate->dispatch]->state != MOX_DISPATCH_OK)
            return true;
    }
    return false;
}

/* Runs or gates the submission's roots. Once the last root is handed over,
 * the submission may complete and be freed on another thread at any
 * moment, so the roots are listed first and nothing of the submission is
 * read after the last hand-over. */
static void start_sub(cpu_sub *cs)
{
    mox__submission *s = cs->sub;
    mox__pool *pool = cs->be->pool;
    cpu_disp *roots = NULL, **tail = &roots;
    for (uint32_t i = 0; i < s->count; i++) {
        if (s->dispatches[i]->pred_count == 0) {
            cpu_disp *cd = disp_state(s->dispatches[i]);
            cd->next_work = NULL;
            *tail = cd;
            tail = &cd->next_work;
        }
    }
    while (roots) {
        cpu_disp *cd = roots;
        roots = cd->next_work;
        if (must_gate(s, cd->d)) {
            cd->d->state = MOX_DISPATCH_GATED;
            finish_dispatch(cd);
        } else {
            mox__pool_push(pool, &cd->job);
        }
    }
}

static void finish_sub(cpu_sub *cs)
{
    if (cs->waiters != cs->inline_waiters)
        mox__free(cs->waiters);
    /* The core signals the semaphore: what waited for this execution starts
     * from inside this call, on this worker. */
    mox__execution_complete(cs->sub, cs->failure);
}

static void finish_dispatch(cpu_disp *first)
{
    /* A worklist rather than recursion: a failure can gate a long tail. */
    first->next_work = NULL;
    cpu_disp *work = first;
    while (work) {
        cpu_disp *cd = work;
        work = cd->next_work;
        mox__dispatch *d = cd->d;
        mox__submission *s = cd->cs->sub;
        for (uint32_t k = d->succ_first; k < d->succ_first + d->succ_count; k++) {
            cpu_disp *sd = disp_state(s->dispatches[s->succs[k]]);
            if (atomic_fetch_sub_explicit(&sd->preds_left, 1, memory_order_acq_rel) != 1)
                continue;
            if (must_gate(s, sd->d)) {
                sd->d->state = MOX_DISPATCH_GATED;
                sd->next_work = work;
                work = sd;
            } else {
                mox__pool_push(cd->cs->be->pool, &sd->job);
            }
        }
        /* Gated ones still in `work` keep the count above zero. */
        if (atomic_fetch_sub_explicit(&cd->cs->dispatches_left, 1, memory_order_acq_rel) == 1)
            finish_sub(cd->cs);
    }
}

/* ---------------- pool jobs ---------------- */

static void run_chunk(mox__pool_job *job, uint64_t first, uint64_t count)
{
    cpu_disp *cd = (cpu_disp *)job;
    mox__dispatch *d = cd->d;
    if (mox__trace_on() && !atomic_load_explicit(&cd->trace_start, memory_order_relaxed)) {
        uint64_t none = 0;
        atomic_compare_exchange_strong(&cd->trace_start, &none, mox__trace_now());
    }
    if (d->kind == MOX__CMD_KERNEL) {
        int rc = mox__cpu_run_blocks(&cd->exec, first, count);
        if (rc != 0)
            atomic_store(&cd->run_error, rc);
        return;
    }
    uint64_t off = first * TRANSFER_CHUNK;
    uint64_t end = (first + count) * TRANSFER_CHUNK;
    if (end > d->bytes)
        end = d->bytes;
    unsigned char *dev = (unsigned char *)d->address + d->offset;
    unsigned char *host = d->host;
    if (d->kind == MOX__CMD_DOWNLOAD)
        memcpy(host + off, dev + off, end - off);
    else if (d->kind == MOX__CMD_UPLOAD)
        memcpy(dev + off, host + off, end - off);
    else /* a copy, from this or another CPU device: one host memory */
        memcpy(dev + off, (const unsigned char *)d->src_address + d->src_offset + off, end - off);
}

static void job_finished(mox__pool_job *job)
{
    cpu_disp *cd = (cpu_disp *)job;
    mox__dispatch *d = cd->d;
    d->state = MOX_DISPATCH_OK;
    if (d->kind == MOX__CMD_KERNEL) {
        int rc = atomic_load(&cd->run_error);
        if (rc) {
            d->state = MOX_DISPATCH_FAILED;
            d->fault = rc == ENOMEM ? "out of memory for the CPU executor's fibers or dynamic shared memory"
                                    : "the CPU executor rejected the block shape";
            d->fault_status = rc == ENOMEM ? MOX_ERR_OUT_OF_MEMORY : 0;
        } else if (atomic_load(&cd->exec.fault) == MOX__CPU_FAULT_DIVERGENT) {
            d->state = MOX_DISPATCH_FAILED;
            d->fault = "threads of a block waited at different barriers or warp operations "
                       "(divergent cooperation); outputs are unspecified";
        } else if (atomic_load(&cd->exec.fail_state) == MOX_DISPATCH_FAILED) {
            d->state = MOX_DISPATCH_FAILED;
            d->fail_code = cd->exec.fail_code;
        }
    }
    if (mox__trace_on()) {
        uint64_t started = atomic_load_explicit(&cd->trace_start, memory_order_relaxed);
        if (started)
            mox__trace_device_span(cd->cs->sub, d, started, mox__trace_now());
    }
    finish_dispatch(cd);
}

/* A waited semaphore failed (device loss): nothing runs, every dispatch is
 * GATED and the execution completes with that failure. */
static void fail_sub(cpu_sub *cs)
{
    mox__submission *s = cs->sub;
    for (uint32_t i = 0; i < s->count; i++)
        s->dispatches[i]->state = MOX_DISPATCH_GATED;
    finish_sub(cs);
}

static void start_job_run(mox__pool_job *job, uint64_t first, uint64_t count)
{
    (void)first;
    (void)count;
    cpu_sub *cs = (cpu_sub *)((char *)job - offsetof(cpu_sub, start_job));
    if (cs->failure)
        fail_sub(cs);
    else
        start_sub(cs);
}

/* ---------------- submission ---------------- */

static void prepare_sub(cpu_backend *be, mox__submission *s)
{
    cpu_sub *cs = sub_state(s);
    cs->be = be;
    cs->sub = s;
    atomic_store(&cs->dispatches_left, s->count);
    cs->start_job.total = 1;
    cs->start_job.chunk = 1;
    cs->start_job.run = start_job_run;
    cs->start_job.finish = NULL; /* the submission may be gone once it ran */
    for (uint32_t i = 0; i < s->count; i++) {
        mox__dispatch *d = s->dispatches[i];
        cpu_disp *cd = disp_state(d);
        cd->cs = cs;
        cd->d = d;
        atomic_store(&cd->preds_left, d->pred_count);
        atomic_store(&cd->run_error, 0);
        atomic_store_explicit(&cd->trace_start, 0, memory_order_relaxed);
        cd->job.run = run_chunk;
        cd->job.finish = job_finished;
        cd->job.chunk = 0;
        if (d->kind == MOX__CMD_KERNEL) {
            const mox__cpu_module *m = d->module;
            mox_kdim3 grid = {d->config.grid.x, d->config.grid.y, d->config.grid.z};
            mox_kdim3 block = {d->config.block.x, d->config.block.y, d->config.block.z};
            mox__cpu_dispatch_init(&cd->exec, &m->entry->kernels[d->kernel], m->entry->lane_slot,
                                   grid, block, d->params);
            if (d->kernel_features & MOX_KFEAT_DYNAMIC_SHARED)
                cd->exec.dynamic_shared_bytes = d->config.shared_bytes;
            cd->job.total = mox__cpu_dispatch_block_count(&cd->exec);
            cd->job.unit_work = mox__cpu_dispatch_block_threads(&cd->exec); /* chunk sizing */
        } else {
            uint64_t chunks = (d->bytes + TRANSFER_CHUNK - 1) / TRANSFER_CHUNK;
            cd->job.total = chunks ? chunks : 1;
            cd->job.unit_work = 0;
        }
    }
}

/* Starts an execution whose waits are over. Roots that may be gated, and
 * executions that waited on a failed semaphore, are decided on a worker:
 * that can complete the execution, which must not happen inside execute
 * (nor inside the completion whose semaphore signal got us here). */
static void launch_sub(cpu_backend *be, cpu_sub *cs)
{
    mox__submission *s = cs->sub;
    bool worker = cs->failure != NULL;
    for (uint32_t i = 0; i < s->count && !worker; i++)
        worker = s->dispatches[i]->gate_count != 0;
    if (worker)
        mox__pool_push(be->pool, &cs->start_job);
    else
        start_sub(cs);
}

static void point_reached(void *ctx)
{
    cpu_sub *cs = ctx;
    if (atomic_fetch_sub_explicit(&cs->waits_left, 1, memory_order_acq_rel) != 1)
        return;
    mox__submission *s = cs->sub;
    for (uint32_t w = 0; w < s->wait_count && !cs->failure; w++)
        cs->failure = mox__semaphore_failure(s->waits[w].sem);
    if (!cs->failure && s->signal.value > 1)
        cs->failure = mox__semaphore_failure(s->signal.sem);
    if (cs->failure)
        mox_error_retain(cs->failure);
    launch_sub(cs->be, cs);
}

/* Registers a waiter per point: the wait list, plus the previous value of
 * the execution's own queue (queues are FIFO). The last point reached (or
 * the end of registration) launches it. */
static void admit(cpu_backend *be, cpu_sub *cs)
{
    mox__submission *s = cs->sub;
    uint32_t n = s->wait_count + 1;
    cs->waiters = n <= INLINE_WAITS ? cs->inline_waiters : mox__malloc(n * sizeof *cs->waiters);
    if (!cs->waiters) {
        cs->waiters = cs->inline_waiters;
        cs->failure = mox__error_new(MOX_ERR_OUT_OF_MEMORY,
                                     "out of memory waiting for %u earlier executions",
                                     s->wait_count);
        mox__pool_push(be->pool, &cs->start_job);
        return;
    }
    atomic_store(&cs->waits_left, n + 1);
    for (uint32_t i = 0; i < n; i++) {
        mox__sem_point pt = i < s->wait_count
                                ? s->waits[i]
                                : (mox__sem_point){s->signal.sem, s->signal.value - 1};
        mox__sem_waiter *w = &cs->waiters[i];
        w->fn = point_reached;
        w->ctx = cs;
        w->value = pt.value;
        if (!mox__semaphore_wait_async(pt.sem, w))
            point_reached(cs);
    }
    point_reached(cs); /* registration done */
}

static void cpu_execute(mox__backend *base, mox__submission *s)
{
    cpu_backend *be = (cpu_backend *)base;
    prepare_sub(be, s);
    cpu_sub *cs = sub_state(s);
    pthread_mutex_lock(&be->lock);
    if (be->hold) {
        cs->next = NULL;
        if (be->held_tail)
            be->held_tail->next = cs;
        else
            be->held_head = cs;
        be->held_tail = cs;
        pthread_mutex_unlock(&be->lock);
        return;
    }
    pthread_mutex_unlock(&be->lock);
    admit(be, cs);
}

static void cpu_set_hold(mox__backend *base, bool hold)
{
    cpu_backend *be = (cpu_backend *)base;
    pthread_mutex_lock(&be->lock);
    be->hold = hold;
    cpu_sub *held = hold ? NULL : be->held_head;
    if (!hold)
        be->held_head = be->held_tail = NULL;
    pthread_mutex_unlock(&be->lock);
    /* In execute order; whatever may start goes through admit, which never
     * completes inline. */
    while (held) {
        cpu_sub *cs = held;
        held = cs->next;
        cs->next = NULL;
        admit(be, cs);
    }
}

/* ---------------- memory and modules ---------------- */

static mox_error *cpu_buffer_alloc(mox__backend *base, uint64_t bytes, void **handle,
                                   void **address)
{
    (void)base;
    size_t rounded = (size_t)((bytes + 63u) & ~(uint64_t)63u);
    void *p = NULL;
    if (posix_memalign(&p, 64, rounded) != 0 || !p)
        return mox__error_new(MOX_ERR_ALLOCATION_FAILED,
                              "failed to allocate %llu bytes of CPU device memory",
                              (unsigned long long)bytes);
    memset(p, 0, rounded);
    *handle = p;
    *address = p;
    return NULL;
}

static void cpu_buffer_free(mox__backend *base, void *handle)
{
    (void)base;
    mox__free(handle);
}

static mox_error *cpu_buffer_upload(mox__backend *base, void *handle, uint64_t offset,
                                    const void *src, uint64_t bytes)
{
    (void)base;
    memcpy((unsigned char *)handle + offset, src, bytes);
    return NULL;
}

static mox_error *cpu_module_load(mox__backend *base, const mox__module_image *image,
                                  void **module)
{
    (void)base;
    mox_error *error = NULL;
    if (mox__cpu_module_load(image, (mox__cpu_module **)module, &error) != MOX_OK && !error)
        error = mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s' from %s: the CPU code does not load",
                               image->name, image->dir);
    return error;
}

static void cpu_module_unload(mox__backend *base, void *module)
{
    (void)base;
    mox__cpu_module_unload(module);
}

static void cpu_destroy(mox__backend *base)
{
    cpu_backend *be = (cpu_backend *)base;
    mox__pool_destroy(be->pool);
    pthread_mutex_destroy(&be->lock);
    mox__free(be);
}

static mox_error *cpu_peer(mox__backend *base, mox__backend *other, uint32_t *link)
{
    *link = ((cpu_backend *)base)->ordinal == ((cpu_backend *)other)->ordinal ? MOX__PEER_SAME
                                                                              : MOX__PEER_HOST;
    return NULL;
}

static const mox__backend_vtable cpu_vtable = {
    .destroy = cpu_destroy,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .buffer_upload = cpu_buffer_upload,
    .module_load = cpu_module_load,
    .module_unload = cpu_module_unload,
    .semaphore_init = NULL, /* host waiters need no backend state */
    .semaphore_fini = NULL,
    .execute = cpu_execute,
    .flush = NULL,          /* nothing is held back */
    .complete_inline = NULL, /* completion is already on the worker that finished */
    .set_hold = cpu_set_hold,
    .peer = cpu_peer,
};

/* Queues: enough that independent executions rarely share one (a queue
 * runs its executions one after the other). */
#define CPU_QUEUES 16u

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return UINT64_C(1) << 32;
    return (uint64_t)pages * (uint64_t)size;
}

mox_error *mox__cpu_backend_open(const mox__backend_config *config, mox__backend **out,
                                 mox__backend_info *info)
{
    char why[160];
    if (!mox__cpu_executor_setting_valid(why, sizeof why) || /* block_exec.h */
        !mox__fiber_stack_setting_valid(why, sizeof why))    /* fiber.h */
        return mox__error_new(MOX_ERR_CONFIG, "%s", why);
    uint32_t ordinal = 0;
    mox_error *err = mox__cpu_device_select(config, &ordinal);
    if (err)
        return err;
    cpu_backend *be = mox__calloc(1, sizeof *be);
    if (!be)
        return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory opening the CPU backend");
    be->ordinal = ordinal;
    int rc;
    be->pool = mox__pool_create(config->cpu_threads, &rc);
    if (!be->pool) {
        mox__free(be);
        if (rc == ENOMEM)
            return mox__error_new(MOX_ERR_OUT_OF_MEMORY,
                                  "out of memory starting the CPU backend's worker threads");
        return mox__error_new(MOX_ERR_BACKEND, "cannot start the CPU backend's worker threads: %s",
                              strerror(rc));
    }
    pthread_mutex_init(&be->lock, NULL);
    be->base.vt = &cpu_vtable;
    memset(info, 0, sizeof *info);
    mox__cpu_device_name(ordinal, mox__pool_threads(be->pool), info->name, sizeof info->name);
    info->ordinal = ordinal;
    mox__cpu_device_uuid(ordinal, info->uuid);
    /* CUDA's limits, so that a launch valid here is valid on a GPU. */
    info->max_block = mox_dim3_make(1024, 1024, 64);
    info->max_threads_per_block = MOX__CPU_MAX_BLOCK_THREADS;
    info->max_shared_bytes = MOX__CPU_MAX_DYNAMIC_SHARED;
    info->max_buffer_bytes = physical_memory();
    info->warp_size = 32;
    info->features = MOX_FEAT_ATOMICS | MOX_FEAT_WARP_OPS;
    info->module_file = MOX_FILE_CPU_SO;
    info->queue_count = CPU_QUEUES;
    info->submission_state_size = sizeof(cpu_sub);
    info->dispatch_state_size = sizeof(cpu_disp);
    *out = &be->base;
    return NULL;
}
