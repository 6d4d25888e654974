/* doctor.c - `moxc doctor`: checks what building and running kernels
 * needs, one "[ok]", "[missing]" or "[broken]" (found, but `--version`
 * fails) line each with a hint, and says which mode results (CUDA, or
 * CPU-only); it also says where moxc itself and the dialect headers it uses
 * are. The C compiler, libclang and the mox headers are required; CUDA
 * parts are optional, but an nvcc that moxc build would stop at (found and
 * broken, or a --nvcc not found) fails the check as build does. The driver
 * is loaded with dlopen, as the runtime does: moxc never links against
 * CUDA. */
#include <clang-c/Index.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build.h"

static void report_state(const char *state, const char *what, const char *detail, const char *hint)
{
    printf("[%s] %s%s%s\n", state, what, detail && *detail ? ": " : "", detail ? detail : "");
    if (strcmp(state, "ok") != 0 && hint)
        printf("      hint: %s\n", hint);
}

static void report(bool ok, const char *what, const char *detail, const char *hint)
{
    report_state(ok ? "ok" : "missing", what, detail, hint);
}

/* A tool found at `path`, asked for --version as moxc build asks it: on
 * success "PATH (first version line)" in *line; otherwise, in *broken,
 * "PATH: NAME --version failed: REASON", where REASON is the first line
 * the tool printed, or why it did not start or how it ended. Returns
 * whether it ran (false with both NULL: out of memory). */
static bool probe_tool(const char *path, const char *name, const char *prefer, char **line, char **broken)
{
    *line = *broken = NULL;
    const char *argv[] = {path, "--version", NULL};
    moxc_proc proc;
    if (!moxc_run(argv, &proc))
        return false;
    bool ok = proc.started && proc.exit_code == 0;
    char *first = proc.started ? moxc_version_line(proc.output, ok ? prefer : NULL) : NULL;
    moxc_buf b = {0};
    if (ok)
        moxc_buf_printf(&b, "%s (%s)", path, first ? first : "");
    else if (!proc.started)
        moxc_buf_printf(&b, "%s: %s --version failed: cannot run it: %s", path, name, strerror(proc.errno_value));
    else if (proc.signal)
        moxc_buf_printf(&b, "%s: %s --version failed: killed by signal %d", path, name, proc.signal);
    else
        moxc_buf_printf(&b, "%s: %s --version failed: %s (exit status %d)", path, name,
                        first && *first ? first : "no output", proc.exit_code);
    *(ok ? line : broken) = moxc_buf_finish(&b);
    free(first);
    moxc_proc_free(&proc);
    return ok;
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_error_fn)(int, const char **);

/* Loads libcuda.so.1 and lists its devices. Returns whether a device exists. */
static bool check_cuda_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        report(false, "libcuda.so.1", why ? why : "not found",
               "install the NVIDIA driver (it ships libcuda.so.1; CUDA 13 needs driver 580 or newer); "
               "without it kernels run on the CPU");
        report(false, "CUDA device", "no driver", "a CUDA GPU and its driver are needed to run on the GPU");
        return false;
    }
    report(true, "libcuda.so.1", "loaded", NULL);
    cu_init_fn cu_init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_count_fn cu_count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
    cu_get_fn cu_get = (cu_get_fn)dlsym(lib, "cuDeviceGet");
    cu_name_fn cu_name = (cu_name_fn)dlsym(lib, "cuDeviceGetName");
    cu_error_fn cu_error = (cu_error_fn)dlsym(lib, "cuGetErrorName");
    bool found = false;
    char detail[512] = "";
    int count = 0;
    int rc = -1;
    if (!cu_init || !cu_count || !cu_get || !cu_name) {
        snprintf(detail, sizeof detail, "libcuda.so.1 lacks the driver API entry points");
    } else if ((rc = cu_init(0)) != 0 || (rc = cu_count(&count)) != 0) {
        const char *name = NULL;
        if (!cu_error || cu_error(rc, &name) != 0 || !name)
            name = "unknown error";
        snprintf(detail, sizeof detail, "the driver reports %s (%d)", name, rc);
    } else if (count == 0) {
        snprintf(detail, sizeof detail, "the driver sees no device");
    } else {
        found = true;
        size_t used = 0;
        for (int i = 0; i < count && used < sizeof detail - 1; ++i) {
            int dev = 0;
            char name[256] = "unnamed";
            if (cu_get(&dev, i) != 0 || cu_name(name, (int)sizeof name, dev) != 0)
                snprintf(name, sizeof name, "device %d (name unavailable)", i);
            int n = snprintf(detail + used, sizeof detail - used, "%s%d: %s", i ? ", " : "", i, name);
            if (n < 0)
                break;
            used += (size_t)n;
        }
    }
    report(found, "CUDA device", detail, "kernels run on the CPU backend until a CUDA GPU is usable");
    dlclose(lib);
    return found;
}

/* Where this moxc is and which dialect headers it uses (and why). */
static bool check_self_and_headers(const moxc_options *o)
{
    char *self = moxc_self_path();
    report(self != NULL, "moxc", self ? self : "cannot find itself (/proc/self/exe)", NULL);
    free(self);
    char *include = o->mox_include ? moxc_abs_path(o->mox_include) : moxc_default_mox_include();
    char *kernel_h = include ? moxc_path_join(include, "mox/kernel.h") : NULL;
    bool ok = kernel_h && access(kernel_h, R_OK) == 0;
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s (%s)", kernel_h ? kernel_h : "not found",
                    o->mox_include ? "--mox-include" : "the include directory next to moxc's bin directory");
    char *detail = moxc_buf_finish(&b);
    report(ok, "mox headers", detail ? detail : "out of memory",
           "reinstall mox (cmake --install puts them in <prefix>/include, next to <prefix>/bin/moxc) "
           "or pass --mox-include DIR (the directory holding mox/kernel.h)");
    free(detail);
    free(include);
    free(kernel_h);
    return ok;
}

/* Why the nvcc named by --nvcc is not there, and what to do. */
static const char *explicit_nvcc_hint(const char *path)
{
    if (!strchr(path, '/'))
        return "--nvcc names no program on PATH: give the full path of nvcc (in the CUDA toolkit's bin "
               "directory), leave --nvcc out to search $CUDA_HOME/bin, /usr/local/cuda/bin and PATH, or pass "
               "--no-cuda to build for the CPU only; moxc build with this --nvcc fails";
    if (access(path, F_OK) != 0)
        return "the --nvcc path does not exist: correct it (nvcc is in the CUDA toolkit's bin directory), "
               "leave --nvcc out to search $CUDA_HOME/bin, /usr/local/cuda/bin and PATH, or pass --no-cuda "
               "to build for the CPU only; moxc build with this --nvcc fails";
    return "the --nvcc path is not an executable file: point it at nvcc itself (in the CUDA toolkit's bin "
           "directory), leave --nvcc out to search for one, or pass --no-cuda to build for the CPU only; moxc "
           "build with this --nvcc fails";
}

/* nvcc and cuobjdump. *usable: nvcc runs; returns false when moxc build
 * would fail with this nvcc: one found that does not run (build refuses it
 * rather than quietly building for the CPU only), or a --nvcc not found.
 * mox is built and tested with CUDA 13 (README): an older nvcc gets a note. */
static bool check_nvcc(const moxc_options *o, bool *usable)
{
    static const char hint[] = "install the CUDA 13 toolkit (nvcc in $CUDA_HOME/bin, /usr/local/cuda/bin or PATH) "
                               "or pass --nvcc PATH; without it artifacts are CPU-only";
    char *nvcc = moxc_find_nvcc(o->nvcc);
    char *line = NULL, *broken = NULL;
    *usable = nvcc && probe_tool(nvcc, "nvcc", "release", &line, &broken);
    if (*usable)
        report(true, "nvcc", line, NULL);
    else if (broken)
        report_state("broken", "nvcc", broken,
                      "moxc build stops at this nvcc: repair or remove it, pass --nvcc PATH to a working one, "
                      "or --no-cuda to build for the CPU only");
    else if (o->nvcc && !nvcc)
        report(false, "nvcc", o->nvcc, explicit_nvcc_hint(o->nvcc));
    else
        report(false, "nvcc", nvcc ? "out of memory" : "not found", hint);
    const char *release = line ? strstr(line, "release ") : NULL;
    if (release && atoi(release + strlen("release ")) < 13)
        printf("      note: mox is built and tested with CUDA 13; this nvcc is older\n");
    char *cuobjdump = moxc_find_cuobjdump(nvcc);
    report(cuobjdump != NULL, "cuobjdump", cuobjdump ? cuobjdump : "not found",
           "part of the CUDA 13 toolkit; only moxc inspect --emit ptx|sass needs it");
    bool buildable = *usable || (!nvcc && !o->nvcc);
    free(cuobjdump);
    free(nvcc);
    free(line);
    free(broken);
    return buildable;
}

/* The C compiler moxc build would use; true when it runs. */
static bool check_cc(const moxc_options *o)
{
    const char *cc_name = moxc_cc_name(o);
    char *cc = moxc_find_program(cc_name);
    char *line = NULL, *broken = NULL;
    bool ok = cc && probe_tool(cc, "the C compiler", NULL, &line, &broken);
    if (broken)
        report_state("broken", "C compiler", broken, "repair it, or set CC / --cc to a working C11 compiler");
    else
        report(ok, "C compiler", ok ? line : cc_name,
               "install a C11 compiler (apt-get install build-essential) or set CC / --cc");
    free(cc);
    free(line);
    free(broken);
    return ok;
}

int moxc_cmd_doctor(const moxc_options *o)
{
    printf("moxc %s doctor\n", MOXC_VERSION);
    bool required_ok = check_cc(o);

    CXString version = clang_getClangVersion();
    const char *clang_text = clang_getCString(version);
    bool clang_ok = clang_text && *clang_text;
    report(clang_ok, "libclang", clang_ok ? clang_text : "not usable",
           "apt-get install libclang-14-dev (scripts/install-deps.sh installs all of mox's packages)");
    clang_disposeString(version);
    required_ok = required_ok && clang_ok;
    required_ok = check_self_and_headers(o) && required_ok;

    bool nvcc_ok = false, device_ok = false;
    if (o->no_cuda) {
        printf("[skipped] CUDA checks (--no-cuda)\n");
    } else {
        required_ok = check_nvcc(o, &nvcc_ok) && required_ok;
        device_ok = check_cuda_driver();
    }

    if (!required_ok) {
        printf("moxc cannot build kernels here: install or repair what is missing or broken above\n");
        return 1;
    }
    if (nvcc_ok && device_ok)
        printf("mode: CUDA: kernels build for the GPU and the CPU and run on the GPU\n");
    else if (nvcc_ok)
        printf("mode: CPU-only at run time: fatbins are built, but kernels run on the CPU backend (no usable CUDA device)\n");
    else
        printf("mode: CPU-only: kernels build and run on the CPU backend\n");
    return 0;
}
