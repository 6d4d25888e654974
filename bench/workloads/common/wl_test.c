/* wl_test.c - the check of one public-sample port on the current backend
 * (ctest workload-<name>-cpu / -cuda):
 *
 *   wl_test NAME            the checks below
 *   wl_test --detects NAME  one run with an element of its first output
 *                           spoiled: the check must catch it
 *
 * At test sizes it runs the port through mox three ways and checks each
 * against the sample's own CPU code: one run as a sequence, one run as one
 * op per launch, and - since runs reuse the same buffers, some in place -
 * three runs back to back (sequences, then separate ops) against the same
 * three runs waited one by one, bit for bit. Prints one "verified" line per
 * check; exits 0, 1 on a failed check, 77 when the forced backend is not
 * available (ctest's SKIP_RETURN_CODE), 2 on a bad argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"
#include "wl_mox.h"

#define PIPELINED_RUNS 3u

static int failures;

static void report(bool ok, const char *name, const char *what, const char *detail)
{
    printf("%s %s %s: %s\n", ok ? "verified" : "FAILED:", name, what, detail);
    failures += !ok;
}

static void check_one_run(const wl_mox *m, const char *name, bool separate)
{
    char why[512] = "";
    bool ok = wl_mox_reset(m, why, sizeof why) && wl_mox_runs(m, 1, separate, why, sizeof why) &&
              wl_mox_verify(m, why, sizeof why);
    report(ok, name, separate ? "one run, one op per launch" : "one run as a sequence", why);
}

/* The same runs back to back and one by one must leave the same bits. */
static void check_back_to_back(const wl_mox *m, const char *name, bool separate)
{
    const wl_plan *p = &m->in->port;
    void *piped[WL_MAX_SLOTS], *stepped[WL_MAX_SLOTS];
    char why[512] = "";
    bool ok = wl_mox_state_after(m, PIPELINED_RUNS, separate, false, piped, why, sizeof why);
    ok = wl_mox_state_after(m, PIPELINED_RUNS, false, true, stepped, why, sizeof why) && ok;
    for (uint32_t o = 0; ok && o < p->output_count; o++) {
        uint32_t s = p->outputs[o];
        ok = wl_check_bits(piped[o], stepped[o], m->in->slots[s].length, m->in->slots[s].type->size,
                           m->in->slots[s].name, why, sizeof why);
    }
    if (ok)
        snprintf(why, sizeof why, "%u runs leave the same bits in all %u outputs as when waited one by one",
                 PIPELINED_RUNS, p->output_count);
    wl_outputs_free(piped, p->output_count);
    wl_outputs_free(stepped, p->output_count);
    report(ok, name, separate ? "runs back to back as separate ops" : "runs back to back as sequences", why);
}

/* The check must fail when one element of the first output (its probe,
 * else the middle one) is overwritten (0x7f bytes: a huge float, an
 * out-of-range key). */
static void check_detects(const wl_mox *m, const char *name)
{
    const wl_plan *p = &m->in->port;
    void *outputs[WL_MAX_SLOTS] = {NULL};
    char why[512] = "";
    bool ran = p->output_count > 0 && wl_mox_reset(m, why, sizeof why) &&
               wl_mox_runs(m, 1, false, why, sizeof why) && wl_mox_read(m, outputs, why, sizeof why);
    if (ran) {
        const wl_slot *slot = &m->in->slots[p->outputs[0]];
        size_t at = m->in->probe ? m->in->probe : slot->length / 2;
        memset((char *)outputs[0] + at * slot->type->size, 0x7f, slot->type->size);
        bool passed = m->in->workload->verify(m->in, false, (const void *const *)outputs, why, sizeof why);
        report(!passed, name, "check of a spoiled output", passed ? "the spoiled output passed" : why);
    } else {
        report(false, name, "check of a spoiled output", why[0] ? why : "no outputs");
    }
    wl_outputs_free(outputs, p->output_count);
}

int main(int argc, char **argv)
{
    bool detects = argc == 3 && strcmp(argv[1], "--detects") == 0;
    const wl_workload *w = argc == 2 || detects ? wl_port_find(argv[argc - 1]) : NULL;
    if (!w) {
        fprintf(stderr, "usage: wl_test [--detects] NAME (one of:");
        for (size_t i = 0; i < wl_port_count; i++)
            fprintf(stderr, " %s", wl_ports[i]->name);
        fprintf(stderr, ")\n");
        return 2;
    }
    mox_device *dev = NULL;
    mox_status st = mox_device_open(&dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skipped: %s\n", mox_error_last_message());
        return 77;
    }
    if (st != MOX_OK) {
        printf("FAILED: mox_device_open: %s: %s\n", mox_status_name(st), mox_error_last_message());
        return 1;
    }
    wl_instance in;
    memset(&in, 0, sizeof in);
    in.workload = w;
    char err[512] = "";
    wl_mox m;
    memset(&m, 0, sizeof m);
    if (!w->create(&in, WL_TINY, err, sizeof err) || !wl_mox_open(&m, dev, &in, err, sizeof err)) {
        report(false, w->name, "setup", err);
    } else {
        printf("%s (%s, %s) on %s\n", w->name, w->sample, in.params, mox_device_name(dev));
    }
    if (failures == 0 && detects) {
        check_detects(&m, w->name);
    } else if (failures == 0) {
        check_one_run(&m, w->name, false);
        check_one_run(&m, w->name, true);
        if (in.deterministic) {
            check_back_to_back(&m, w->name, false);
            check_back_to_back(&m, w->name, true);
        }
    }
    wl_mox_close(&m);
    wl_instance_free(&in);
    mox_device_release(dev);
    printf("%s: %s\n", w->name, failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
