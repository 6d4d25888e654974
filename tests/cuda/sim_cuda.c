/* tests/cuda/sim_cuda.c - a simulated CUDA driver (libsimcuda.so) for
 * running the backend's GPU tests on machines without a GPU, under ASan and
 * TSan too. It implements every symbol of the backend's table with the
 * driver's semantics that the backend relies on: one worker thread per
 * stream executing operations in order (so work is really asynchronous),
 * events with record generations, cross-stream waits, graphs executed in
 * node order, host-mapped memory, sticky faults that fail every later call
 * of the faulting context. MOX_SIM_DEVICES (default 1) devices, one primary
 * context each, reach each other as MOX_SIM_PEER says (nvlink, the
 * default, pcie or none): peer access, peer copies, waits on another
 * context's events (a fault of that context releases them: what a real
 * driver does there is unmeasured, docs/multi-device.md), and kernels that
 * touch another context's memory without peer access fault.
 * Kernels are the ones of tests/cuda/kernels.cu (and, for running the core
 * end to end here, those of the conformance suite and the benchmark),
 * written again in C with the same gate logic as mox/kernel_cuda.h. Device
 * memory is host memory.
 *
 * It checks what a real driver checks and the backend could get wrong:
 * launching an unknown function, params of a kernel node from another
 * graph, a wait on an event nobody recorded (ignored, as CUDA does).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_driver.h"

/* ---- global state ---- */

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
struct CUctx_st g_ctx[SIM_MAX_DEVICES] = {
    {.ordinal = 0}, {.ordinal = 1}, {.ordinal = 2}, {.ordinal = 3},
    {.ordinal = 4}, {.ordinal = 5}, {.ordinal = 6}, {.ordinal = 7}};
static pthread_key_t g_slot_keys[2];
static pthread_once_t g_slot_once = PTHREAD_ONCE_INIT;

static void slot_keys_create(void)
{
    for (int i = 0; i < 2; i++)
        if (pthread_key_create(&g_slot_keys[i], free) != 0)
            abort();
}

CUcontext *sim_thread_slot(enum sim_slot which)
{
    pthread_once(&g_slot_once, slot_keys_create);
    CUcontext *slot = pthread_getspecific(g_slot_keys[which]);
    if (!slot) {
        slot = calloc(1, sizeof *slot);
        if (!slot || pthread_setspecific(g_slot_keys[which], slot) != 0)
            abort(); /* a test driver: a few bytes */
    }
    return slot;
}

#define t_kernel_ctx (*sim_thread_slot(SIM_SLOT_KERNEL)) /* the stream a worker runs */

int sim_device_count(void)
{
    const char *v = getenv("MOX_SIM_DEVICES");
    int n = v && v[0] ? atoi(v) : 1;
    return n < 1 ? 1 : n > SIM_MAX_DEVICES ? SIM_MAX_DEVICES : n;
}

int sim_peer_kind(void)
{
    const char *v = getenv("MOX_SIM_PEER");
    if (v && strcmp(v, "none") == 0)
        return 0;
    return v && strcmp(v, "pcie") == 0 ? 1 : 2;
}

CUcontext sim_kernel_ctx(void) { return t_kernel_ctx; }

void sim_set_sticky(CUresult r)
{
    pthread_mutex_lock(&g_lock);
    CUcontext c = t_kernel_ctx ? t_kernel_ctx : t_current;
    if (c)
        c->sticky = r;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
}

bool sim_can_touch(CUcontext ctx, const void *p)
{
    pthread_mutex_lock(&g_lock);
    CUcontext owner = sim_mem_ctx(p);
    bool ok = !owner || owner == ctx || (ctx && ctx->peer[owner->ordinal]);
    pthread_mutex_unlock(&g_lock);
    return ok;
}

bool sim_device_mem(const void *p)
{
    pthread_mutex_lock(&g_lock);
    bool dev = sim_mem_ctx(p) != NULL;
    pthread_mutex_unlock(&g_lock);
    return dev;
}

bool sim_valid_func(CUfunction f)
{
    for (size_t i = 0; i < sim_func_count; i++)
        if (f == &sim_funcs[i] || f == &sim_ungated_funcs[i])
            return true;
    return false;
}

CUresult sim_make_launch(CUfunction f, const unsigned int *grid, const unsigned int *block,
                         void **params, sim_launch *out)
{
    if (!sim_valid_func(f) || !params)
        return CUDA_ERROR_INVALID_VALUE;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < 3; i++) {
        if (grid[i] == 0 || block[i] == 0)
            return CUDA_ERROR_INVALID_VALUE;
        out->grid[i] = grid[i];
        out->block[i] = block[i];
    }
    if ((uint64_t)block[0] * block[1] * block[2] > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    for (uint32_t a = 0; a < f->nargs; a++) {
        if (f->size[a] > sizeof out->args[a])
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(out->args[a], params[a], f->size[a]);
    }
    return CUDA_SUCCESS;
}

/* ---- operations and the streams' worker threads ---- */

op *sim_op_new(op_kind k)
{
    op *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->kind = k;
    return o;
}

/* An entry without the gate check runs the kernel with its gate's
 * dependencies ignored, as the generated one would: launched where a gate
 * with dependencies was due, a dependent of a failure would run. */
static void run_kernel(CUfunction fn, const sim_launch *l)
{
    if (!fn->ungated) {
        fn->fn(l);
        return;
    }
    sim_launch bare = *l;
    mox_gate g;
    memcpy(&g, bare.args[0], sizeof g);
    g.dep_count = 0;
    memcpy(bare.args[0], &g, sizeof g);
    fn->fn(&bare);
}

static void run_op(op *o)
{
    switch (o->kind) {
    case OP_KERNEL:
        run_kernel(o->fn, &o->launch);
        break;
    case OP_COPY:
        memcpy(o->dst, o->src, o->n);
        break;
    case OP_SET8:
        memset(o->dst, (int)o->value, o->n);
        break;
    case OP_SET16:
        for (size_t i = 0; i < o->n; i++)
            ((uint16_t *)o->dst)[i] = (uint16_t)o->value;
        break;
    case OP_SET32:
        for (size_t i = 0; i < o->n; i++)
            ((uint32_t *)o->dst)[i] = o->value;
        break;
    case OP_FREE:
        free(o->dst);
        break;
    case OP_GRAPH:
        for (size_t i = 0; i < o->node_count; i++) {
            pthread_mutex_lock(&g_lock);
            bool dead = t_kernel_ctx->sticky != CUDA_SUCCESS;
            pthread_mutex_unlock(&g_lock);
            if (dead)
                break;
            run_kernel(o->nodes[i].fn, &o->nodes[i].launch);
        }
        break;
    case OP_RECORD:
    case OP_WAIT:
        break;
    }
}

void *sim_stream_main(void *arg)
{
    CUstream s = arg;
    t_kernel_ctx = s->ctx;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        while (!s->stop && (!s->head || s->ctx->sticky))
            pthread_cond_wait(&g_cv, &g_lock);
        if (s->stop)
            break;
        op *o = s->head;
        if (o->kind == OP_WAIT) {
            /* An event of a faulted context never completes: its waiters are
             * released (the simulator's choice; see the header). */
            while (o->event->completed < o->gen && !o->event->ctx->sticky && !s->ctx->sticky &&
                   !s->stop)
                pthread_cond_wait(&g_cv, &g_lock);
            if (s->ctx->sticky || s->stop)
                continue;
        }
        s->head = o->next;
        if (!s->head)
            s->tail = NULL;
        s->busy = true;
        pthread_mutex_unlock(&g_lock);
        run_op(o);
        pthread_mutex_lock(&g_lock);
        if (o->kind == OP_RECORD && !s->ctx->sticky && o->event->completed < o->gen) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            o->event->completed = o->gen;
            o->event->done_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        }
        if (o->kind == OP_GRAPH)
            sim_exec_done(o->exec);
        s->busy = false;
        pthread_cond_broadcast(&g_cv);
        free(o->nodes);
        free(o);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* Caller holds g_lock. */
void sim_enqueue(CUstream s, op *o)
{
    if (s->tail)
        s->tail->next = o;
    else
        s->head = o;
    s->tail = o;
    pthread_cond_broadcast(&g_cv);
}

CUresult sim_submit(CUstream s, op *o)
{
    if (!t_current) {
        free(o->nodes);
        free(o);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    pthread_mutex_lock(&g_lock);
    if (s->ctx->sticky || t_current->sticky) {
        CUresult r = s->ctx->sticky ? s->ctx->sticky : t_current->sticky;
        pthread_mutex_unlock(&g_lock);
        free(o->nodes);
        free(o);
        return r;
    }
    sim_enqueue(s, o);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
