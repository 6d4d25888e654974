/* runner_stats.c - cases and their summaries. The percentile formulas are
 * fixed so results stay comparable across runs and with metal-oxide's
 * harness: p10 = sorted[(n-1)/10], p90 = sorted[ceil((n-1)*9/10)], the
 * median the mean of the two middle values when n is even. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size);
    if (!q) {
        fprintf(stderr, "mox_bench: out of memory\n");
        exit(1);
    }
    return q;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bench_case *bench_case_add(bench_report *r, const char *suite, const char *name,
                           const char *variant, const char *unit)
{
    bench_case *c = xrealloc(NULL, sizeof *c);
    memset(c, 0, sizeof *c);
    snprintf(c->suite, sizeof c->suite, "%s", suite);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->variant, sizeof c->variant, "%s", variant);
    snprintf(c->unit, sizeof c->unit, "%s", unit);
    c->verified = -1;
    if (r->count == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->cases = xrealloc(r->cases, r->cap * sizeof *r->cases);
    }
    r->cases[r->count++] = c;
    return c;
}

void bench_case_sample(bench_case *c, double value)
{
    if (c->count == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->samples = xrealloc(c->samples, c->cap * sizeof *c->samples);
    }
    c->samples[c->count++] = value;
}

void bench_case_fail(bench_report *r, bench_case *c, const char *fmt, ...)
{
    if (c->error[0])
        return; /* the first cause is the one worth reading */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
    r->failures++;
    fprintf(stderr, "mox_bench: %s/%s/%s: %s\n", c->suite, c->name, c->variant, c->error);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_stats_compute(const double *samples, size_t n, bench_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    double *s = xrealloc(NULL, n * sizeof *s);
    memcpy(s, samples, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->min = s[0];
    out->max = s[n - 1];
    out->p10 = s[(n - 1) / 10];
    out->p90 = s[((n - 1) * 9 + 9) / 10];
    /* a + (b - a) / 2 cannot overflow where (a + b) / 2 could. */
    out->median = n % 2 ? s[n / 2] : s[n / 2 - 1] + (s[n / 2] - s[n / 2 - 1]) / 2;
    out->mean = sum / (double)n;
    free(s);
}

bool bench_stats_of(const bench_case *c, bench_stats *out)
{
    if (c->count == 0) {
        memset(out, 0, sizeof *out);
        return false;
    }
    bench_stats_compute(c->samples, c->count, out);
    return true;
}

const bench_case *bench_case_baseline(const bench_report *r, const bench_case *c)
{
    if (!c->baseline[0])
        return NULL;
    for (size_t i = 0; i < r->count; i++) {
        const bench_case *b = r->cases[i];
        if (b != c && strcmp(b->suite, c->suite) == 0 && strcmp(b->name, c->name) == 0 &&
            strcmp(b->params, c->params) == 0 && strcmp(b->variant, c->baseline) == 0 &&
            b->threads == c->threads)
            return b;
    }
    return NULL;
}

bool bench_wants(const bench_report *r, const char *suite, const char *name)
{
    const char *f = r->config.filter;
    if (!f || !*f)
        return true;
    char full[96];
    snprintf(full, sizeof full, "%s/%s", suite, name);
    /* A comma list: any of its parts. */
    for (const char *p = f; *p;) {
        size_t len = strcspn(p, ",");
        char part[96];
        snprintf(part, sizeof part, "%.*s", (int)(len < sizeof part - 1 ? len : sizeof part - 1), p);
        if (len && strstr(full, part))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

void bench_report_free(bench_report *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->cases[i]->samples);
        free(r->cases[i]);
    }
    free(r->cases);
    r->cases = NULL;
    r->count = r->cap = 0;
}
