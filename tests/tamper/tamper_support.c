/* tamper_support.c - artifact copies and checks of tamper_support.h. */
#include "tamper_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "artifact/manifest.h"
#include "artifact/sha256.h"
#include "conf.h"
#include "conf2.h"

static char root[256];

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
}

void tamper_init(void)
{
    snprintf(root, sizeof root, "/tmp/mox-tamper-%d", (int)getpid());
    run("rm -rf '%s' && mkdir -p '%s'", root, root);
}

void tamper_cleanup(void) { run("rm -rf '%s'", root); }

const char *tamper_copy(const char *name)
{
    static char dirs[4][512];
    static unsigned next;
    char *dir = dirs[next++ % 4];
    snprintf(dir, sizeof dirs[0], "%s/%s", root, name);
    run("rm -rf '%s' && cp -r '%s' '%s'", dir, conf_module.artifact_dir, dir);
    return dir;
}

const char *tamper_other_artifact(void) { return conf2_module.artifact_dir; }

const char *tamper_path(const char *dir, const char *file)
{
    static char paths[4][1024]; /* a few may be in use at once */
    static unsigned next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", dir, file);
    return path;
}

void *tamper_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    *size = (size_t)n;
    return p;
}

void tamper_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s", path);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

void tamper_rehash(const char *dir)
{
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    if (!mox_manifest_load(conf_module.artifact_dir, &m, &err))
        fail_msg("the original manifest does not load: %s", err.message);
    for (int f = 0; f < MOX_FILE_COUNT_; f++) {
        if (!m->files[f].present)
            continue;
        size_t size;
        void *data = tamper_read(tamper_path(dir, m->files[f].path), &size);
        assert_true(mox_sha256_hex(data, size, m->files[f].sha256));
        free(data);
    }
    char *json = mox_manifest_to_json(m);
    assert_non_null(json);
    tamper_write(tamper_path(dir, "manifest.json"), json, strlen(json));
    free(json);
    mox_manifest_free(m);
}

void tamper_expect(const char *dir, mox_status code, const char *text)
{
    setenv("MOX_ARTIFACT_CONF", dir, 1);
    mox_device *dev = NULL;
    assert_int_equal(mox_device_open(&dev), MOX_OK);
    alarm(20); /* never a hang: SIGALRM ends the test */
    mox_status st = mox_module_prepare(dev, &conf_module);
    alarm(0);
    const char *msg = st == MOX_OK ? "" : mox_error_last_message();
    if (st != code || !strstr(msg, text))
        fail_msg("%s: got %s \"%s\", want %s \"%s\"", dir, mox_status_name(st), msg,
                 mox_status_name(code), text);
    mox_device_release(dev);
    unsetenv("MOX_ARTIFACT_CONF");
}
