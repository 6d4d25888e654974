/* thread_cpu.h - CPU time of this process's threads, by kind, from
 * /proc/self/task/<tid>/comm and .../schedstat (nanoseconds on a CPU):
 * used by bench/cuda_overhead and bench/idle_cpu to tell mox's own threads
 * (named "mox-*") from the driver's. */
#ifndef MOX_BENCH_THREAD_CPU_H
#define MOX_BENCH_THREAD_CPU_H

#include <stdbool.h>

typedef struct bench_thread_cpu {
    double mox_ms;   /* threads named "mox-*": the runtime's */
    double self_ms;  /* the calling thread */
    double other_ms; /* every other thread: the driver's, the program's */
} bench_thread_cpu;

/* Reads every thread's CPU time so far into *out; false when no thread's
 * schedstat could be read (then *out is all zero). Reading costs the
 * calling thread about 0.1 - 0.3 ms (counted in self_ms). */
bool bench_thread_cpu_read(bench_thread_cpu *out);

#endif
