/* cache.c - the content-addressed artifact cache: <out-dir>/<fingerprint>/
 * is reused only when its manifest checks out and every file still has its
 * recorded hash; otherwise it is rebuilt in a staging directory
 * <out-dir>/.build-<pid>-<n> and published with one rename(). A flock() on
 * <out-dir>/.lock serialises builds, so concurrent moxc runs of the same
 * module wait and then find the artifact cached. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "manifest.h"

static const char stage_prefix[] = ".build-";

static bool fail_why(char *why, size_t size, const char *text)
{
    snprintf(why, size, "%s", text);
    return false;
}

bool moxc_cache_valid(const moxc_plan *plan, const char *dir, char *why, size_t why_size)
{
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    if (!mox_manifest_load(dir, &m, &err))
        return fail_why(why, why_size, err.message);
    bool ok = false;
    if (strcmp(m->fingerprint, plan->fingerprint) != 0) {
        fail_why(why, why_size, "its manifest records another fingerprint");
        goto done;
    }
    if (strcmp(m->module, plan->name) != 0 || strcmp(m->abi_sha256, plan->abi_sha256) != 0) {
        fail_why(why, why_size, "its manifest describes another module or ABI");
        goto done;
    }
    for (int f = 0; f < MOX_FILE_COUNT_; ++f) {
        bool wanted = f != MOX_FILE_FATBIN || plan->tc.nvcc != NULL;
        if (m->files[f].present != wanted) {
            snprintf(why, why_size, "file %s is %s", mox_artifact_file_key((mox_artifact_file)f),
                     wanted ? "missing from the manifest" : "unexpected");
            goto done;
        }
    }
    if (!mox_manifest_verify_all(m, dir, &err)) {
        fail_why(why, why_size, err.message);
        goto done;
    }
    ok = true;
done:
    mox_manifest_free(m);
    return ok;
}

void moxc_cache_clean_stages(const char *out_dir, FILE *diag)
{
    DIR *dir = opendir(out_dir);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, stage_prefix, sizeof stage_prefix - 1) != 0)
            continue;
        const char *p = e->d_name + sizeof stage_prefix - 1;
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p || *end != '-' || pid <= 0 || end[1] < '0' || end[1] > '9')
            continue;
        strtoul(end + 1, &end, 10);
        if (*end != '\0')
            continue;
        /* A live process (even one we may not signal: EPERM) keeps its stage. */
        if ((pid_t)pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char *path = moxc_path_join(out_dir, e->d_name);
        if (path && moxc_remove_tree(path))
            fprintf(diag, "moxc: removed abandoned build stage %s\n", path);
        free(path);
    }
    closedir(dir);
}

static int lock_out_dir(const char *out_dir, FILE *diag)
{
    char *path = moxc_path_join(out_dir, ".lock");
    int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd < 0) {
        fprintf(diag, "moxc: cannot open the build lock %s: %s\n", path ? path : out_dir, strerror(errno));
        free(path);
        return -1;
    }
    free(path);
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    if (errno != EWOULDBLOCK) {
        fprintf(diag, "moxc: cannot lock %s: %s\n", out_dir, strerror(errno));
        close(fd);
        return -1;
    }
    fprintf(diag, "moxc: waiting for the build lock\n");
    fflush(diag);
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        fprintf(diag, "moxc: cannot lock %s: %s\n", out_dir, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static char *make_stage(const char *out_dir, FILE *diag)
{
    static unsigned counter;
    for (;;) {
        moxc_buf b = {0};
        moxc_buf_printf(&b, "%s/%s%ld-%u", out_dir, stage_prefix, (long)getpid(), counter++);
        char *path = moxc_buf_finish(&b);
        if (!path) {
            fprintf(diag, "moxc: out of memory\n");
            return NULL;
        }
        if (mkdir(path, 0755) == 0)
            return path;
        int saved = errno;
        if (saved != EEXIST) {
            fprintf(diag, "moxc: cannot create %s: %s\n", path, strerror(saved));
            free(path);
            return NULL;
        }
        free(path);
    }
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Builds into a fresh stage and publishes it; under the lock. */
static bool build_and_publish(const moxc_plan *plan, const char *out_dir, const char *artifact, FILE *info,
                              FILE *diag)
{
    char *stage = make_stage(out_dir, diag);
    if (!stage)
        return false;
    bool ok = moxc_build_stage(plan, stage, artifact, diag);
    if (ok && rename(stage, artifact) != 0) {
        int saved = errno;
        char why[600];
        /* Another builder that did not honour the lock got there first:
         * keep its artifact if it is good. */
        if ((saved == EEXIST || saved == ENOTEMPTY) && moxc_cache_valid(plan, artifact, why, sizeof why)) {
            moxc_remove_tree(stage);
            fprintf(info, "Cached mox artifact %s\n", artifact);
            free(stage);
            return true;
        }
        fprintf(diag, "moxc: cannot publish %s: %s\n", artifact, strerror(saved));
        ok = false;
    } else if (ok) {
        fprintf(info, "Built mox artifact %s\n", artifact);
    }
    if (!ok)
        moxc_remove_tree(stage);
    free(stage);
    return ok;
}

char *moxc_cache_obtain(const moxc_plan *plan, const char *out_dir, FILE *info, FILE *diag)
{
    if (!moxc_mkdir_p(out_dir)) {
        fprintf(diag, "moxc: cannot create %s: %s\n", out_dir, strerror(errno));
        return NULL;
    }
    char *artifact = moxc_path_join(out_dir, plan->fingerprint);
    if (!artifact) {
        fprintf(diag, "moxc: out of memory\n");
        return NULL;
    }
    int lock = lock_out_dir(out_dir, diag);
    if (lock < 0) {
        free(artifact);
        return NULL;
    }
    moxc_cache_clean_stages(out_dir, diag);
    bool ok = false;
    if (exists(artifact)) {
        char why[600];
        if (moxc_cache_valid(plan, artifact, why, sizeof why)) {
            fprintf(info, "Cached mox artifact %s\n", artifact);
            ok = true;
        } else {
            fprintf(diag, "moxc: rebuilding %s: %s\n", artifact, why);
            if (!moxc_remove_tree(artifact))
                fprintf(diag, "moxc: cannot remove %s: %s\n", artifact, strerror(errno));
        }
    }
    if (!ok)
        ok = build_and_publish(plan, out_dir, artifact, info, diag);
    fflush(info);
    close(lock);
    if (!ok) {
        free(artifact);
        return NULL;
    }
    return artifact;
}
