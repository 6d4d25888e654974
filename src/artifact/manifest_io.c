/* manifest_io.c - reading an artifact directory: manifest.json, and files
 * whose bytes are checked against the manifest hash before anyone uses them
 * (the caller gets the very bytes that were hashed, never a path to reopen). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact_internal.h"
#include "manifest.h"
#include "sha256.h"

/* Larger than any artifact file mox writes; bounds memory on a bad path. */
#define MOX__MAX_FILE_SIZE ((size_t)1 << 31)

/* Reads a whole regular file and appends a NUL. */
static bool read_all(const char *path, char **data, size_t *size, mox_artifact_error *err)
{
    *data = NULL;
    *size = 0;
    /* O_NONBLOCK: opening a FIFO (or a device) put in an artifact's place
     * must not block the preparation worker; such files are refused below.
     * Regular files ignore the flag. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return mox__fail(err, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return mox__fail(err, "%s is not a regular file", path);
    }
    if ((uint64_t)st.st_size > MOX__MAX_FILE_SIZE) {
        close(fd);
        return mox__fail(err, "%s is too large (%lld bytes)", path, (long long)st.st_size);
    }
    /* Read until EOF rather than trusting st_size: the file may change. */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return mox__fail(err, "out of memory reading %s", path);
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > MOX__MAX_FILE_SIZE) {
                free(buf);
                close(fd);
                return mox__fail(err, "%s is too large", path);
            }
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                close(fd);
                return mox__fail(err, "out of memory reading %s", path);
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return mox__fail(err, "cannot read %s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return true;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *path = malloc(a + b + 2);
    if (path) {
        memcpy(path, dir, a);
        path[a] = '/';
        memcpy(path + a + 1, name, b + 1);
    }
    return path;
}

bool mox_manifest_load(const char *dir, mox_manifest **out, mox_artifact_error *err)
{
    *out = NULL;
    if (!dir || !*dir)
        return mox__fail(err, "no artifact directory");
    char *path = join(dir, "manifest.json");
    if (!path)
        return mox__fail(err, "out of memory");
    char *text;
    size_t size;
    bool ok = read_all(path, &text, &size, err);
    if (ok) {
        ok = mox_manifest_parse(text, size, out, err);
        if (!ok) {
            /* Say which manifest: the parse error alone does not. */
            char inner[sizeof err->message];
            if (err) {
                memcpy(inner, err->message, sizeof inner);
                mox__fail(err, "%s: %s", path, inner);
            }
        }
        free(text);
    }
    free(path);
    return ok;
}

static bool read_verified(const mox_manifest *m, const char *dir, mox_artifact_file f,
                          char **data, size_t *size, mox_artifact_error *err)
{
    *data = NULL;
    *size = 0;
    if (!m || !dir)
        return mox__fail(err, "no manifest or artifact directory");
    if ((unsigned)f >= MOX_FILE_COUNT_)
        return mox__fail(err, "unknown artifact file role %d", (int)f);
    const mox_manifest_file *file = &m->files[f];
    if (!file->present || !file->path)
        return mox__fail(err, "the artifact in %s has no %s file", dir, mox_artifact_file_key(f));
    char *path = join(dir, file->path);
    if (!path)
        return mox__fail(err, "out of memory");
    char hex[MOX_SHA256_HEX_LEN + 1];
    bool ok = read_all(path, data, size, err);
    if (ok && !mox_sha256_hex(*data, *size, hex))
        ok = mox__fail(err, "SHA-256 failed in libcrypto");
    else if (ok && strcmp(hex, file->sha256) != 0)
        ok = mox__fail(err, "%s does not match the manifest hash (%s)", file->path, path);
    if (!ok) {
        free(*data);
        *data = NULL;
        *size = 0;
    }
    free(path);
    return ok;
}

bool mox_manifest_read_file(const mox_manifest *manifest, const char *dir, mox_artifact_file f,
                            void **data, size_t *size, mox_artifact_error *err)
{
    char *bytes;
    bool ok = read_verified(manifest, dir, f, &bytes, size, err);
    *data = bytes;
    return ok;
}

bool mox_manifest_verify_all(const mox_manifest *manifest, const char *dir, mox_artifact_error *err)
{
    for (int f = 0; f < MOX_FILE_COUNT_; f++) {
        if (!manifest || !manifest->files[f].present)
            continue;
        char *bytes;
        size_t size;
        if (!read_verified(manifest, dir, (mox_artifact_file)f, &bytes, &size, err))
            return false;
        free(bytes);
    }
    return manifest ? true : mox__fail(err, "no manifest");
}
