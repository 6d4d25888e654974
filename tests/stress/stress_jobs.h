/* stress_jobs.h - the randomized jobs of the progress stress test: what a
 * job builds (launches, sequences, then-chains, maps, shares, failing
 * kernels, drops before and after submission), and how its result is
 * checked once it resolves. Each job owns one slot (a buffer of the
 * driving thread) while it is in flight, so every check is deterministic
 * whatever the other threads do. */
#ifndef MOX_STRESS_JOBS_H
#define MOX_STRESS_JOBS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mox/mox.h>

enum { STRESS_VALUES = 16 };

typedef enum stress_kind {
    JOB_LAUNCH,          /* fill(slot, v) */
    JOB_CHAIN_READBACK,  /* fill(slot, v) then readback: bytes == v */
    JOB_SEQUENCE,        /* [fill(slot, v), step, step] then readback: 4v + 3 */
    JOB_MAP,             /* fill(slot, v) mapped to a value */
    JOB_FAIL,            /* fail_if_negative on a negative input: KERNEL_FAILED, code 7 */
    JOB_FAIL_CHAIN,      /* the same, then a stage that must never run */
    JOB_SHARE,           /* share(fill) + a clone: both resolve to one result */
    JOB_DROP_UNPOLLED,   /* built, dropped: nothing submitted */
    JOB_DROP_POLLED,     /* polled once, dropped: runs or not, never resolves here */
    JOB_KINDS
} stress_kind;

/* Process-wide counters (printed at the end, watched by the watchdog). */
typedef struct stress_counters {
    _Atomic uint64_t ops;      /* every mox_op constructed */
    _Atomic uint64_t jobs;     /* jobs finished (resolved and checked, or dropped) */
    _Atomic uint64_t wakes;    /* waker calls */
    _Atomic uint64_t failures; /* jobs that ended in an expected failure */
    _Atomic uint64_t out_of_memory; /* stages that ended out of memory (stress_faults.h) */
} stress_counters;

extern stress_counters stress_count;

/* One job in flight. `ops[0]` is the op the consumer drives; `ops[1]` is a
 * share's clone (driven too), else NULL. */
typedef struct stress_job {
    stress_kind kind;
    mox_buffer *slot;
    float value;
    mox_op *ops[2];
    bool done[2];
    bool built;          /* ops[0] was made (construction may run out of memory) */
} stress_job;

/* Shared inputs of a device's jobs: a negative buffer for failing kernels. */
typedef struct stress_device {
    mox_device *dev;
    mox_buffer *negative;
    uint32_t capacity;
} stress_device;

/* Builds a job of `kind` on `slot` (which must be idle). Drop kinds finish
 * at once (job->ops[0] == NULL afterwards). */
void stress_job_build(stress_job *job, stress_kind kind, stress_device *sd, mox_buffer *slot,
                      float value);
/* Checks the resolved job's results (aborts the test on a wrong one) and
 * drops its ops. */
void stress_job_check(stress_job *job);

/* Aborts the whole process with a message: a wrong result in a stress run. */
_Noreturn void stress_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
