/* runner_report.c - what a run records besides its samples (build identity,
 * host, device facts) and the two outputs: the JSON file every plot and
 * comparison reads, and the markdown table printed at the end. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "runner_workloads.h"
#include "runner_build_info.h" /* generated: git commit, flags */

static bench_kv *kv_slot(bench_kvs *kvs, const char *key)
{
    for (size_t i = 0; i < kvs->count; i++)
        if (strcmp(kvs->items[i].key, key) == 0)
            return &kvs->items[i];
    if (kvs->count == sizeof kvs->items / sizeof kvs->items[0])
        return NULL; /* a fixed table: a fact past it is dropped, never corrupts */
    bench_kv *kv = &kvs->items[kvs->count++];
    memset(kv, 0, sizeof *kv);
    snprintf(kv->key, sizeof kv->key, "%s", key);
    return kv;
}

void bench_kv_str(bench_kvs *kvs, const char *key, const char *value)
{
    bench_kv *kv = kv_slot(kvs, key);
    if (kv) {
        kv->kind = BENCH_KV_STRING;
        snprintf(kv->text, sizeof kv->text, "%s", value ? value : "");
    }
}

void bench_kv_num(bench_kvs *kvs, const char *key, double value)
{
    bench_kv *kv = kv_slot(kvs, key);
    if (kv) {
        kv->kind = BENCH_KV_NUMBER;
        kv->number = value;
    }
}

void bench_kv_bool(bench_kvs *kvs, const char *key, bool value)
{
    bench_kv *kv = kv_slot(kvs, key);
    if (kv) {
        kv->kind = BENCH_KV_BOOL;
        kv->number = value;
    }
}

double bench_kv_get_num(const bench_kvs *kvs, const char *key, double fallback)
{
    for (size_t i = 0; i < kvs->count; i++)
        if (strcmp(kvs->items[i].key, key) == 0 && kvs->items[i].kind == BENCH_KV_NUMBER)
            return kvs->items[i].number;
    return fallback;
}

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v) {
                v++;
                while (*v == ' ')
                    v++;
                snprintf(out, size, "%.*s", (int)strcspn(v, "\n"), v);
            }
            break;
        }
    }
    fclose(f);
}

void bench_collect_build(bench_report *r)
{
    /* The checkout a run happens in may have no .git (a copied tree): the
     * commit recorded at build time is the default, the environment can
     * override it with what the driving script saw. */
    const char *commit = getenv("MOX_BENCH_GIT_COMMIT");
    const char *dirty = getenv("MOX_BENCH_GIT_DIRTY");
    bench_kv_str(&r->build, "git_commit", commit && *commit ? commit : MOX_BENCH_GIT_COMMIT);
    bench_kv_bool(&r->build, "git_dirty",
                  dirty && *dirty ? strcmp(dirty, "0") != 0 : MOX_BENCH_GIT_DIRTY);
    bench_kv_str(&r->build, "c_compiler", MOX_BENCH_C_COMPILER);
    bench_kv_str(&r->build, "c_flags", MOX_BENCH_C_FLAGS);
    bench_kv_str(&r->build, "build_type", MOX_BENCH_BUILD_TYPE);
    bench_kv_str(&r->build, "baseline_c_flags", MOX_BENCH_BASELINE_FLAGS);
    bench_kv_str(&r->build, "ref_nvcc_flags", MOX_BENCH_REF_NVCC_FLAGS);
    bench_kv_str(&r->build, "nvcc", MOX_BENCH_NVCC_VERSION);

    char model[256];
    cpu_model(model, sizeof model);
    bench_kv_str(&r->host, "cpu", model);
    bench_kv_num(&r->host, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
    struct utsname u;
    if (uname(&u) == 0) {
        char text[200];
        snprintf(text, sizeof text, "%s %s %s", u.sysname, u.release, u.machine);
        bench_kv_str(&r->host, "os", text);
    }
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bench_kv_str(&r->host, "timestamp", stamp);
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity: they become null. */
static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fputs("null", f);
}

static void json_kvs(FILE *f, const char *name, const bench_kvs *kvs)
{
    fprintf(f, "  ");
    json_str(f, name);
    fputs(": {", f);
    for (size_t i = 0; i < kvs->count; i++) {
        const bench_kv *kv = &kvs->items[i];
        fputs(i ? ", " : "", f);
        json_str(f, kv->key);
        fputs(": ", f);
        if (kv->kind == BENCH_KV_STRING)
            json_str(f, kv->text);
        else if (kv->kind == BENCH_KV_BOOL)
            fputs(kv->number != 0 ? "true" : "false", f);
        else
            json_num(f, kv->number);
    }
    fputs("},\n", f);
}

/* Derived numbers, from the median: throughput in GB/s and GFLOP/s (when
 * bytes/flops were counted and the unit is time), the per-item value, and
 * the throughput ratio baseline_median / median (> 1: faster). */
typedef struct derived {
    double gbps, gflops, per_item, ratio;
    double ceiling; /* share of the device's ceiling: copy bandwidth, or the no-FMA FP32 peak */
} derived;

static derived derive(const bench_report *r, const bench_case *c, const bench_stats *s)
{
    derived d = {NAN, NAN, NAN, NAN, NAN};
    bool time_unit = strcmp(c->unit, "us") == 0 || strcmp(c->unit, "ms") == 0;
    double seconds = s->median * (strcmp(c->unit, "ms") == 0 ? 1e-3 : 1e-6);
    if (time_unit && seconds > 0 && c->bytes > 0)
        d.gbps = c->bytes / seconds / 1e9;
    if (time_unit && seconds > 0 && c->flops > 0)
        d.gflops = c->flops / seconds / 1e9;
    if (c->per > 1)
        d.per_item = s->median / c->per;
    /* The kernels are built without contraction, so a multiply-add is two
     * instructions: the no-FMA peak is their arithmetic ceiling. Only
     * device-side (GPU) cases are held to the device's ceilings. */
    bool gpu_case = strcmp(c->suite, "quality") == 0 || strcmp(c->suite, "device") == 0;
    double copy = bench_kv_get_num(&r->device, "copy_gbps", 0);
    double peak = bench_kv_get_num(&r->device, "fp32_peak_nofma_gflops", 0);
    if (gpu_case && c->flops > 0 && c->bytes > 0 && peak > 0 && isfinite(d.gflops) &&
        c->flops / c->bytes > peak / (copy > 0 ? copy : 1))
        d.ceiling = d.gflops / peak; /* arithmetic-bound: more flops per byte than the machine balance */
    else if (gpu_case && copy > 0 && isfinite(d.gbps))
        d.ceiling = d.gbps / copy;
    const bench_case *b = bench_case_baseline(r, c);
    bench_stats bs;
    if (b && bench_stats_of(b, &bs) && s->median > 0)
        d.ratio = bs.median / s->median;
    return d;
}

int bench_write_json(const bench_report *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fputs("{\n  \"schema\": 1,\n  \"tool\": \"mox_bench\",\n", f);
    json_kvs(f, "build", &r->build);
    json_kvs(f, "host", &r->host);
    json_kvs(f, "device", &r->device);
    fprintf(f, "  \"config\": {\"samples\": %u, \"warmup\": %u, \"smoke\": %s, \"filter\": ",
            r->config.samples, r->config.warmup, r->config.smoke ? "true" : "false");
    json_str(f, r->config.filter ? r->config.filter : "");
    fputs("},\n  \"cases\": [\n", f);
    for (size_t i = 0; i < r->count; i++) {
        const bench_case *c = r->cases[i];
        bench_stats s;
        bool have = bench_stats_of(c, &s);
        derived d = derive(r, c, &s);
        fputs("    {\"suite\": ", f);
        json_str(f, c->suite);
        fputs(", \"name\": ", f);
        json_str(f, c->name);
        fputs(", \"variant\": ", f);
        json_str(f, c->variant);
        fputs(", \"params\": ", f);
        json_str(f, c->params);
        fputs(", \"unit\": ", f);
        json_str(f, c->unit);
        fputs(", \"baseline\": ", f);
        json_str(f, c->baseline);
        fputs(", \"note\": ", f);
        json_str(f, c->note);
        fprintf(f, ", \"threads\": %u, \"bytes\": ", c->threads);
        json_num(f, c->bytes);
        fputs(", \"flops\": ", f);
        json_num(f, c->flops);
        fputs(", \"per\": ", f);
        json_num(f, c->per);
        fprintf(f, ", \"verified\": %s, \"error\": ",
                c->verified > 0 ? "true" : c->verified == 0 ? "false" : "null");
        if (c->error[0])
            json_str(f, c->error);
        else
            fputs("null", f);
        fputs(",\n     \"samples\": [", f);
        for (size_t k = 0; k < c->count; k++) {
            fputs(k ? ", " : "", f);
            json_num(f, c->samples[k]);
        }
        fputs("],\n     \"stats\": ", f);
        if (have) {
            fputs("{\"min\": ", f);
            json_num(f, s.min);
            fputs(", \"p10\": ", f);
            json_num(f, s.p10);
            fputs(", \"median\": ", f);
            json_num(f, s.median);
            fputs(", \"p90\": ", f);
            json_num(f, s.p90);
            fputs(", \"max\": ", f);
            json_num(f, s.max);
            fputs(", \"mean\": ", f);
            json_num(f, s.mean);
            fprintf(f, ", \"n\": %zu}", c->count);
        } else {
            fputs("null", f);
        }
        fputs(",\n     \"derived\": {\"gbps\": ", f);
        json_num(f, d.gbps);
        fputs(", \"gflops\": ", f);
        json_num(f, d.gflops);
        fputs(", \"per_item\": ", f);
        json_num(f, d.per_item);
        fputs(", \"ratio_vs_baseline\": ", f);
        json_num(f, d.ratio);
        fputs(", \"ceiling_fraction\": ", f);
        json_num(f, d.ceiling);
        fprintf(f, "}}%s\n", i + 1 < r->count ? "," : "");
    }
    fputs("  ]\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "mox_bench: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

/* ---- markdown ---- */

static void md_num(FILE *f, double v, const char *fmt)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("-", f);
}

void bench_write_markdown(const bench_report *r, FILE *f)
{
    fputs("| suite | case | variant | params | thr | median | p10 | p90 | unit | per item | GB/s | "
          "GFLOP/s | of ceiling | vs baseline | verified |\n",
          f);
    fputs("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < r->count; i++) {
        const bench_case *c = r->cases[i];
        bench_stats s;
        bool have = bench_stats_of(c, &s);
        derived d = derive(r, c, &s);
        fprintf(f, "| %s | %s | %s | %s | ", c->suite, c->name, c->variant, c->params);
        if (c->threads)
            fprintf(f, "%u", c->threads);
        else
            fputs("-", f);
        fputs(" | ", f);
        if (have) {
            md_num(f, s.median, "%.4g");
            fputs(" | ", f);
            md_num(f, s.p10, "%.4g");
            fputs(" | ", f);
            md_num(f, s.p90, "%.4g");
        } else {
            fputs("- | - | -", f);
        }
        fprintf(f, " | %s | ", c->unit);
        md_num(f, d.per_item, "%.4g");
        fputs(" | ", f);
        md_num(f, d.gbps, "%.1f");
        fputs(" | ", f);
        md_num(f, d.gflops, "%.1f");
        fputs(" | ", f);
        if (isfinite(d.ceiling))
            fprintf(f, "%.0f%%", 100.0 * d.ceiling);
        else
            fputs("-", f);
        fputs(" | ", f);
        if (isfinite(d.ratio))
            fprintf(f, "%.3f x %s", d.ratio, c->baseline);
        else
            fputs("-", f);
        fputs(" | ", f);
        if (c->error[0])
            fprintf(f, "ERROR: %.80s", c->error);
        else
            fputs(c->verified > 0 ? "yes" : c->verified == 0 ? "FAILED" : "n/a", f);
        fputs(" |\n", f);
    }
    bench_workloads_summary(r, f);
}
