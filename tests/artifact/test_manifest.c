/* test_manifest.c - manifest.json: round trips, every consistency rule,
 * truncation at every byte, and verified reads of artifact files (tampered,
 * missing, absent from the manifest). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "sha256.h"

static void round_trip(void **state)
{
    for (int fatbin = 0; fatbin < 2; fatbin++) {
        mox_manifest *m = fx_manifest(fatbin);
        char *text = mox_manifest_to_json(m);
        assert_non_null(text);
        assert_int_equal(text[strlen(text) - 1], '\n');
        mox_manifest *back = NULL;
        mox_artifact_error err = {0};
        if (!mox_manifest_parse(text, strlen(text), &back, &err))
            fail_msg("manifest rejected: %s", err.message);
        assert_string_equal(back->module, "stages");
        assert_int_equal(back->files[MOX_FILE_FATBIN].present, fatbin);
        assert_true(back->files[MOX_FILE_CPU_SO].present);
        assert_string_equal(back->files[MOX_FILE_CPU_SO].path, "kernels_cpu.so");
        assert_string_equal(back->files[MOX_FILE_CPU_SO].sha256, m->files[MOX_FILE_CPU_SO].sha256);
        assert_string_equal(back->abi_sha256, m->abi_sha256);
        assert_string_equal(back->fingerprint, m->fingerprint);
        assert_int_equal(back->cuda_arch_count, fatbin ? 2 : 0);
        assert_int_equal(back->ptx, fatbin);
        assert_int_equal(back->cc_flag_count, 1);
        assert_string_equal(back->cc_flags[0], "-O2");
        assert_int_equal(back->abi->kernel_count, 3);
        assert_int_equal(back->cpu_kernel_count, 3);
        assert_string_equal(back->cpu_kernels[0].executor, "loops");
        assert_null(back->cpu_kernels[0].note);
        assert_string_equal(back->cpu_kernels[2].name, "warp_total");
        assert_string_equal(back->cpu_kernels[2].executor, "fibers");
        assert_non_null(strstr(back->cpu_kernels[2].note, "switch"));
        char *again = mox_manifest_to_json(back);
        assert_string_equal(again, text);
        free(text);
        free(again);
        mox_manifest_free(m);
        mox_manifest_free(back);
    }
    for (int f = 0; f < MOX_FILE_COUNT_; f++)
        assert_non_null(mox_artifact_file_key((mox_artifact_file)f));
    assert_string_equal(mox_artifact_file_key(MOX_FILE_FATBIN), "fatbin");
    assert_null(mox_artifact_file_key(MOX_FILE_COUNT_));
    mox_manifest_free(NULL);
}

static void expect_reject(const char *text, const char *message)
{
    mox_manifest *m = (mox_manifest *)1;
    mox_artifact_error err = {0};
    if (mox_manifest_parse(text, strlen(text), &m, &err))
        fail_msg("accepted a manifest that should fail with \"%s\"", message);
    assert_null(m);
    if (!strstr(err.message, message))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, message);
}

static void expect_text_mutation(const char *from, const char *to, const char *message)
{
    mox_manifest *m = fx_manifest(true);
    char *text = mox_manifest_to_json(m);
    char *mutated = fx_replace(text, from, to);
    expect_reject(mutated, message);
    free(mutated);
    free(text);
    mox_manifest_free(m);
}

static void text_mutations(void **state)
{
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"\"mox-artifact\"", "\"mox-other\"", "not a mox artifact manifest"},
        {"\"format_version\": 2", "\"format_version\": 1", "unsupported manifest format version 1"},
        {"\"executor\": \"loops\"", "\"executor\": \"simd\"", "manifest cpu.kernels[0]: unknown executor \"simd\""},
        {"\"executor\": \"fibers\"", "\"executor\": \"thread-calls\"",
         "manifest cpu.kernels[2]: kernel warp_total has barriers or warp operations, so it cannot run as thread-calls"},
        {"\"executor\": \"thread-calls\"", "\"executor\": \"fibers\"",
         "manifest cpu.kernels[1]: kernel update_particles has no barrier or warp operation"},
        {"\"name\": \"warp_total\",\n        \"executor\"", "\"name\": \"warp\",\n        \"executor\"",
         "manifest cpu.kernels[2]: \"warp\" is not the ABI's kernel 2 (\"warp_total\")"},
        {"\"note\": null", "\"note\": 3", "manifest cpu.kernels[0]: field \"note\" must be a string or null"},
        {"\"cpu\": {\n    \"kernels\"", "\"cpu\": {\n    \"cores\": 1, \"kernels\"", "manifest cpu: unknown field \"cores\""},
        {"\"abi\": {\n    \"version\": 1", "\"abi\": {\n    \"version\": 3", "unsupported kernel ABI version 3"},
        {"\"module\": \"stages\"", "\"module\": \"sta ges\"", "module name \"sta ges\" is not a valid identifier"},
        {"\"module\": \"stages\"", "\"module\": 7", "manifest: field \"module\" must be a string"},
        {"\"format_version\": 2,", "\"format_version\": 2, \"ignored\": 0,", "manifest: unknown field \"ignored\""},
        {"\"cuda_tu\": ", "\"cuda_tx\": ", "manifest files: unknown field \"cuda_tx\""},
        {"\"moxc_version\"", "\"rustc\": \"1\", \"moxc_version\"", "manifest build: unknown field \"rustc\""},
        {"\"ptx\": true", "\"ptx\": \"yes\"", "manifest target: field \"ptx\" must be true or false"},
        {"\"path\": \"kernels_cpu.so\"", "\"path\": \"../kernels_cpu.so\"",
         "manifest files.cpu_so: path \"../kernels_cpu.so\" must be a plain file name"},
        {"\"path\": \"kernels_cpu.so\"", "\"path\": \"lib/kernels_cpu.so\"",
         "manifest files.cpu_so: path \"lib/kernels_cpu.so\" must be a plain file name"},
        {"\"path\": \"kernels_cpu.so\"", "\"path\": \"\"", "manifest files.cpu_so: path \"\" must be a plain file name"},
        {"\"path\": \"stages.c\"", "\"path\": \"stages.h\"",
         "manifest files: bindings_h and bindings_c have the same path \"stages.h\""},
        {"\"path\": \"stages.c\",", "", "manifest files.bindings_c: missing field \"path\""},
        {"\"sm_90a\"", "\"compute_90\"", "manifest target: \"compute_90\" is not a CUDA architecture name"},
        {"\"sm_90a\"", "\"sm_90\"", "manifest target: duplicate CUDA architecture \"sm_90\""},
        {"\"name\": \"n\"", "\"name\": \"count2\"", "manifest abi_sha256"},
        {"\"name\": \"n\"", "\"name\": \"n\", \"ignored\": 1", "kernel scale_256 parameter 2: unknown field \"ignored\""},
        {"\"scalar\": \"u32\"", "\"scalar\": \"f64\"", "unknown scalar type \"f64\""},
        {"\"cc_flags\": [\n      \"-O2\"", "\"cc_flags\": [\n      2", "manifest build: field \"cc_flags\" must be an array of strings"},
        {"\"format\": \"mox-artifact\",", "\"format\": \"mox-artifact\", \"format\": \"mox-artifact\",",
         "manifest is not valid JSON: duplicate object key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_text_mutation(cases[i].from, cases[i].to, cases[i].message);
    expect_reject("[]", "manifest must be a JSON object");
    expect_reject("{\"format\":\"mox-artifact\"}", "manifest: field \"format_version\" must be an integer");
    expect_reject("", "manifest is not valid JSON");
}

typedef void (*manifest_edit)(mox_manifest *m);

/* Applies `edit` to a valid manifest, writes it, expects `message`. */
static void expect_edit(bool fatbin, manifest_edit edit, const char *message)
{
    mox_manifest *m = fx_manifest(fatbin);
    edit(m);
    char *text = mox_manifest_to_json(m);
    assert_non_null(text);
    expect_reject(text, message);
    free(text);
    mox_manifest_free(m);
}

static void drop_cpu_so(mox_manifest *m) { m->files[MOX_FILE_CPU_SO].present = false; }
static void drop_cpu_kernel(mox_manifest *m)
{
    mox_manifest_cpu_kernel *last = &m->cpu_kernels[--m->cpu_kernel_count];
    free(last->name);
    free(last->executor);
    free(last->note);
}
static void drop_abi_json(mox_manifest *m) { m->files[MOX_FILE_ABI_JSON].present = false; }
static void empty_fingerprint(mox_manifest *m) { m->fingerprint[0] = '\0'; }
static void upper_hash(mox_manifest *m) { m->files[MOX_FILE_FATBIN].sha256[0] = 'A'; }
static void short_hash(mox_manifest *m) { m->files[MOX_FILE_CUDA_TU].sha256[63] = '\0'; }
static void wrong_abi_hash(mox_manifest *m) { m->abi_sha256[0] = m->abi_sha256[0] == '0' ? '1' : '0'; }
static void abi_json_hash(mox_manifest *m) { m->files[MOX_FILE_ABI_JSON].sha256[0] ^= 1; }
static void no_moxc(mox_manifest *m) { m->moxc_version[0] = '\0'; }
static void no_cc(mox_manifest *m) { m->cc_version[0] = '\0'; }
static void no_nvcc(mox_manifest *m) { m->nvcc_version[0] = '\0'; }
static void no_archs(mox_manifest *m)
{
    for (size_t i = 0; i < m->cuda_arch_count; i++)
        free(m->cuda_archs[i]);
    m->cuda_arch_count = 0;
}
static void ptx_only(mox_manifest *m) { m->ptx = true; }
static void bad_kernel(mox_manifest *m)
{
    free(m->abi->kernels[2].name);
    m->abi->kernels[2].name = strdup("class");
}
static void atomic_f32(mox_manifest *m)
{
    m->abi->kernels[1].params[2].layout->scalar = MOX_SCALAR_F32;
}

static void model_edits(void **state)
{
    expect_edit(true, drop_cpu_so, "manifest files: cpu_so is required");
    expect_edit(true, drop_cpu_kernel, "manifest cpu: 2 kernels, the ABI has 3");
    expect_edit(true, drop_abi_json, "manifest files: abi_json is required");
    expect_edit(true, empty_fingerprint, "manifest build: fingerprint \"\" is not 64 lowercase hex characters");
    expect_edit(true, upper_hash, "manifest files.fatbin: sha256 \"A");
    expect_edit(true, short_hash, "manifest files.cuda_tu: sha256");
    expect_edit(true, wrong_abi_hash, "does not match its ABI");
    expect_edit(true, abi_json_hash, "manifest files.abi_json: sha256 differs from abi_sha256");
    expect_edit(true, no_moxc, "manifest build: moxc_version is empty");
    expect_edit(false, no_cc, "manifest build: cc_version is empty");
    expect_edit(true, no_nvcc, "manifest build: nvcc_version is empty but the artifact has a fatbin");
    expect_edit(true, no_archs, "manifest target: cuda_archs is empty but the artifact has a fatbin");
    expect_edit(false, ptx_only, "manifest target: cuda_archs and ptx must be empty and false without a fatbin");
    expect_edit(true, bad_kernel, "kernel name \"class\" is not a valid identifier");
    expect_edit(true, atomic_f32, "kernel update_particles requires integer atomic elements");
}

static void truncation(void **state)
{
    mox_manifest *m = fx_manifest(true);
    char *text = mox_manifest_to_json(m);
    size_t n = strlen(text);
    /* Every cut but the trailing newline, which JSON does not need. */
    for (size_t cut = 0; cut + 1 < n; cut++) {
        mox_manifest *out = NULL;
        mox_artifact_error err = {0};
        if (mox_manifest_parse(text, cut, &out, &err))
            fail_msg("manifest cut at byte %zu was accepted", cut);
        assert_null(out);
        assert_true(err.message[0] != '\0');
    }
    free(text);
    mox_manifest_free(m);
}

static void load_and_read(void **state)
{
    char *dir = fx_tempdir();
    fx_write_artifact(dir, true);
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    if (!mox_manifest_load(dir, &m, &err))
        fail_msg("load failed: %s", err.message);
    if (!mox_manifest_verify_all(m, dir, &err))
        fail_msg("verify_all failed: %s", err.message);
    void *data = NULL;
    size_t size = 0;
    assert_true(mox_manifest_read_file(m, dir, MOX_FILE_CPU_SO, &data, &size, &err));
    assert_int_equal(size, strlen("contents of kernels_cpu.so\n"));
    assert_memory_equal(data, "contents of kernels_cpu.so\n", size + 1); /* with its NUL */
    free(data);
    /* abi.json holds the canonical ABI, whose hash is abi_sha256. */
    assert_true(mox_manifest_read_file(m, dir, MOX_FILE_ABI_JSON, &data, &size, &err));
    char *abi_text = mox_abi_to_json(m->abi);
    assert_string_equal(data, abi_text);
    free(abi_text);
    free(data);
    mox_manifest_free(m);
    fx_rmdir(dir);
}

static void tampered_file(void **state)
{
    char *dir = fx_tempdir();
    fx_write_artifact(dir, true);
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    assert_true(mox_manifest_load(dir, &m, &err));
    fx_write_file(dir, "kernels.fatbin", "tampered", 8);
    void *data = (void *)1;
    size_t size = 99;
    assert_false(mox_manifest_read_file(m, dir, MOX_FILE_FATBIN, &data, &size, &err));
    assert_null(data);
    assert_int_equal(size, 0);
    assert_non_null(strstr(err.message, "kernels.fatbin does not match the manifest hash"));
    assert_false(mox_manifest_verify_all(m, dir, &err));
    assert_non_null(strstr(err.message, "kernels.fatbin does not match the manifest hash"));
    /* Other files still read. */
    assert_true(mox_manifest_read_file(m, dir, MOX_FILE_CPU_SO, &data, &size, &err));
    free(data);
    /* An empty file is tampered too. */
    fx_write_file(dir, "kernels_cpu.so", "", 0);
    assert_false(mox_manifest_read_file(m, dir, MOX_FILE_CPU_SO, &data, &size, &err));
    assert_non_null(strstr(err.message, "kernels_cpu.so does not match the manifest hash"));
    mox_manifest_free(m);
    fx_rmdir(dir);
}

static void missing_files(void **state)
{
    char *dir = fx_tempdir();
    fx_write_artifact(dir, false);
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    assert_true(mox_manifest_load(dir, &m, &err));
    void *data = (void *)1;
    size_t size;
    /* Absent from the manifest. */
    assert_false(mox_manifest_read_file(m, dir, MOX_FILE_FATBIN, &data, &size, &err));
    assert_null(data);
    assert_non_null(strstr(err.message, "has no fatbin file"));
    assert_false(mox_manifest_read_file(m, dir, MOX_FILE_COUNT_, &data, &size, &err));
    assert_true(mox_manifest_verify_all(m, dir, &err));
    /* Named by the manifest but gone. */
    char path[4200];
    snprintf(path, sizeof path, "%s/kernels_cuda.cu", dir);
    assert_int_equal(unlink(path), 0);
    assert_false(mox_manifest_read_file(m, dir, MOX_FILE_CUDA_TU, &data, &size, &err));
    assert_non_null(strstr(err.message, "kernels_cuda.cu"));
    assert_non_null(strstr(err.message, "No such file"));
    assert_false(mox_manifest_verify_all(m, dir, &err));
    assert_non_null(strstr(err.message, "kernels_cuda.cu"));
    mox_manifest_free(m);
    /* No manifest at all, and a broken one naming its path. */
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    assert_int_equal(unlink(path), 0);
    assert_false(mox_manifest_load(dir, &m, &err));
    assert_null(m);
    assert_non_null(strstr(err.message, "manifest.json"));
    fx_write_file(dir, "manifest.json", "{\"format\":", 10);
    assert_false(mox_manifest_load(dir, &m, &err));
    assert_non_null(strstr(err.message, "manifest.json: manifest is not valid JSON"));
    assert_false(mox_manifest_load("", &m, &err));
    fx_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),     cmocka_unit_test(text_mutations),
        cmocka_unit_test(model_edits),    cmocka_unit_test(truncation),
        cmocka_unit_test(load_and_read),  cmocka_unit_test(tampered_file),
        cmocka_unit_test(missing_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
