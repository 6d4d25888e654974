/* tamper_flips.c - every byte of a real manifest flipped (two bit patterns)
 * and every truncation of it, read by the artifact layer as the runtime
 * reads it (mox_manifest_load, then the hash of every file). A flip is
 * either refused with a message, or it changed only text that decides
 * nothing about what is loaded (see identity()); what verifies the code
 * (the ABI and its hash, file names and hashes) must then be unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact/manifest.h"
#include "conf.h"
#include "tamper_support.h"

/* Every byte in the plain build; the sanitizer builds (TAMPER_STRIDE) try
 * every n-th, which is enough for what they add (the fuzzers cover the
 * parser's input space in depth). */
#ifndef TAMPER_STRIDE
#define TAMPER_STRIDE 1
#endif

/* What decides which code is loaded and how it is checked, as one text.
 * Not in it: the module name (the runtime compares it with the bindings':
 * tamper.c swapped_files) and the build identity (fingerprint, versions,
 * flags: informative). */
static char *identity(const mox_manifest *m)
{
    char *abi = mox_abi_to_json(m->abi);
    size_t n = strlen(abi) + 4096;
    char *text = malloc(n);
    int at = snprintf(text, n, "%s|%s", m->abi_sha256, abi);
    for (int f = 0; f < MOX_FILE_COUNT_; f++)
        at += snprintf(text + at, n - (size_t)at, "|%d:%s:%s", m->files[f].present,
                       m->files[f].path ? m->files[f].path : "", m->files[f].sha256);
    free(abi);
    return text;
}

/* Loads the manifest in `dir` and hashes its files: true when accepted. */
static bool accepted(const char *dir, mox_manifest **out)
{
    mox_artifact_error err = {0};
    *out = NULL;
    if (!mox_manifest_load(dir, out, &err)) {
        assert_true(err.message[0] != '\0');
        assert_false(err.out_of_memory);
        return false;
    }
    if (!mox_manifest_verify_all(*out, dir, &err)) {
        assert_true(err.message[0] != '\0');
        mox_manifest_free(*out);
        *out = NULL;
        return false;
    }
    return true;
}

void tamper_manifest_flips(void **state);
void tamper_manifest_flips(void **state)
{
    (void)state;
    const char *dir = tamper_copy("flips");
    const char *path = tamper_path(dir, "manifest.json");
    char manifest_path[1024];
    snprintf(manifest_path, sizeof manifest_path, "%s", path);
    size_t size;
    unsigned char *original = tamper_read(manifest_path, &size);
    mox_manifest *m;
    assert_true(accepted(dir, &m));
    char *want = identity(m);
    mox_manifest_free(m);
    static const unsigned char masks[] = {0x01, 0x20};
    long refused = 0, harmless = 0;
    for (size_t i = 0; i < size; i += TAMPER_STRIDE)
        for (size_t k = 0; k < sizeof masks; k++) {
            original[i] ^= masks[k];
            tamper_write(manifest_path, original, size);
            original[i] ^= masks[k];
            if (!accepted(dir, &m)) {
                refused++;
                continue;
            }
            char *got = identity(m);
            if (strcmp(got, want) != 0)
                fail_msg("flipping byte %zu (0x%02x) changed what is loaded, unnoticed", i, masks[k]);
            free(got);
            mox_manifest_free(m);
            harmless++;
        }
    printf("manifest flips: every %d of %zu bytes x 2 patterns: %ld refused, %ld accepted with "
           "the module name or build identity changed only\n", TAMPER_STRIDE, size, refused,
           harmless);
    free(want);
    free(original);
}

void tamper_manifest_cuts(void **state);
void tamper_manifest_cuts(void **state)
{
    (void)state;
    const char *dir = tamper_copy("cuts");
    char manifest_path[1024];
    snprintf(manifest_path, sizeof manifest_path, "%s", tamper_path(dir, "manifest.json"));
    size_t size;
    unsigned char *original = tamper_read(manifest_path, &size);
    /* The trailing newline is not part of the JSON: cutting it is harmless. */
    for (size_t cut = 0; cut + 1 < size; cut += TAMPER_STRIDE) {
        tamper_write(manifest_path, original, cut);
        mox_manifest *m;
        if (accepted(dir, &m))
            fail_msg("the manifest cut to %zu of %zu bytes was accepted", cut, size);
    }
    printf("manifest cuts: every %d of %zu truncations refused\n", TAMPER_STRIDE, size - 1);
    free(original);
}
