/* manifest_io.c - reading an artifact directory: manifest.json, and files
 * whose bytes are checked against the manifest hash before anyone uses them
 * (the caller gets the very bytes that were hashed, never a path to reopen). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact_internal.h"
#include "core/alloc.h"
#include "manifest.h"
#include "sha256.h"

/* Each file's size limit: far above what moxc writes for any real module,
 * far below what would hurt to read (docs/abi.md "Size limits"). */
static const size_t file_limits[MOX_FILE_COUNT_] = {
    [MOX_FILE_ABI_JSON] = MOX_MANIFEST_MAX_SIZE,
    [MOX_FILE_FATBIN] = (size_t)1 << 30,
    [MOX_FILE_CPU_SO] = (size_t)256 << 20,
    [MOX_FILE_CUDA_TU] = (size_t)64 << 20,
    [MOX_FILE_CPU_TU] = (size_t)64 << 20,
    [MOX_FILE_BINDINGS_H] = (size_t)64 << 20,
    [MOX_FILE_BINDINGS_C] = (size_t)64 << 20,
};

size_t mox_artifact_file_limit(mox_artifact_file f)
{
    return (unsigned)f < MOX_FILE_COUNT_ ? file_limits[f] : 0;
}

static const char *file_type(mode_t mode)
{
    return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
           : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device" : "special";
}

/* Opens a regular file that is no symbolic link, without blocking (a FIFO
 * would block open() until a writer came), and checks its size before a
 * byte is read. -1 after filling err. */
static int open_checked(const char *path, size_t limit, struct stat *st, mox_artifact_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        struct stat what; /* a link (ELOOP) or a socket (ENXIO) cannot be opened */
        if (lstat(path, &what) == 0 && !S_ISREG(what.st_mode))
            mox__fail(err, "%s is not a regular file (it is %s)", path,
                      S_ISLNK(what.st_mode) ? "a symbolic link" : file_type(what.st_mode));
        else
            mox__fail(err, "cannot open %s: %s", path, strerror(e));
        return -1;
    }
    if (fstat(fd, st) != 0)
        mox__fail(err, "cannot stat %s: %s", path, strerror(errno));
    else if (!S_ISREG(st->st_mode))
        mox__fail(err, "%s is not a regular file (it is %s)", path, file_type(st->st_mode));
    else if ((uint64_t)st->st_size > limit)
        mox__fail(err, "%s is %lld bytes, more than its limit of %zu bytes", path,
                  (long long)st->st_size, limit);
    else
        return fd;
    close(fd);
    return -1;
}

/* Reads a whole regular file of at most `limit` bytes and appends a NUL. */
static bool read_all(const char *path, size_t limit, char **data, size_t *size,
                     mox_artifact_error *err)
{
    *data = NULL;
    *size = 0;
    struct stat st = {0};
    int fd = open_checked(path, limit, &st, err);
    if (fd < 0)
        return false;
    /* Read until EOF rather than trusting st_size (the file may change),
     * but never past the limit. */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = mox__malloc(cap);
    bool ok = buf || mox__fail_oom(err, "out of memory reading %s", path);
    while (ok) {
        if (len + 1 >= cap) {
            size_t bigger_cap = cap > limit / 2 ? limit + 2 : cap * 2;
            char *bigger = len > limit ? NULL : mox__realloc(buf, bigger_cap);
            if (!bigger) {
                ok = len > limit ? mox__fail(err, "%s grew past its limit of %zu bytes while "
                                             "being read", path, limit)
                                 : mox__fail_oom(err, "out of memory reading %s", path);
                break;
            }
            buf = bigger;
            cap = bigger_cap;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            ok = mox__fail(err, "cannot read %s: %s", path, strerror(errno));
        else if (n == 0)
            break;
        else
            len += (size_t)n;
    }
    close(fd);
    if (!ok) {
        mox__free(buf);
        return false;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return true;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *path = mox__malloc(a + b + 2);
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
        return mox__fail_oom(err, "out of memory reading the manifest of %s", dir);
    char *text;
    size_t size;
    bool ok = read_all(path, MOX_MANIFEST_MAX_SIZE, &text, &size, err);
    if (ok) {
        ok = mox_manifest_parse(text, size, out, err);
        if (!ok)
            mox__error_prefix(err, path); /* the parse error alone does not say which */
        mox__free(text);
    }
    mox__free(path);
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
        return mox__fail_oom(err, "out of memory reading %s", file->path);
    char hex[MOX_SHA256_HEX_LEN + 1];
    bool ok = read_all(path, file_limits[f], data, size, err);
    if (ok && !mox_sha256_hex(*data, *size, hex))
        ok = mox__fail_oom(err, MOX_SHA256_FAILED " hashing %s", path);
    else if (ok && strcmp(hex, file->sha256) != 0)
        ok = mox__fail(err, "%s does not match the manifest hash (%s)", file->path, path);
    if (!ok) {
        mox__free(*data);
        *data = NULL;
        *size = 0;
    }
    mox__free(path);
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
        mox__free(bytes);
    }
    return manifest ? true : mox__fail(err, "no manifest");
}
