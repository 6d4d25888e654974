/* deploy.c - `moxc deploy --to DIR ARTIFACT...`: copies verified artifacts
 * to where a deployed program finds them (DIR/<fingerprint>/, DIR being
 * <program dir>/mox-artifacts or <prefix>/lib/mox-artifacts; docs/moxc.md).
 * An ARTIFACT is an artifact directory or the NAME.artifact file that
 * `moxc build --bindings-dir` writes, naming one. Each copy is verified
 * first (manifest, every file's SHA-256), built in a staging folder and
 * published with one rename(), like the cache. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build.h"
#include "manifest.h"

/* The artifact directory an argument names (malloc'd), or NULL with a
 * message. A regular file is a record: its first line is the directory. */
static char *artifact_of(const char *arg, FILE *diag)
{
    struct stat st;
    if (stat(arg, &st) != 0) {
        fprintf(diag, "moxc: cannot deploy %s: %s\n", arg, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode))
        return moxc_abs_path(arg);
    char *text = NULL;
    size_t size = 0;
    if (!moxc_read_file(arg, &text, &size)) {
        fprintf(diag, "moxc: cannot deploy %s: %s\n", arg, strerror(errno));
        return NULL;
    }
    text[strcspn(text, "\n")] = '\0';
    char *dir = *text ? strdup(text) : NULL;
    if (!*text)
        fprintf(diag, "moxc: cannot deploy %s: the file names no artifact directory\n", arg);
    free(text);
    return dir;
}

/* Loads and fully verifies the artifact in `dir`; NULL with a message. */
static mox_manifest *verified(const char *dir, const char *arg, FILE *diag)
{
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    if (!mox_manifest_load(dir, &m, &err) || !mox_manifest_verify_all(m, dir, &err)) {
        fprintf(diag, "moxc: cannot deploy %s: %s is not a valid mox artifact: %s\n", arg, dir, err.message);
        mox_manifest_free(m);
        return NULL;
    }
    return m;
}

static bool copy_one(const char *from_dir, const char *to_dir, const char *name, FILE *diag)
{
    char *from = moxc_path_join(from_dir, name), *to = moxc_path_join(to_dir, name);
    char *data = NULL;
    size_t size = 0;
    bool ok = from && to && moxc_read_file(from, &data, &size) && moxc_write_file(to, data, size);
    if (!ok)
        fprintf(diag, "moxc: cannot copy %s to %s: %s\n", from ? from : name, to_dir, strerror(errno));
    free(data);
    free(from);
    free(to);
    return ok;
}

/* Copies the manifest and every file it lists into a fresh stage, then
 * renames the stage to `target`. */
static bool copy_artifact(const mox_manifest *m, const char *from, const char *dest, const char *target,
                          FILE *diag)
{
    static unsigned counter;
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s/.deploy-%ld-%u", dest, (long)getpid(), counter++);
    char *stage = moxc_buf_finish(&b);
    if (!stage || !moxc_mkdir_p(stage)) {
        fprintf(diag, "moxc: cannot create a staging folder in %s: %s\n", dest, strerror(errno));
        free(stage);
        return false;
    }
    bool ok = copy_one(from, stage, "manifest.json", diag);
    for (int f = 0; f < MOX_FILE_COUNT_ && ok; ++f)
        if (m->files[f].present)
            ok = copy_one(from, stage, m->files[f].path, diag);
    if (ok && rename(stage, target) != 0) {
        fprintf(diag, "moxc: cannot rename %s to %s: %s\n", stage, target, strerror(errno));
        ok = false;
    }
    if (!ok)
        moxc_remove_tree(stage);
    free(stage);
    return ok;
}

static bool deploy_one(const char *arg, const char *dest, FILE *info, FILE *diag)
{
    char *from = artifact_of(arg, diag);
    mox_manifest *m = from ? verified(from, arg, diag) : NULL;
    char *target = m ? moxc_path_join(dest, m->fingerprint) : NULL;
    bool ok = false;
    if (target) {
        mox_manifest *there = NULL;
        mox_artifact_error err = {0};
        if (mox_manifest_load(target, &there, &err) && strcmp(there->fingerprint, m->fingerprint) == 0 &&
            mox_manifest_verify_all(there, target, &err)) {
            fprintf(info, "Deployed mox artifact %s (already there)\n", target);
            ok = true;
        } else {
            struct stat st;
            if (lstat(target, &st) == 0) {
                fprintf(diag, "moxc: replacing %s: %s\n", target, err.message);
                moxc_remove_tree(target);
            }
            ok = copy_artifact(m, from, dest, target, diag);
            if (ok)
                fprintf(info, "Deployed mox artifact %s (module %s, from %s)\n", target, m->module, from);
        }
        mox_manifest_free(there);
    }
    free(target);
    mox_manifest_free(m);
    free(from);
    return ok;
}

int moxc_cmd_deploy(const moxc_options *o)
{
    char *dest = moxc_abs_path(o->deploy_to);
    if (!dest || !moxc_mkdir_p(dest)) {
        fprintf(stderr, "moxc: cannot create %s: %s\n", o->deploy_to, strerror(errno));
        free(dest);
        return 1;
    }
    bool ok = true;
    for (size_t i = 0; i < o->sources.count; ++i)
        ok = deploy_one(o->sources.items[i], dest, stdout, stderr) && ok;
    free(dest);
    return ok ? 0 : 1;
}
