/* cpu_exec.c - running an execution on the thread pool: each ready
 * dispatch is one pool job whose chunks are block ranges run by
 * mox__cpu_run_blocks (or 1 MiB pieces of a transfer or fill); the worker finishing
 * a dispatch's last chunk releases its successors (or gates them), and the
 * one finishing an execution's last dispatch reports completion to the
 * core, which starts what waited for it. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/alloc.h"
#include "core/trace.h"
#include "cpu_backend_module.h"
#include "cpu_exec.h"

#define TRANSFER_CHUNK (1u << 20)

/* ---------------- dispatch graph ---------------- */

static void finish_dispatch(cpu_disp *cd);

static bool must_gate(const mox__submission *s, const mox__dispatch *d)
{
    if (d->kind == MOX__CMD_DOWNLOAD || d->kind == MOX__CMD_UPLOAD)
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

/* Bytes [from, from+n) of a fill, at `at`: the pattern repeated from the
 * fill's start (byte k of the fill is pat[k % size]); the first whole
 * period written is then copied onto what follows, doubling. */
static void fill_piece(unsigned char *at, uint64_t from, size_t n, const unsigned char *pat,
                       uint32_t size)
{
    if (size == 1) {
        memset(at, pat[0], n);
        return;
    }
    size_t phase = (size_t)(from % size);
    size_t head = size - phase < n ? size - phase : n;
    memcpy(at, pat + phase, head);
    at += head;
    n -= head;
    size_t done = size < n ? size : n;
    memcpy(at, pat, done);
    while (done < n) {
        size_t k = done < n - done ? done : n - done;
        memcpy(at + done, at, k);
        done += k;
    }
}

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
    else if (d->kind == MOX__CMD_FILL)
        fill_piece(dev + off, off, (size_t)(end - off), host, d->pattern_size);
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

void mox__cpu_exec_prepare(cpu_backend *be, mox__submission *s)
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
void mox__cpu_exec_admit(cpu_backend *be, cpu_sub *cs)
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
