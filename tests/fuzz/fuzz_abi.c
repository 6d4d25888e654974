/* fuzz_abi.c - libFuzzer target: the ABI JSON reader (mox_abi_from_json)
 * with round-trip oracles. An accepted ABI validates, has a signature for
 * every parameter layout, writes canonical JSON that reads back into an
 * equal ABI, and that text is a fixed point; a refused one has a message
 * and is never "out of memory" (nothing fails allocations here). */
#include <stdint.h>
#include <string.h>

#include "abi.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_abi(const mox_abi *a, const mox_abi *b)
{
    FUZZ_CHECK(a->kernel_count == b->kernel_count && a->required_features == b->required_features,
               "kernels or features changed in the round trip");
    for (size_t k = 0; k < a->kernel_count; k++) {
        const mox_abi_kernel *x = &a->kernels[k], *y = &b->kernels[k];
        FUZZ_CHECK(strcmp(x->name, y->name) == 0 && x->param_count == y->param_count &&
                       x->features == y->features && x->has_required_block == y->has_required_block,
                   "kernel %zu changed in the round trip", k);
        for (size_t p = 0; p < x->param_count; p++) {
            FUZZ_CHECK(strcmp(x->params[p].name, y->params[p].name) == 0 &&
                           x->params[p].kind == y->params[p].kind &&
                           x->params[p].access == y->params[p].access &&
                           mox_abi_layout_equal(x->params[p].layout, y->params[p].layout),
                       "kernel %s parameter %zu changed in the round trip", x->name, p);
            char *sig = mox_abi_layout_signature(x->params[p].layout);
            FUZZ_CHECK(sig != NULL, "no signature for kernel %s parameter %zu", x->name, p);
            free(sig);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mox_abi *abi = NULL;
    mox_artifact_error err = {0};
    if (!mox_abi_from_json((const char *)data, size, &abi, &err)) {
        FUZZ_CHECK(abi == NULL && err.message[0] && !err.out_of_memory, "bad refusal: %s",
                   err.message);
        return 0;
    }
    FUZZ_CHECK(mox_abi_validate(abi, &err), "accepted but invalid: %s", err.message);
    char *text = mox_abi_to_json(abi);
    FUZZ_CHECK(text != NULL, "an accepted ABI cannot be written");
    mox_abi *back = NULL;
    FUZZ_CHECK(mox_abi_from_json(text, strlen(text), &back, &err), "own JSON refused: %s",
               err.message);
    same_abi(abi, back);
    char *again = mox_abi_to_json(back);
    FUZZ_CHECK(again && strcmp(again, text) == 0, "canonical JSON is not a fixed point");
    free(again);
    free(text);
    mox_abi_free(back);
    mox_abi_free(abi);
    return 0;
}
