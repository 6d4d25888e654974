/* artifact_copy.c - copies and damages kernel artifacts for the vec-add
 * example's loader checks. Uses the artifact layer (manifest.h) to rewrite a
 * manifest consistently, and jansson for the one edit that layer refuses to
 * produce (an unknown ABI version). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi.h"
#include "artifact_copy.h"
#include "manifest.h"
#include "sha256.h"

static int join(char *out, size_t cap, const char *dir, const char *name)
{
    int len = snprintf(out, cap, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= cap) {
        fprintf(stderr, "artifact copy: path too long: %s/%s\n", dir, name);
        return -1;
    }
    return 0;
}

static int read_file(const char *path, char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "artifact copy: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap)
            break;
        char *bigger = realloc(buf, cap * 2 + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        fprintf(stderr, "artifact copy: cannot read %s\n", path);
        return -1;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return 0;
}

static int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "artifact copy: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t put = fwrite(data, 1, size, f);
    int closed = fclose(f);
    if (put != size || closed != 0) {
        fprintf(stderr, "artifact copy: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int artifact_copy(const char *src, char *dst, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    int len = snprintf(dst, cap, "%s/mox-vec-add-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (len < 0 || (size_t)len >= cap || !mkdtemp(dst)) {
        fprintf(stderr, "artifact copy: cannot create a temporary directory\n");
        return -1;
    }
    DIR *d = opendir(src);
    if (!d) {
        fprintf(stderr, "artifact copy: cannot open %s: %s\n", src, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        char from[4096], to[4096];
        struct stat st;
        if (join(from, sizeof from, src, e->d_name) != 0 || stat(from, &st) != 0) {
            rc = -1;
            break;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        char *data = NULL;
        size_t size = 0;
        rc = join(to, sizeof to, dst, e->d_name);
        if (rc == 0)
            rc = read_file(from, &data, &size);
        if (rc == 0)
            rc = write_file(to, data, size);
        free(data);
    }
    closedir(d);
    return rc;
}

void artifact_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char path[4096];
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                join(path, sizeof path, dir, e->d_name) == 0)
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static mox_manifest *load_manifest(const char *dir)
{
    mox_manifest *m = NULL;
    mox_artifact_error err;
    if (!mox_manifest_load(dir, &m, &err)) {
        fprintf(stderr, "artifact copy: %s\n", err.message);
        return NULL;
    }
    return m;
}

int artifact_backend_file(const char *dir, int cuda, char *name, size_t cap)
{
    mox_manifest *m = load_manifest(dir);
    if (!m)
        return -1;
    const mox_manifest_file *f = &m->files[cuda ? MOX_FILE_FATBIN : MOX_FILE_CPU_SO];
    int rc = -1;
    if (f->present && strlen(f->path) < cap) {
        strcpy(name, f->path);
        rc = 0;
    }
    mox_manifest_free(m);
    return rc;
}

int artifact_flip_byte(const char *dir, const char *name)
{
    char path[4096];
    char *data = NULL;
    size_t size = 0;
    if (join(path, sizeof path, dir, name) != 0 || read_file(path, &data, &size) != 0)
        return -1;
    int rc = -1;
    if (size > 0) {
        data[size / 2] = (char)~data[size / 2];
        rc = write_file(path, data, size);
    }
    free(data);
    return rc;
}

int artifact_set_abi_version(const char *dir, long version)
{
    char path[4096];
    if (join(path, sizeof path, dir, "manifest.json") != 0)
        return -1;
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    json_t *abi = root ? json_object_get(root, "abi") : NULL;
    int rc = -1;
    if (json_is_object(abi) && json_object_set_new(abi, "version", json_integer(version)) == 0 &&
        json_dump_file(root, path, JSON_INDENT(2)) == 0)
        rc = 0;
    else
        fprintf(stderr, "artifact copy: cannot rewrite %s\n", path);
    json_decref(root);
    return rc;
}

int artifact_require_block(const char *dir, const char *kernel, uint32_t x, uint32_t y, uint32_t z)
{
    mox_manifest *m = load_manifest(dir);
    if (!m)
        return -1;
    int rc = -1;
    char *abi_text = NULL, *manifest_text = NULL;
    mox_abi_kernel *k = NULL;
    for (size_t i = 0; i < m->abi->kernel_count; i++)
        if (strcmp(m->abi->kernels[i].name, kernel) == 0)
            k = &m->abi->kernels[i];
    if (!k) {
        fprintf(stderr, "artifact copy: no kernel %s in %s\n", kernel, dir);
        goto done;
    }
    k->has_required_block = true;
    k->required_block[0] = x;
    k->required_block[1] = y;
    k->required_block[2] = z;
    char path[4096];
    mox_manifest_file *abi_file = &m->files[MOX_FILE_ABI_JSON];
    if (!(abi_text = mox_abi_to_json(m->abi)) ||
        !mox_sha256_hex(abi_text, strlen(abi_text), m->abi_sha256) ||
        join(path, sizeof path, dir, abi_file->path) != 0 ||
        write_file(path, abi_text, strlen(abi_text)) != 0)
        goto done;
    memcpy(abi_file->sha256, m->abi_sha256, sizeof abi_file->sha256);
    if (!(manifest_text = mox_manifest_to_json(m)) ||
        join(path, sizeof path, dir, "manifest.json") != 0 ||
        write_file(path, manifest_text, strlen(manifest_text)) != 0)
        goto done;
    rc = 0;
done:
    free(abi_text);
    free(manifest_text);
    mox_manifest_free(m);
    return rc;
}
