/* runner.h - the benchmark runner's shared vocabulary: cases (one measured
 * quantity with every sample), the report they go into, its device and
 * build facts, and the suites that fill it (docs/performance.md). */
#ifndef MOX_BENCH_RUNNER_H
#define MOX_BENCH_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Summary of a case's samples (the formulas are in runner_stats.c). */
typedef struct bench_stats {
    double min, p10, median, p90, max, mean;
} bench_stats;

typedef struct bench_case {
    char suite[24];     /* "quality", "overhead", "pipeline", "cpu", "device", "workloads", ... */
    char name[48];      /* workload, e.g. "vec-add" */
    char variant[32];   /* "gen", "ref", "mox-cpu", "c-omp", ... */
    char params[96];    /* sizes, e.g. "n=67108864" */
    char unit[12];      /* unit of every sample: "us", "bytes" */
    char baseline[32];  /* variant of the same suite/name/params this one is compared with */
    char note[192];     /* what one sample is */
    double bytes;       /* fewest bytes one sample must move (0: not counted) */
    double flops;       /* floating-point operations of one sample (0: none) */
    double per;         /* work items one sample covers: per-item value = sample / per (0 or 1: none) */
    uint32_t threads;   /* CPU worker threads (0: not applicable) */
    int verified;       /* 1: every sample checked, 0: a check failed, -1: nothing to check */
    char error[256];    /* empty, or why the case did not complete */
    double *samples;
    size_t count, cap;
} bench_case;

typedef enum bench_kv_kind { BENCH_KV_STRING, BENCH_KV_NUMBER, BENCH_KV_BOOL } bench_kv_kind;

typedef struct bench_kv {
    char key[40];
    bench_kv_kind kind;
    char text[256];
    double number;
} bench_kv;

typedef struct bench_kvs {
    bench_kv items[48];
    size_t count;
} bench_kvs;

typedef struct bench_config {
    uint32_t samples;      /* timed samples per case */
    uint32_t warmup;       /* untimed runs first */
    bool smoke;            /* small sizes (CI) */
    const char *filter;    /* run only cases whose suite/name contains it (or any part of a comma list) */
    const char *json_path; /* where the JSON goes (NULL: none) */
    const char *md_path;   /* markdown table copy (NULL: stdout only) */
    const char *suites;    /* comma list: quality,overhead,pipeline,cpu (NULL: by device) */
    uint32_t max_threads;  /* CPU suite: largest thread count (0: all cores) */
} bench_config;

typedef struct bench_report {
    bench_config config;
    bench_kvs build, host, device;
    bench_case **cases;
    size_t count, cap;
    int failures; /* cases with an error or a failed check */
} bench_report;

/* ---- cases (runner_stats.c) ---- */
/* A new case appended to the report (aborts on out of memory: a runner
 * that lost a case would report less than it ran). */
bench_case *bench_case_add(bench_report *r, const char *suite, const char *name,
                           const char *variant, const char *unit);
void bench_case_sample(bench_case *c, double value);
/* Marks the case failed with a message (printf format). */
void bench_case_fail(bench_report *r, bench_case *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Fails when the case has no samples; else fills *out. */
bool bench_stats_of(const bench_case *c, bench_stats *out);
void bench_stats_compute(const double *samples, size_t n, bench_stats *out);
/* The case of the same suite/name/params whose variant is c->baseline. */
const bench_case *bench_case_baseline(const bench_report *r, const bench_case *c);
void bench_report_free(bench_report *r);
bool bench_wants(const bench_report *r, const char *suite, const char *name);

/* ---- facts (runner_report.c) ---- */
void bench_kv_str(bench_kvs *kvs, const char *key, const char *value);
void bench_kv_num(bench_kvs *kvs, const char *key, double value);
void bench_kv_bool(bench_kvs *kvs, const char *key, bool value);
double bench_kv_get_num(const bench_kvs *kvs, const char *key, double fallback);
/* Build identity (git commit and dirty flag, compilers, flags) and host. */
void bench_collect_build(bench_report *r);
int bench_write_json(const bench_report *r, const char *path);
void bench_write_markdown(const bench_report *r, FILE *out);

/* ---- time ---- */
uint64_t bench_now_ns(void);

/* ---- suites ---- */
/* Kernel quality on CUDA through the raw driver (runner_gpu*.c). Returns
 * false when no CUDA device is usable (nothing added). */
bool bench_suite_quality(bench_report *r);
/* Runtime overhead through the public API on the current device
 * (runner_overhead.c, runner_overhead_mem.c). */
void bench_suite_overhead(bench_report *r);
/* The peers' two-stage pipeline through mox (runner_pipeline.c). */
void bench_suite_pipeline(bench_report *r);
/* CPU backend vs plain C, thread scaling (cpu_suite*.c). */
void bench_suite_cpu(bench_report *r);
/* Public-sample ports and the examples' kernels through mox and on raw
 * CUDA streams (runner_workloads.c). Returns false when no mox device
 * opens (the forced backend is unavailable; nothing added). */
bool bench_suite_workloads(bench_report *r);

#endif
