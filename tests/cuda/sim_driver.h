/* tests/cuda/sim_driver.h - internal to the simulated driver's API files
 * (sim_cuda.c, sim_device.c, sim_stream.c, sim_graph.c): the global state,
 * the operations queued on a stream and the functions that queue them. The
 * kernels (sim_kernels.c) only need sim_cuda.h. */
#ifndef MOX_TESTS_SIM_DRIVER_H
#define MOX_TESTS_SIM_DRIVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/cuda_api.h"
#include "sim_cuda.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- global state: MOX_SIM_DEVICES devices (default 1, at most
 * SIM_MAX_DEVICES), one primary context each; one lock for everything ---- */

#define SIM_MAX_DEVICES 8

struct CUctx_st {
    int ordinal;
    int refs;
    CUresult sticky;               /* set by a faulting kernel: every call fails */
    bool peer[SIM_MAX_DEVICES];    /* cuCtxEnablePeerAccess towards each context */
};

extern pthread_mutex_t g_lock;
extern pthread_cond_t g_cv;
extern struct CUctx_st g_ctx[SIM_MAX_DEVICES];
/* Like the driver: most calls need a current context on the calling thread
 * (or its stream's worker); CUDA_ERROR_INVALID_CONTEXT otherwise. The
 * per-thread slots live under pthread keys, not _Thread_local: this
 * library is dlopen'ed, and LeakSanitizer's tracer crashed now and then
 * ("Tracer caught signal 11") walking the dynamic TLS of such a library
 * at exit. */
enum sim_slot { SIM_SLOT_CURRENT, SIM_SLOT_KERNEL };
CUcontext *sim_thread_slot(enum sim_slot which);
#define t_current (*sim_thread_slot(SIM_SLOT_CURRENT))
/* Devices simulated (MOX_SIM_DEVICES) and how they reach each other
 * (MOX_SIM_PEER=nvlink, the default, pcie or none). */
int sim_device_count(void);
int sim_peer_kind(void); /* 0 none, 1 pcie, 2 nvlink */
/* The context that allocated `p` (cuMemAlloc*), or NULL. Caller holds g_lock. */
CUcontext sim_mem_ctx(const void *p);

/* A context of a simulated device. */
bool sim_valid_ctx(CUcontext c);
/* Queues a copy of n bytes on `s`. */
CUresult sim_copy_async(void *dst, const void *src, size_t n, CUstream s);

/* ---- streams, events, operations ---- */

struct CUevent_st {
    CUcontext ctx;                /* its context: a fault there releases its waiters */
    uint64_t recorded, completed; /* generations */
    uint64_t done_ns;             /* CLOCK_MONOTONIC when the last record completed */
};

typedef enum op_kind {
    OP_KERNEL, OP_COPY, OP_SET8, OP_SET16, OP_SET32, OP_RECORD, OP_WAIT, OP_GRAPH, OP_FREE
} op_kind;

struct CUgraphExec_st;

typedef struct op {
    struct op *next;
    op_kind kind;
    CUfunction fn;
    sim_launch launch;
    void *dst;
    const void *src;
    size_t n;
    uint32_t value;
    CUevent event;
    uint64_t gen;
    struct sim_node *nodes; /* OP_GRAPH: a snapshot */
    size_t node_count;
    struct CUgraphExec_st *exec;
} op;

struct CUstream_st {
    CUcontext ctx;
    pthread_t thread;
    op *head, *tail;
    bool busy, stop;
};

typedef struct sim_node {
    CUfunction fn;
    sim_launch launch;
} sim_node;

bool sim_valid_func(CUfunction f);
/* Checks a launch's geometry and copies its parameters into `out`. */
CUresult sim_make_launch(CUfunction f, const unsigned int *grid, const unsigned int *block,
                         void **params, sim_launch *out);
op *sim_op_new(op_kind k);
/* A stream's worker thread (arg: the CUstream). */
void *sim_stream_main(void *arg);
/* Caller holds g_lock. */
void sim_enqueue(CUstream s, op *o);
/* Queues `o` on `s`, or frees it and fails without a current context or
 * after a sticky fault. */
CUresult sim_submit(CUstream s, op *o);
/* Caller holds g_lock. */
void sim_exec_done(struct CUgraphExec_st *e);

/* Every entry point starts here: a sticky fault of the current context
 * fails everything in it. */
#define STICKY()                                                                \
    do {                                                                        \
        if (!t_current)                                                         \
            return CUDA_ERROR_INVALID_CONTEXT;                                  \
        pthread_mutex_lock(&g_lock);                                            \
        CUresult st_ = t_current->sticky;                                       \
        pthread_mutex_unlock(&g_lock);                                          \
        if (st_)                                                                \
            return st_;                                                         \
    } while (0)

#endif
