/* fuzz_manifest.c - libFuzzer target: the manifest parser
 * (mox_manifest_parse) with round-trip oracles. An accepted manifest writes
 * JSON that parses into an equal manifest and is a fixed point; its ABI
 * hash matches its ABI's canonical text; a refusal has a message and is
 * never "out of memory". */
#include <stdint.h>
#include <string.h>

#include "fuzz_support.h"
#include "manifest.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_strings(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return false;
    return true;
}

static void same_manifest(const mox_manifest *a, const mox_manifest *b)
{
    FUZZ_CHECK(strcmp(a->module, b->module) == 0 && strcmp(a->abi_sha256, b->abi_sha256) == 0 &&
                   strcmp(a->fingerprint, b->fingerprint) == 0 && a->ptx == b->ptx,
               "module, hashes or ptx changed in the round trip");
    FUZZ_CHECK(same_strings(a->cuda_archs, a->cuda_arch_count, b->cuda_archs, b->cuda_arch_count) &&
                   same_strings(a->nvcc_flags, a->nvcc_flag_count, b->nvcc_flags, b->nvcc_flag_count) &&
                   same_strings(a->cc_flags, a->cc_flag_count, b->cc_flags, b->cc_flag_count),
               "a string list changed in the round trip");
    for (int f = 0; f < MOX_FILE_COUNT_; f++)
        FUZZ_CHECK(a->files[f].present == b->files[f].present &&
                       (!a->files[f].present || (strcmp(a->files[f].path, b->files[f].path) == 0 &&
                                                 strcmp(a->files[f].sha256, b->files[f].sha256) == 0)),
                   "file %s changed in the round trip", mox_artifact_file_key((mox_artifact_file)f));
    char *x = mox_abi_to_json(a->abi), *y = mox_abi_to_json(b->abi);
    FUZZ_CHECK(x && y && strcmp(x, y) == 0, "the ABI changed in the round trip");
    char hex[MOX_SHA256_HEX_LEN + 1];
    FUZZ_CHECK(mox_sha256_hex(x, strlen(x), hex) && strcmp(hex, a->abi_sha256) == 0,
               "an accepted manifest's abi_sha256 is not its ABI's");
    free(x);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    if (!mox_manifest_parse((const char *)data, size, &m, &err)) {
        FUZZ_CHECK(m == NULL && err.message[0] && !err.out_of_memory, "bad refusal: %s",
                   err.message);
        return 0;
    }
    char *text = mox_manifest_to_json(m);
    FUZZ_CHECK(text != NULL, "an accepted manifest cannot be written");
    mox_manifest *back = NULL;
    FUZZ_CHECK(mox_manifest_parse(text, strlen(text), &back, &err), "own JSON refused: %s",
               err.message);
    same_manifest(m, back);
    char *again = mox_manifest_to_json(back);
    FUZZ_CHECK(again && strcmp(again, text) == 0, "the written manifest is not a fixed point");
    free(again);
    free(text);
    mox_manifest_free(back);
    mox_manifest_free(m);
    return 0;
}
