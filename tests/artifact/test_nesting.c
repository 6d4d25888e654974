/* test_nesting.c - the ABI's one nesting limit (32 levels of arrays and
 * records, docs/abi.md) at 22, 23, 32 and 33 levels, for records and for
 * arrays: the validator, the JSON writer and reader, signatures and the
 * manifest all accept up to 32 levels and refuse 33 with the same message.
 * (Before, the writer gave up from 23 levels on, which moxc and the manifest
 * parser reported as "out of memory".) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abi.h"
#include "fixtures.h"
#include "manifest.h"
#include "sha256.h"

#define TOO_DEEP "nests arrays and records more than 32 levels deep"

/* R1{inner:R2{...{inner:R<levels>{v:leaf}}}} */
static mox_abi_layout *records_of(mox_abi_layout *leaf, int levels)
{
    mox_abi_layout *l = leaf;
    for (int i = levels; i >= 1; i--) {
        char name[16];
        snprintf(name, sizeof name, "R%d", i);
        mox_abi_field *f = calloc(1, sizeof *f);
        f->name = strdup(i == levels ? "v" : "inner");
        f->layout = l;
        l = mox_abi_layout_record(name, f, 1);
        assert_non_null(l);
    }
    return l;
}

static mox_abi_layout *records(int levels)
{
    return records_of(mox_abi_layout_scalar(MOX_SCALAR_F32), levels);
}

/* [[...[leaf;1]...;1];1] */
static mox_abi_layout *arrays_of(mox_abi_layout *leaf, int levels)
{
    mox_abi_layout *l = leaf;
    for (int i = 0; i < levels; i++)
        l = mox_abi_layout_array(l, 1);
    return l;
}

static mox_abi_layout *arrays(int levels)
{
    return arrays_of(mox_abi_layout_scalar(MOX_SCALAR_U32), levels);
}

/* One kernel: a value parameter `v` and a buffer parameter `b`. */
static mox_abi *abi_with(mox_abi_layout *value, mox_abi_layout *element)
{
    mox_abi *abi = calloc(1, sizeof *abi);
    abi->version = MOX_ABI_VERSION;
    abi->kernel_count = 1;
    abi->kernels = calloc(1, sizeof *abi->kernels);
    mox_abi_kernel *k = &abi->kernels[0];
    k->name = strdup("k");
    k->param_count = 2;
    k->params = calloc(2, sizeof *k->params);
    k->params[0] = (mox_abi_param){strdup("v"), 0, MOX_PARAM_VALUE, MOX_PARAM_READ, value};
    k->params[1] = (mox_abi_param){strdup("b"), 1, MOX_PARAM_BUFFER, MOX_PARAM_WRITE, element};
    return abi;
}

static void accepted_everywhere(mox_abi *abi)
{
    mox_artifact_error err = {0};
    if (!mox_abi_validate(abi, &err))
        fail_msg("refused: %s", err.message);
    char *sig = mox_abi_layout_signature(abi->kernels[0].params[0].layout);
    assert_non_null(sig);
    char *text = mox_abi_to_json(abi);
    assert_non_null(text);
    mox_abi *back = NULL;
    if (!mox_abi_from_json(text, strlen(text), &back, &err))
        fail_msg("its own JSON refused: %s", err.message);
    char *again = mox_abi_to_json(back);
    assert_string_equal(again, text);
    /* In a manifest, as moxc writes it and the runtime reads it. */
    mox_manifest *m = fx_manifest(false);
    mox_abi_free(m->abi);
    m->abi = back;
    /* The cpu section names the ABI's kernels: now the one kernel k. */
    for (size_t i = 0; i < m->cpu_kernel_count; i++) {
        free(m->cpu_kernels[i].name);
        free(m->cpu_kernels[i].executor);
        free(m->cpu_kernels[i].note);
    }
    m->cpu_kernel_count = 1;
    m->cpu_kernels[0] = (mox_manifest_cpu_kernel){strdup("k"), strdup("thread-calls"), NULL};
    assert_true(mox_sha256_hex(text, strlen(text), m->abi_sha256));
    memcpy(m->files[MOX_FILE_ABI_JSON].sha256, m->abi_sha256, sizeof m->abi_sha256);
    char *manifest = mox_manifest_to_json(m);
    assert_non_null(manifest);
    mox_manifest *parsed = NULL;
    if (!mox_manifest_parse(manifest, strlen(manifest), &parsed, &err))
        fail_msg("manifest refused: %s", err.message);
    mox_manifest_free(parsed);
    mox_manifest_free(m);
    free(manifest);
    free(again);
    free(text);
    free(sig);
}

static void refused_everywhere(mox_abi *abi, const char *what, const char *deepest)
{
    char want[256];
    snprintf(want, sizeof want, "%s " TOO_DEEP " (%s at level 33); the ABI allows at most 32",
             what, deepest);
    mox_artifact_error err = {0};
    assert_false(mox_abi_validate(abi, &err));
    if (!strstr(err.message, want))
        fail_msg("validator: \"%s\" lacks \"%s\"", err.message, want);
    assert_false(err.out_of_memory);
    /* The writer refuses what the validator refuses (no text to hash). */
    assert_null(mox_abi_to_json(abi));
}

static void nesting_22_23_32_33(void **state)
{
    (void)state;
    const int ok[] = {22, 23, 32};
    for (int i = 0; i < 3; i++) {
        mox_abi *abi = abi_with(records(ok[i]), arrays(ok[i]));
        accepted_everywhere(abi);
        mox_abi_free(abi);
    }
    mox_abi *deep_value = abi_with(records(33), arrays(1));
    refused_everywhere(deep_value, "kernel k parameter v", "record R33");
    mox_abi_free(deep_value);
    mox_abi *deep_buffer = abi_with(records(1), arrays(33));
    refused_everywhere(deep_buffer, "kernel k parameter b element", "array");
    mox_abi_free(deep_buffer);
}

/* Vectors are leaves, as scalars are: 32 levels of records or arrays
 * around a vector are within the limit everywhere. */
static void vectors_are_leaves(void **state)
{
    (void)state;
    mox_abi *abi = abi_with(records_of(mox_abi_layout_vector(MOX_SCALAR_F32, 4), 32),
                            arrays_of(mox_abi_layout_vector(MOX_SCALAR_U32, 2), 32));
    accepted_everywhere(abi);
    mox_abi_free(abi);
    mox_abi *deep = abi_with(records_of(mox_abi_layout_vector(MOX_SCALAR_F32, 4), 33), arrays(1));
    refused_everywhere(deep, "kernel k parameter v", "record R33");
    mox_abi_free(deep);
}

/* 33 levels in JSON text (the writer cannot make it): the reader refuses
 * it with the validator's message, before building anything that deep. */
static void reader_refuses_33(void **state)
{
    (void)state;
    mox_abi *abi = abi_with(records(32), arrays(1));
    char *text = mox_abi_to_json(abi);
    const char *inner = "{\"size\":4,\"alignment\":4,\"kind\":\"record\",\"name\":\"R1\"";
    char *at = strstr(text, inner);
    assert_non_null(at);
    size_t head = (size_t)(at - text);
    size_t len = strlen(text);
    /* Wrap R1 into R0{inner:R1}: find R1's end by matching braces. */
    int depth = 0;
    size_t end = head;
    do {
        depth += text[end] == '{' ? 1 : text[end] == '}' ? -1 : 0;
        end++;
    } while (depth > 0);
    const char *pre = "{\"size\":4,\"alignment\":4,\"kind\":\"record\",\"name\":\"R0\",\"fields\":"
                      "[{\"name\":\"inner\",\"offset\":0,\"layout\":";
    char *deep = malloc(len + strlen(pre) + 8);
    sprintf(deep, "%.*s%s%.*s}]}%s", (int)head, text, pre, (int)(end - head), at, text + end);
    mox_abi *back = (mox_abi *)1;
    mox_artifact_error err = {0};
    assert_false(mox_abi_from_json(deep, strlen(deep), &back, &err));
    assert_null(back);
    if (!strstr(err.message, "kernel k parameter v " TOO_DEEP " (record R32 at level 33)"))
        fail_msg("reader: \"%s\"", err.message);
    free(deep);
    free(text);
    mox_abi_free(abi);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nesting_22_23_32_33),
        cmocka_unit_test(vectors_are_leaves),
        cmocka_unit_test(reader_refuses_33),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
