/* build_util.c - what moxc's build side needs from the system: string
 * vectors, running a program without a shell and capturing its output, and
 * file helpers (atomic writes, recursive removal, paths, hashes). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build.h"
#include "sha256.h"

extern char **environ;

bool moxc_strv_push(moxc_strv *v, const char *text)
{
    char *copy = strdup(text);
    char **items = copy ? realloc(v->items, (v->count + 1) * sizeof *items) : NULL;
    if (!items) {
        free(copy);
        return false;
    }
    items[v->count++] = copy;
    v->items = items;
    return true;
}

bool moxc_strv_pushf(moxc_strv *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    char *text = malloc((size_t)n + 1);
    if (!text)
        return false;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    bool ok = moxc_strv_push(v, text);
    free(text);
    return ok;
}

void moxc_strv_free(moxc_strv *v)
{
    for (size_t i = 0; i < v->count; ++i)
        free(v->items[i]);
    free(v->items);
    v->items = NULL;
    v->count = 0;
}

void moxc_options_free(moxc_options *o)
{
    moxc_strv_free(&o->includes);
    moxc_strv_free(&o->defines);
    moxc_strv_free(&o->archs);
    moxc_strv_free(&o->cc_flags);
    moxc_strv_free(&o->sources);
}

/* ---- processes ---- */

bool moxc_run(const char *const *argv, moxc_proc *proc)
{
    *proc = (moxc_proc){.exit_code = -1};
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return false;
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    pid_t pid;
    /* posix_spawn takes char *const[]; it does not modify the strings. */
    char *const *args = (char *const *)(uintptr_t)argv;
    int rc = strchr(argv[0], '/') ? posix_spawn(&pid, argv[0], &actions, NULL, args, environ)
                                   : posix_spawnp(&pid, argv[0], &actions, NULL, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        proc->errno_value = rc;
        proc->output = strdup("");
        return proc->output != NULL;
    }
    proc->started = true;
    moxc_buf out = {0};
    char chunk[8192];
    for (;;) {
        ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n > 0)
            moxc_buf_write(&out, chunk, (size_t)n);
        else if (n == 0 || errno != EINTR)
            break;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status))
        proc->exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        proc->signal = WTERMSIG(status);
    proc->output_len = out.len;
    proc->output = moxc_buf_finish(&out);
    return proc->output != NULL;
}

void moxc_proc_free(moxc_proc *proc)
{
    free(proc->output);
    proc->output = NULL;
}

static bool is_executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Absolute without resolving symlinks: a compiler reached through a link
 * (ccache's masquerade directory, cc -> gcc-12) must be run by that name. */
static char *absolute(const char *path)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        return strdup(path);
    return getcwd(cwd, sizeof cwd) ? moxc_path_join(cwd, path) : NULL;
}

char *moxc_find_program(const char *name)
{
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/'))
        return is_executable_file(name) ? absolute(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        moxc_buf b = {0};
        if (len == 0)
            moxc_buf_put(&b, ".");
        else
            moxc_buf_write(&b, path, len);
        moxc_buf_printf(&b, "/%s", name);
        char *candidate = moxc_buf_finish(&b);
        if (candidate && is_executable_file(candidate)) {
            char *abs = absolute(candidate);
            free(candidate);
            return abs;
        }
        free(candidate);
        path += len;
        if (*path == ':')
            ++path;
    }
    return NULL;
}

/* ---- files ---- */

bool moxc_read_file(const char *path, char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    moxc_buf b = {0};
    char chunk[65536];
    bool ok = true;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n > 0) {
            moxc_buf_write(&b, chunk, (size_t)n);
        } else if (n == 0) {
            break;
        } else if (errno != EINTR) {
            ok = false;
            break;
        }
    }
    close(fd);
    size_t len = b.len;
    char *text = moxc_buf_finish(&b);
    if (!ok || !text) {
        free(text);
        return false;
    }
    *data = text;
    *size = len;
    return true;
}

static bool write_all(int fd, const void *data, size_t size)
{
    const char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        size -= (size_t)n;
    }
    return true;
}

bool moxc_write_file(const char *path, const void *data, size_t size)
{
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s.tmp-%ld", path, (long)getpid());
    char *tmp = moxc_buf_finish(&b);
    if (!tmp)
        return false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && write_all(fd, data, size);
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok;
}

bool moxc_write_if_changed(const char *path, const void *data, size_t size)
{
    char *old = NULL;
    size_t old_size = 0;
    if (moxc_read_file(path, &old, &old_size) && old_size == size && memcmp(old, data, size) == 0) {
        free(old);
        return true;
    }
    free(old);
    return moxc_write_file(path, data, size);
}

bool moxc_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0;
    DIR *dir = opendir(path);
    if (!dir)
        return false;
    bool ok = true;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = moxc_path_join(path, e->d_name);
        ok = child && moxc_remove_tree(child) && ok;
        free(child);
    }
    closedir(dir);
    return rmdir(path) == 0 && ok;
}

bool moxc_mkdir_p(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return false;
    bool ok = true;
    for (char *p = copy + 1; ok; ++p) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, 0755) != 0 && errno != EEXIST)
            ok = false;
        *p = saved;
        if (saved == '\0')
            break;
    }
    struct stat st;
    ok = ok && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    free(copy);
    return ok;
}

char *moxc_path_join(const char *dir, const char *name)
{
    moxc_buf b = {0};
    size_t len = strlen(dir);
    moxc_buf_printf(&b, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", name);
    return moxc_buf_finish(&b);
}

char *moxc_abs_path(const char *path)
{
    char *real = realpath(path, NULL);
    if (real)
        return real;
    if (path[0] == '/')
        return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    return moxc_path_join(cwd, path);
}

bool moxc_sha256_file(const char *path, char hex[65])
{
    char *data;
    size_t size;
    if (!moxc_read_file(path, &data, &size))
        return false;
    bool ok = mox_sha256_hex(data, size, hex);
    free(data);
    return ok;
}
