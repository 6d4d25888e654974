/* fault_artifact.c - allocation-failure injection in the artifact layer
 * (mox_artifact_testing), which moxc uses to write artifacts and the
 * runtime to read them: reading a manifest and a verified file, parsing an
 * ABI, writing the ABI's canonical JSON (of a version 1 and a version 2 ABI)
 * and a manifest. For every
 * allocation point k in each mode: a reader fails with out_of_memory set
 * and a message saying so, a writer gives NULL - or either gives exactly
 * what it gives with memory (jansson's writer once lost object keys when a
 * write failed: that text would have been hashed) - and afterwards the
 * same call succeeds. Leaks are ASan's to find.
 *
 * usage: fault_artifact [--stride S] (every S-th point: the sanitizer
 * builds sample) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact/manifest.h"
#include "conf.h" /* only for conf_module.artifact_dir */
#include "core/testing.h"

#define ARTIFACT_DIR (conf_module.artifact_dir)

/* One operation: returns malloc'd output text (a summary for readers),
 * or NULL with err filled. */
typedef char *(*operation)(mox_artifact_error *err);

static char *summary(const mox_manifest *m)
{
    char *abi = mox_abi_to_json(m->abi);
    if (!abi)
        return NULL;
    size_t n = strlen(abi) + 256;
    char *text = malloc(n);
    snprintf(text, n, "%s %s %s", m->module, m->abi_sha256, abi);
    free(abi);
    return text;
}

static char *load(mox_artifact_error *err)
{
    mox_manifest *m = NULL;
    if (!mox_manifest_load(ARTIFACT_DIR, &m, err))
        return NULL;
    char *text = summary(m);
    if (!text)
        snprintf(err->message, sizeof err->message, "out of memory (the summary)");
    err->out_of_memory = !text;
    mox_manifest_free(m);
    return text;
}

static char *read_code(mox_artifact_error *err)
{
    mox_manifest *m = NULL;
    if (!mox_manifest_load(ARTIFACT_DIR, &m, err))
        return NULL;
    void *bytes = NULL;
    size_t size = 0;
    char *text = NULL;
    if (mox_manifest_read_file(m, ARTIFACT_DIR, MOX_FILE_CPU_SO, &bytes, &size, err)) {
        text = malloc(32);
        snprintf(text, 32, "%zu bytes", size);
        free(bytes);
    }
    mox_manifest_free(m);
    return text;
}

static long stride = 1;
static mox_manifest *reference; /* loaded without faults */
static char *reference_abi;      /* its canonical ABI JSON */
/* An ABI of version 2 (vectors, tables, over-aligned record fields,
 * dynamic shared memory: the features golden ABI), parsed and as text. */
static mox_abi *v2_abi;
static char *v2_abi_text;
/* What the ABI sweeps write and read. */
static const mox_abi *abi_value;
static const char *abi_text;

static char *write_abi(mox_artifact_error *err)
{
    char *text = mox_abi_to_json(abi_value);
    if (!text) {
        snprintf(err->message, sizeof err->message, "out of memory writing the ABI");
        err->out_of_memory = true;
    }
    return text;
}

static char *read_abi(mox_artifact_error *err)
{
    mox_abi *abi = NULL;
    char *back = NULL;
    if (mox_abi_from_json(abi_text, strlen(abi_text), &abi, err)) {
        back = mox_abi_to_json(abi);
        if (!back) {
            snprintf(err->message, sizeof err->message, "out of memory writing the ABI back");
            err->out_of_memory = true;
        }
    }
    mox_abi_free(abi);
    return back;
}

static char *write_manifest(mox_artifact_error *err)
{
    char *text = mox_manifest_to_json(reference);
    if (!text) {
        snprintf(err->message, sizeof err->message, "out of memory writing the manifest");
        err->out_of_memory = true;
    }
    return text;
}

static void sweep(const char *name, operation op)
{
    static const mox__fault_mode modes[] = {MOX__FAULT_ONCE, MOX__FAULT_FROM, MOX__FAULT_BURST};
    static const char *const mode_names[] = {"once", "from", "burst"};
    mox_artifact_error err = {0};
    char *want = op(&err);
    assert_non_null(want);
    for (int m = 0; m < 3; m++) {
        long k, failed = 0;
        for (k = 0;; k += stride) {
            memset(&err, 0, sizeof err);
            mox__testing_fault_arm(modes[m], k, 8);
            char *got = op(&err);
            long injected = mox__testing_fault_injected();
            mox__testing_fault_disarm();
            if (!got) {
                failed++;
                if (!err.out_of_memory || !strstr(err.message, "out of memory"))
                    fail_msg("%s %s at %ld: \"%s\" (out_of_memory %d)", name, mode_names[m], k,
                             err.message, err.out_of_memory);
            } else if (strcmp(got, want) != 0) {
                fail_msg("%s %s at %ld: a different result with an allocation failed", name,
                         mode_names[m], k);
            }
            free(got);
            char *again = op(&err);
            if (!again || strcmp(again, want) != 0)
                fail_msg("%s %s at %ld: the retry failed: %s", name, mode_names[m], k, err.message);
            free(again);
            if (injected == 0)
                break;
        }
        printf("%s, %s: %ld allocation points, %ld failed cleanly, every retry succeeded\n", name,
               mode_names[m], k, failed);
    }
    free(want);
}

static void manifest_load(void **state) { (void)state; sweep("mox_manifest_load", load); }
static void file_read(void **state) { (void)state; sweep("mox_manifest_read_file", read_code); }
static void abi_write(void **state)
{
    (void)state;
    abi_value = reference->abi;
    sweep("mox_abi_to_json", write_abi);
    abi_value = v2_abi;
    sweep("mox_abi_to_json (ABI version 2)", write_abi);
}

static void abi_read(void **state)
{
    (void)state;
    abi_text = reference_abi;
    sweep("mox_abi_from_json", read_abi);
    abi_text = v2_abi_text;
    sweep("mox_abi_from_json (ABI version 2)", read_abi);
}

/* The features golden ABI (FAULT_ABI_V2), read without faults. */
static bool load_v2(mox_artifact_error *err)
{
    FILE *f = fopen(FAULT_ABI_V2, "rb");
    if (!f)
        return snprintf(err->message, sizeof err->message, "cannot open %s", FAULT_ABI_V2), false;
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    while (n && text[n - 1] == '\n')
        n--;
    text[n] = '\0';
    if (!mox_abi_from_json(text, n, &v2_abi, err))
        return false;
    v2_abi_text = mox_abi_to_json(v2_abi);
    if (!v2_abi_text || strcmp(v2_abi_text, text) != 0 || v2_abi->version != 2)
        return snprintf(err->message, sizeof err->message, "%s is not a canonical version 2 ABI",
                        FAULT_ABI_V2), false;
    return true;
}
static void manifest_write(void **state) { (void)state; sweep("mox_manifest_to_json", write_manifest); }

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--stride") == 0 && atol(argv[2]) > 0)
        stride = atol(argv[2]);
    mox_artifact_error err = {0};
    if (!mox_manifest_load(ARTIFACT_DIR, &reference, &err) || !load_v2(&err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    reference_abi = mox_abi_to_json(reference->abi);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(manifest_load), cmocka_unit_test(file_read),
        cmocka_unit_test(abi_write),     cmocka_unit_test(abi_read),
        cmocka_unit_test(manifest_write),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(reference_abi);
    free(v2_abi_text);
    mox_abi_free(v2_abi);
    mox_manifest_free(reference);
    return rc;
}
