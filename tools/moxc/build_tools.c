/* build_tools.c - finds the compilers moxc drives (nvcc, the host C
 * compiler, cuobjdump), asks them their versions (part of the fingerprint)
 * and fixes their command lines: the numerics flags that make CPU and GPU
 * results agree, the -gencode list, include dirs and defines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

char *moxc_find_nvcc(const char *explicit_path)
{
    if (explicit_path)
        return moxc_find_program(explicit_path);
    const char *cuda_home = getenv("CUDA_HOME");
    if (cuda_home && *cuda_home) {
        char *path = moxc_path_join(cuda_home, "bin/nvcc");
        char *found = path ? moxc_find_program(path) : NULL;
        free(path);
        if (found)
            return found;
    }
    char *found = moxc_find_program("/usr/local/cuda/bin/nvcc");
    return found ? found : moxc_find_program("nvcc");
}

char *moxc_find_cuobjdump(const char *nvcc)
{
    if (nvcc) {
        const char *slash = strrchr(nvcc, '/');
        moxc_buf b = {0};
        moxc_buf_write(&b, nvcc, (size_t)(slash - nvcc + 1));
        moxc_buf_put(&b, "cuobjdump");
        char *candidate = moxc_buf_finish(&b);
        char *found = candidate ? moxc_find_program(candidate) : NULL;
        free(candidate);
        if (found)
            return found;
    }
    return moxc_find_program("cuobjdump");
}

const char *moxc_cc_name(const moxc_options *o)
{
    if (o->cc)
        return o->cc;
    const char *env = getenv("CC");
    if (env && *env)
        return env;
    /* clang vectorizes the work-group functions' loops over 32-bit
     * thread indices, which GCC 12 does not (docs/moxc.md). */
    char *clang = moxc_find_program("clang");
    free(clang);
    return clang ? "clang" : "cc";
}

/* `tool --version` output, or NULL (message to diag) when it cannot run. */
static char *tool_version(const char *path, const char *what, FILE *diag)
{
    const char *argv[] = {path, "--version", NULL};
    moxc_proc proc;
    if (!moxc_run(argv, &proc)) {
        fprintf(diag, "moxc: out of memory running %s\n", what);
        return NULL;
    }
    if (!proc.started || proc.exit_code != 0) {
        if (!proc.started)
            fprintf(diag, "moxc: cannot run %s (%s): %s\n", what, path, strerror(proc.errno_value));
        else
            fprintf(diag, "moxc: %s --version failed (%s):\n%s", what, path, proc.output);
        moxc_proc_free(&proc);
        return NULL;
    }
    return proc.output;
}

bool moxc_toolchain_find(const moxc_options *o, moxc_toolchain *tc, FILE *diag)
{
    *tc = (moxc_toolchain){0};
    const char *cc = moxc_cc_name(o);
    tc->cc = moxc_find_program(cc);
    if (!tc->cc) {
        fprintf(diag, "moxc: C compiler '%s' not found (set --cc or CC; see moxc doctor)\n", cc);
        return false;
    }
    tc->cc_version = tool_version(tc->cc, "the C compiler", diag);
    if (!tc->cc_version)
        goto fail;
    if (o->no_cuda)
        return true;
    tc->nvcc = moxc_find_nvcc(o->nvcc);
    if (!tc->nvcc) {
        if (o->nvcc) {
            fprintf(diag, "moxc: nvcc '%s' not found\n", o->nvcc);
            goto fail;
        }
        fprintf(diag, "moxc: nvcc not found; building for the CPU only (see moxc doctor)\n");
        return true;
    }
    tc->nvcc_version = tool_version(tc->nvcc, "nvcc", diag);
    if (!tc->nvcc_version)
        goto fail;
    return true;
fail:
    moxc_toolchain_free(tc);
    return false;
}

void moxc_toolchain_free(moxc_toolchain *tc)
{
    free(tc->cc);
    free(tc->cc_version);
    free(tc->nvcc);
    free(tc->nvcc_version);
    *tc = (moxc_toolchain){0};
}

char *moxc_version_line(const char *text, const char *prefer)
{
    if (!text)
        return strdup("");
    const char *best = NULL;
    size_t best_len = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
            --len;
        bool preferred = prefer && len && memmem(line, len, prefer, strlen(prefer)) != NULL;
        if (len && (!best || preferred)) {
            best = line;
            best_len = len;
            if (preferred)
                break;
        }
        line += end ? (size_t)(end - line) + 1 : strlen(line);
    }
    char *out = malloc(best_len + 1);
    if (out) {
        if (best_len)
            memcpy(out, best, best_len);
        out[best_len] = '\0';
    }
    return out;
}
