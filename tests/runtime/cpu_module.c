/* cpu_module.c - the CPU backend rejects wrong module code: an artifact
 * whose kernels_cpu.so is replaced (manifest rehashed, so verification
 * passes) by one of badmodule.c's variants, or by bytes that are not a
 * shared object. Each must fail preparation with its code and message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "artifact/manifest.h"
#include "artifact/sha256.h"
#include "rtk.h"

static char tmp[256];

static void *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n + 1);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return p;
}

static void spit(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

/* An artifact copy whose CPU object is `so` (bytes), hashes made right. */
static const char *artifact_with(const char *name, const void *so, size_t so_size)
{
    static char dir[400];
    char cmd[1000], path[500];
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, rtk_module.artifact_dir, dir);
    assert_int_equal(system(cmd), 0);
    mox_manifest *m = NULL;
    mox_artifact_error err;
    assert_true(mox_manifest_load(dir, &m, &err));
    snprintf(path, sizeof path, "%s/%s", dir, m->files[MOX_FILE_CPU_SO].path);
    spit(path, so, so_size);
    assert_true(mox_sha256_hex(so, so_size, m->files[MOX_FILE_CPU_SO].sha256));
    char *json = mox_manifest_to_json(m);
    assert_non_null(json);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    spit(path, json, strlen(json));
    free(json);
    mox_manifest_free(m);
    return dir;
}

static void expect_prepare(const char *dir, mox_status code, const char *text)
{
    setenv("MOX_ARTIFACT_RTK", dir, 1);
    mox_device *dev = NULL;
    assert_int_equal(mox_device_open(&dev), MOX_OK);
    mox_status st = mox_module_prepare(dev, &rtk_module);
    if (st != code || !strstr(mox_error_last_message(), text))
        fail_msg("%s: got %s '%s', want %s '%s'", dir, mox_status_name(st), mox_error_last_message(),
                 mox_status_name(code), text);
    mox_device_release(dev);
    unsetenv("MOX_ARTIFACT_RTK");
}

static void bad_cpu_code_is_rejected(void **state)
{
    (void)state;
    static const struct {
        const char *lib, *name;
        mox_status code;
        const char *text;
    } cases[] = {
        {BAD_VERSION_LIB, "version", MOX_ERR_MODULE_LOAD, "CPU interface version 100, this libmox supports 2"},
        {BAD_NO_ENTRY_LIB, "noentry", MOX_ERR_MODULE_LOAD, "has no mox_cpu_module() entry table"},
        {BAD_NAMES_LIB, "names", MOX_ERR_KERNEL_NOT_FOUND, "kernel 'axpy' is not in the CPU code"},
        {BAD_NO_FN_LIB, "nofn", MOX_ERR_MODULE_LOAD, "has no valid CPU entry points (executor 1)"},
        {BAD_EXECUTOR_LIB, "executor", MOX_ERR_MODULE_LOAD, "has no valid CPU entry points (executor 3)"},
        {BAD_COUNT_LIB, "count", MOX_ERR_MODULE_LOAD, "the CPU code has 2 kernels, the ABI 1"},
        {BAD_SHA_LIB, "sha", MOX_ERR_ABI_MISMATCH, "built for another ABI"},
        {BAD_NO_TABLE_LIB, "notable", MOX_ERR_MODULE_LOAD, "the CPU code lists 1 kernels but no kernel table"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t size;
        void *so = slurp(cases[i].lib, &size);
        expect_prepare(artifact_with(cases[i].name, so, size), cases[i].code, cases[i].text);
        free(so);
    }
    const char junk[] = "this is not an ELF shared object";
    expect_prepare(artifact_with("junk", junk, sizeof junk), MOX_ERR_MODULE_LOAD, "does not load");
    /* The good variant loads (the harness itself is sound). */
    size_t size;
    void *so = slurp(GOOD_LIB, &size);
    expect_prepare(artifact_with("good", so, size), MOX_OK, "");
    free(so);
}

/* An artifact copy in which `file` is replaced by a FIFO (nobody ever
 * writes to it) or by a link to a character device: preparation refuses it
 * at once instead of blocking the worker in open(), and releasing the
 * device afterwards returns. */
static const char *artifact_with_special(const char *name, const char *file, bool fifo)
{
    static char dir[400];
    char cmd[1000], path[500];
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, rtk_module.artifact_dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(unlink(path), 0);
    if (fifo)
        assert_int_equal(mkfifo(path, 0600), 0);
    else
        assert_int_equal(symlink("/dev/zero", path), 0);
    return dir;
}

static void special_files_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        bool fifo;
    } cases[] = {
        {"manifest.json", true}, {"kernels_cpu.so", true}, {"manifest.json", false},
        {"kernels_cpu.so", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "special%zu", i);
        expect_prepare(artifact_with_special(name, cases[i].file, cases[i].fifo), MOX_ERR_ARTIFACT,
                       "is not a regular file");
    }
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/mox-rt-cpu-module-%d", (int)getpid());
    mkdir(tmp, 0700);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_cpu_code_is_rejected),
        cmocka_unit_test(special_files_are_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
