/* cpu_exec.h - the CPU backend's state per execution and per dispatch,
 * shared by cpu_backend.c (the backend object, memory, modules, hold) and
 * cpu_exec.c (running an execution's dispatch graph on the thread pool). */
#ifndef MOX_CPU_EXEC_H
#define MOX_CPU_EXEC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "block_exec.h"
#include "hal/hal.h"
#include "thread_pool.h"

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
    mox__mutex lock;           /* the held list (core/sync.h) */
    cpu_sub *held_head, *held_tail;
    bool hold;
    uint32_t ordinal;          /* which virtual device (cpu_device.c) */
};

static inline cpu_sub *sub_state(const mox__submission *s) { return s->be; }
static inline cpu_disp *disp_state(const mox__dispatch *d) { return d->be; }

/* Fills the execution's and its dispatches' state (s->be, d->be). */
void mox__cpu_exec_prepare(cpu_backend *be, mox__submission *s);

/* Waits for the execution's points (its wait list and its queue's previous
 * value), then runs it on the pool; never completes it inline. */
void mox__cpu_exec_admit(cpu_backend *be, cpu_sub *cs);

#endif
