/* runner.c - mox_bench: one command that runs every benchmark case on the
 * current device, writes every sample and its summary to JSON and prints a
 * markdown table (docs/performance.md says what each case measures).
 *
 *   mox_bench [--suite quality,overhead,pipeline,cpu,workloads] [--smoke]
 *             [--samples N] [--warmup N] [--filter TEXT] [--max-threads N]
 *             [--json FILE] [--md FILE]
 *
 * Without --suite: on a CUDA device the kernel-quality suite (generated vs
 * hand-written CUDA), the runtime overhead and the peers' pipeline; on the
 * CPU backend the CPU suite (mox vs plain C, thread scaling), overhead and
 * pipeline. The workloads suite (public-sample ports and the examples'
 * kernels, mox against raw CUDA streams) runs when asked for. Exits 1 when
 * any case failed or a result did not verify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mox/mox.h>

#include "runner.h"

static void usage(FILE *f)
{
    fputs("usage: mox_bench [--suite quality,overhead,pipeline,cpu,workloads] [--smoke] [--samples N]\n"
          "                 [--warmup N] [--filter TEXT] [--max-threads N] [--json FILE] [--md FILE]\n",
          f);
}

static bool parse_u32(const char *text, uint32_t *out)
{
    char *end = NULL;
    unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || v > 1000000ul)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool has_suite(const char *list, const char *suite)
{
    size_t len = strlen(suite);
    for (const char *p = list; (p = strstr(p, suite)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

/* The backend mox_device_open picks here (MOX_BACKEND honoured). */
static bool current_is_cuda(void)
{
    mox_device *dev = NULL;
    if (mox_device_open(&dev) != MOX_OK)
        return false;
    bool cuda = mox_device_backend(dev) == MOX_BACKEND_CUDA;
    mox_device_release(dev);
    return cuda;
}

int main(int argc, char **argv)
{
    bench_report r;
    memset(&r, 0, sizeof r);
    bool samples_set = false, warmup_set = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--smoke") == 0) {
            r.config.smoke = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (v && strcmp(a, "--samples") == 0 && parse_u32(v, &r.config.samples) && r.config.samples) {
            samples_set = true;
            i++;
        } else if (v && strcmp(a, "--warmup") == 0 && parse_u32(v, &r.config.warmup)) {
            warmup_set = true;
            i++;
        } else if (v && strcmp(a, "--max-threads") == 0 && parse_u32(v, &r.config.max_threads)) {
            i++;
        } else if (v && strcmp(a, "--filter") == 0) {
            r.config.filter = v;
            i++;
        } else if (v && strcmp(a, "--suite") == 0) {
            r.config.suites = v;
            i++;
        } else if (v && strcmp(a, "--json") == 0) {
            r.config.json_path = v;
            i++;
        } else if (v && strcmp(a, "--md") == 0) {
            r.config.md_path = v;
            i++;
        } else {
            fprintf(stderr, "mox_bench: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!samples_set)
        r.config.samples = r.config.smoke ? 3 : 20;
    if (!warmup_set)
        r.config.warmup = r.config.smoke ? 1 : 3;
    const char *suites = r.config.suites;
    if (!suites)
        suites = current_is_cuda() ? "quality,overhead,pipeline" : "cpu,overhead,pipeline";
    static const char *const known[] = {"quality", "overhead", "pipeline", "cpu", "workloads"};
    for (const char *p = suites; *p;) {
        size_t len = strcspn(p, ",");
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            ok = ok || (strlen(known[k]) == len && strncmp(p, known[k], len) == 0);
        if (!ok) {
            fprintf(stderr, "mox_bench: unknown suite '%.*s'\n", (int)len, p);
            return 2;
        }
        p += len + (p[len] == ',');
    }
    bench_collect_build(&r);
    fprintf(stderr, "mox_bench: suites %s, %u samples after %u warm-up runs%s\n", suites,
            r.config.samples, r.config.warmup, r.config.smoke ? " (smoke sizes)" : "");

    /* Asked for the quality suite alone on a machine without a GPU: a skip
     * (exit 77, ctest's SKIP_RETURN_CODE), not a failure. */
    bool skipped = false;
    if (has_suite(suites, "quality") && !bench_suite_quality(&r)) {
        if (strcmp(suites, "quality") == 0) {
            skipped = true;
        } else {
            bench_case *c = bench_case_add(&r, "quality", "setup", "-", "us");
            bench_case_fail(&r, c, "no usable CUDA device for the kernel-quality suite");
        }
    }
    /* The JSON is rewritten after every suite: a run stopped by a time
     * limit keeps what it finished. */
    if (r.config.json_path)
        bench_write_json(&r, r.config.json_path);
    if (has_suite(suites, "overhead")) {
        bench_suite_overhead(&r);
        if (r.config.json_path)
            bench_write_json(&r, r.config.json_path);
    }
    if (has_suite(suites, "pipeline")) {
        bench_suite_pipeline(&r);
        if (r.config.json_path)
            bench_write_json(&r, r.config.json_path);
    }
    if (has_suite(suites, "workloads")) {
        /* Alone on a machine without the forced backend: a skip too. */
        if (!bench_suite_workloads(&r) && strcmp(suites, "workloads") == 0)
            skipped = true;
        if (r.config.json_path)
            bench_write_json(&r, r.config.json_path);
    }
    if (has_suite(suites, "cpu"))
        bench_suite_cpu(&r);

    bench_write_markdown(&r, stdout);
    int rc = r.failures ? 1 : 0;
    if (r.config.md_path) {
        FILE *f = fopen(r.config.md_path, "w");
        if (f) {
            bench_write_markdown(&r, f);
            rc = fclose(f) == 0 ? rc : 1;
        } else {
            perror(r.config.md_path);
            rc = 1;
        }
    }
    if (r.config.json_path) {
        if (bench_write_json(&r, r.config.json_path) != 0)
            rc = 1;
        else
            fprintf(stderr, "mox_bench: wrote %s\n", r.config.json_path);
    }
    if (r.failures)
        fprintf(stderr, "mox_bench: %d case(s) failed\n", r.failures);
    bench_report_free(&r);
    if (skipped && rc == 0) {
        printf("skipped: no usable %s device\n", strcmp(suites, "workloads") == 0 ? "mox" : "CUDA");
        return 77;
    }
    return rc;
}
