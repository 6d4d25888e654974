/* modules.c - module preparation (A3) and its failures: where the artifact
 * is looked up (environment variable, mox_module_set_artifact_dir,
 * recorded directory, MOX_ARTIFACT_ROOT), verification (manifest, hashes,
 * the bindings' ABI hash), and how failures reach launches. Descriptor
 * copies are distinct modules (a descriptor's address identifies it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/sha256.h"
#include "conf2.h" /* a second module */
#include "support.h"

static char tmp[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/mox-conf-modules-%d", (int)getpid());
    mkdir(tmp, 0700);
    mox_device_release(conf_open());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* Copies the conf artifact to tmp/<name>; returns the path (static). */
static const char *copy_artifact(const char *name)
{
    static char dst[300];
    char cmd[900];
    int n = snprintf(dst, sizeof dst, "%s/%s", tmp, name);
    assert_true(n > 0 && (size_t)n < sizeof dst);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dst, conf_module.artifact_dir, dst);
    assert_int_equal(system(cmd), 0);
    return dst;
}

/* Launches fill with `module` on a fresh device; returns the status. */
static mox_status run_with(const mox_module_desc *module, const char *text)
{
    mox_device *dev = conf_open();
    mox_buffer *b = conf_zeros(dev, 4);
    float v = 1.0f;
    uint32_t n = 4;
    mox_arg args[3] = {MOX_ARG_WRITE(b), MOX_ARG_VALUE(&v, &mox_type_f32), MOX_ARG_VALUE(&n, &mox_type_u32)};
    uint32_t k = 0;
    while (strcmp(module->kernel_names[k], "fill") != 0)
        k++;
    mox_op *op = mox_launch_generated(dev, module, k, conf_cfg(4), args, 3);
    mox_status st = mox_op_wait(op);
    if (text) {
        const char *msg = mox_error_message(mox_result_error(mox_op_result(op)));
        if (!strstr(msg, text))
            fail_msg("message '%s' lacks '%s'", msg, text);
    }
    mox_op_drop(op);
    if (st != MOX_OK)
        assert_true(conf_read1(b, 0) == 0.0f); /* nothing ran */
    /* mox_module_prepare reports the same failure. */
    mox_status prep = mox_module_prepare(dev, module);
    assert_int_equal(prep, st);
    mox_buffer_release(b);
    mox_device_release(dev);
    return st;
}

static void prepare_and_env_override(void **state)
{
    (void)state;
    assert_int_equal(run_with(&conf_module, NULL), MOX_OK);
    setenv("MOX_ARTIFACT_CONF", "/nonexistent/mox-artifact", 1);
    assert_int_equal(run_with(&conf_module, "no artifact at '/nonexistent/mox-artifact'"), MOX_ERR_ARTIFACT);
    setenv("MOX_ARTIFACT_CONF", copy_artifact("copy"), 1);
    assert_int_equal(run_with(&conf_module, NULL), MOX_OK);
    unsetenv("MOX_ARTIFACT_CONF");
}

/* Two modules prepared one after the other on one device each run their
 * own code (the CPU backend loads code by a per-load name; a reused name
 * once handed the second module the first one's code). */
static void two_modules_run_their_own_code(void **state)
{
    (void)state;
    mox_device *dev = conf_open();
    assert_int_equal(mox_module_prepare(dev, &conf_module), MOX_OK);
    assert_int_equal(mox_module_prepare(dev, &conf2_module), MOX_OK);
    mox_buffer *in = conf_ramp(dev, 8, 1.0f, 1.0f);
    mox_buffer *a = conf_zeros(dev, 8), *b = conf_zeros(dev, 8);
    mox_op *op1 = conf2_tenfold(dev, conf_cfg(8), in, a, 8);
    mox_op *op2 = conf_scale(dev, conf_cfg(8), in, b, 3.0f, 8);
    assert_int_equal(mox_op_wait(op1), MOX_OK);
    assert_int_equal(mox_op_wait(op2), MOX_OK);
    for (size_t i = 0; i < 8; i++) {
        float x = 1.0f + (float)i;
        assert_true(conf_read1(a, i) == x * 10.0f + 1.0f);
        assert_true(conf_read1(b, i) == x * 3.0f);
    }
    mox_op_drop(op1);
    mox_op_drop(op2);
    mox_buffer_release(in);
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_device_release(dev);
}

static void set_artifact_dir_before_first_use(void **state)
{
    (void)state;
    static mox_module_desc copy;
    copy = conf_module;
    assert_int_equal(mox_module_set_artifact_dir(&copy, "/nonexistent/elsewhere"), MOX_OK);
    assert_int_equal(mox_module_set_artifact_dir(&copy, NULL), MOX_OK); /* back to default */
    assert_int_equal(mox_module_set_artifact_dir(&copy, copy_artifact("set")), MOX_OK);
    assert_int_equal(run_with(&copy, NULL), MOX_OK);
    assert_int_equal(mox_module_set_artifact_dir(&copy, "/x"), MOX_ERR_STATE);
    assert_non_null(strstr(mox_error_last_message(), "was already looked up by a device (loaded, or failed to "
                                                      "load); set its artifact directory before first use, or "
                                                      "use MOX_ARTIFACT_CONF"));
    assert_int_equal(mox_module_set_artifact_dir(NULL, "/x"), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_module_prepare(NULL, &copy), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "device is NULL"));
    assert_int_equal(mox_module_set_artifact_dir(&copy, ""), MOX_ERR_INVALID_ARGUMENT);
}

static void artifact_root_fallback(void **state)
{
    (void)state;
    static mox_module_desc copy;
    static char recorded[300];
    const char *base = strrchr(conf_module.artifact_dir, '/') + 1;
    snprintf(recorded, sizeof recorded, "/nonexistent/cache/%s/", base);
    copy = conf_module;
    copy.artifact_dir = recorded;
    copy.artifact_env = NULL;
    char root[300];
    snprintf(root, sizeof root, "%s/root", tmp);
    mkdir(root, 0700);
    char name[320];
    snprintf(name, sizeof name, "root/%s", base);
    copy_artifact(name);
    setenv("MOX_ARTIFACT_ROOT", root, 1);
    assert_int_equal(run_with(&copy, NULL), MOX_OK);
    unsetenv("MOX_ARTIFACT_ROOT");
}

/* Found by fingerprint (here through MOX_ARTIFACT_ROOT), an artifact must
 * be the build the bindings name: another build of the same module and
 * ABI under that name is refused. Chosen by the program (an environment
 * variable, mox_module_set_artifact_dir) it is taken. */
static void found_by_fingerprint_must_be_that_build(void **state)
{
    (void)state;
    static mox_module_desc by_name, chosen;
    static char recorded[300];
    const char *other = "abababababababababababababababababababababababababababababababab";
    snprintf(recorded, sizeof recorded, "/nonexistent/cache/%s", other);
    by_name = conf_module;
    by_name.artifact_dir = recorded;
    by_name.artifact_env = NULL;
    char root[300], name[400];
    snprintf(root, sizeof root, "%s/root2", tmp);
    mkdir(root, 0700);
    snprintf(name, sizeof name, "root2/%s", other);
    const char *dir = copy_artifact(name);
    setenv("MOX_ARTIFACT_ROOT", root, 1);
    assert_int_equal(run_with(&by_name, "is build "), MOX_ERR_ARTIFACT);
    unsetenv("MOX_ARTIFACT_ROOT");
    chosen = by_name;
    assert_int_equal(mox_module_set_artifact_dir(&chosen, dir), MOX_OK);
    assert_int_equal(run_with(&chosen, NULL), MOX_OK);
}

static void tampered_artifacts_are_rejected(void **state)
{
    (void)state;
    char path[400];
    /* Changed device code (the CPU object and, when built, the fatbin:
     * whichever the backend loads): its hash no longer matches. */
    const char *dir = copy_artifact("tampered");
    const char *files[2] = {"kernels_cpu.so", "kernels.fatbin"};
    FILE *f;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        f = fopen(path, "r+b");
        if (!f) {
            assert_int_equal(i, 1); /* no fatbin without nvcc */
            continue;
        }
        fseek(f, 100, SEEK_SET);
        int c = fgetc(f);
        fseek(f, 100, SEEK_SET);
        fputc(0x5a ^ c, f);
        fclose(f);
    }
    setenv("MOX_ARTIFACT_CONF", dir, 1);
    assert_int_equal(run_with(&conf_module, "artifact"), MOX_ERR_ARTIFACT);

    /* A corrupt manifest. */
    dir = copy_artifact("badmanifest");
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    f = fopen(path, "w");
    fputs("{\"format\":", f);
    fclose(f);
    setenv("MOX_ARTIFACT_CONF", dir, 1);
    assert_int_equal(run_with(&conf_module, "module 'conf': artifact"), MOX_ERR_ARTIFACT);

    /* An unreadable manifest (root reads anything: then it is skipped). */
    if (geteuid() != 0) {
        dir = copy_artifact("unreadable");
        snprintf(path, sizeof path, "%s/manifest.json", dir);
        chmod(path, 0);
        setenv("MOX_ARTIFACT_CONF", dir, 1);
        assert_int_equal(run_with(&conf_module, "cannot read"), MOX_ERR_IO);
    }
    unsetenv("MOX_ARTIFACT_CONF");
}

static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

static void bindings_must_match_the_artifact_abi(void **state)
{
    (void)state;
    /* Bindings generated from a different ABI (a renamed parameter). */
    static mox_module_desc copy;
    static char hex[65];
    char *json = replace(conf_module.abi_json, "\"name\":\"factor\"", "\"name\":\"gain\"");
    assert_true(mox_sha256_hex(json, strlen(json), hex));
    copy = conf_module;
    copy.abi_json = json;
    copy.abi_sha256 = hex;
    assert_int_equal(run_with(&copy, "generated bindings do not match the artifact ABI"),
                     MOX_ERR_ABI_MISMATCH);

    /* A descriptor whose hash does not match its own ABI text. */
    static mox_module_desc bad_hash;
    bad_hash = conf_module;
    bad_hash.abi_sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    assert_int_equal(run_with(&bad_hash, "does not match its abi_sha256"), MOX_ERR_ABI_MISMATCH);

    /* Descriptors that contradict themselves fail every launch. */
    static mox_module_desc broken[4];
    static const char *names[16];
    static char bad_json_hex[65];
    static const char bad_json[] = "{\"version\":1}";
    assert_true(mox_sha256_hex(bad_json, strlen(bad_json), bad_json_hex));
    for (int i = 0; i < 4; i++)
        broken[i] = conf_module;
    broken[0].kernel_count = conf_module.kernel_count - 1;
    for (uint32_t k = 0; k < conf_module.kernel_count && k < 16; k++)
        names[k] = conf_module.kernel_names[k];
    names[0] = "renamed";
    broken[1].kernel_names = names;
    broken[2].abi_json = bad_json;
    broken[2].abi_sha256 = bad_json_hex;
    broken[3].abi_json = NULL;
    const char *texts[4] = {"descriptor lists", "is not ABI kernel", "invalid embedded ABI",
                            "descriptor has no ABI"};
    for (int i = 0; i < 4; i++) {
        mox_device *dev = conf_open();
        mox_op *op = mox_launch_generated(dev, &broken[i], 0, conf_cfg(1), NULL, 0);
        assert_int_equal(mox_op_wait(op), MOX_ERR_ABI_MISMATCH);
        const char *msg = mox_error_message(mox_result_error(mox_op_result(op)));
        if (!strstr(msg, texts[i]))
            fail_msg("'%s' lacks '%s'", msg, texts[i]);
        mox_op_drop(op);
        assert_int_equal(mox_module_prepare(dev, &broken[i]), MOX_ERR_ABI_MISMATCH);
        mox_device_release(dev);
    }

    /* An artifact of another module. */
    static mox_module_desc renamed;
    renamed = conf_module;
    renamed.name = "other";
    assert_int_equal(run_with(&renamed, "holds module 'conf'"), MOX_ERR_ARTIFACT);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prepare_and_env_override),
        cmocka_unit_test(two_modules_run_their_own_code),
        cmocka_unit_test(set_artifact_dir_before_first_use),
        cmocka_unit_test(artifact_root_fallback),
        cmocka_unit_test(found_by_fingerprint_must_be_that_build),
        cmocka_unit_test(tampered_artifacts_are_rejected),
        cmocka_unit_test(bindings_must_match_the_artifact_abi),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
