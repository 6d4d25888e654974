/* cpu_backend_module.c - the CPU side of module loading. The bytes were
 * verified against the manifest by the core; loading them through a
 * memfd (dlopen of /proc/self/fd/N) means the artifact path is never opened
 * again, so a file swapped after verification cannot be what runs. The
 * module's entry table is then checked against the ABI.
 *
 * The descriptor stays open while the library is loaded: the dynamic loader
 * finds an already loaded object by its name first, so if descriptor N were
 * closed and reused by the next module, dlopen("/proc/self/fd/N") would hand
 * back the previous module's code.
 *
 * Under valgrind the code goes through a named temporary file instead:
 * valgrind reads a library's symbols from the file it maps, and a memfd
 * has no path it can open, so every kernel frame showed as ??? (memcheck's
 * stacks, callgrind's profiles). The file is made by mkostemp (mode 0600)
 * in $TMPDIR, else /tmp, under a name no loaded library has, and removed
 * as soon as it is loaded (valgrind reads the symbols when the code is
 * mapped), so a program that never releases its device leaves no file.
 * Between its writing and its loading another process of the same user
 * could replace it - one that could trace this process anyway; outside
 * valgrind the memfd is used. */
#include "cpu_backend_module.h"

#include "core/alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#else
#define UNDER_VALGRIND() false
#endif

static mox_status fail(mox_error **error, mox_status code, mox_error *e)
{
    *error = e;
    return code;
}

/* A thread function always (the fiber executor can run any kernel); a
 * work-group function exactly when the executor is not fibers. */
static bool entry_points_valid(const mox_cpu_kernel_entry *k)
{
    if (!k->thread_fn)
        return false;
    switch (k->executor) {
    case MOX_CPU_EXEC_LOOPS:
    case MOX_CPU_EXEC_THREAD_CALLS:
        return k->group_fn != NULL;
    case MOX_CPU_EXEC_FIBERS:
        return k->group_fn == NULL;
    default:
        return false;
    }
}

static bool write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* A code file not (or no longer) needed: a temporary one is removed. */
static void discard_file(int fd, const char *name, bool temp)
{
    if (temp)
        unlink(name);
    close(fd);
}

/* The file the code is loaded from, open for writing, and the name
 * dlopen loads it by (a memfd's /proc/self/fd/N, or the temporary file's
 * path under valgrind, whose symbols valgrind then finds). A temporary
 * file is removed once loaded, so its name could come again from mkostemp:
 * one that a loaded library still has is not taken (dlopen would return
 * that library). -1 with errno on failure. */
static int open_code_file(char *name, size_t cap, bool *temp)
{
    *temp = UNDER_VALGRIND();
    if (!*temp) {
        int fd = memfd_create("mox-kernels", MFD_CLOEXEC);
        if (fd >= 0)
            snprintf(name, cap, "/proc/self/fd/%d", fd);
        return fd;
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    for (int tries = 0; tries < 16; tries++) {
        if ((size_t)snprintf(name, cap, "%s/mox-kernels-XXXXXX", dir) >= cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = mkostemp(name, O_CLOEXEC);
        if (fd < 0)
            return -1;
        void *taken = dlopen(name, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (!taken)
            return fd;
        dlclose(taken);
        discard_file(fd, name, true);
    }
    errno = EEXIST;
    return -1;
}

/* Unloads the library, then frees its name (a memfd's descriptor; -1 for
 * a temporary file, closed and removed at load) only if the loader really
 * dropped it: a library that stays mapped keeps its name, so its
 * descriptor is kept (never reused) rather than risk a later module
 * resolving to it. */
static void release_code(void *dl, int fd)
{
    dlclose(dl);
    if (fd < 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *still = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (still) {
        dlclose(still);
        return;
    }
    close(fd);
}

mox_status mox__cpu_module_load(const mox__module_image *img, mox__cpu_module **out,
                                mox_error **error)
{
    *out = NULL;
    char path[512];
    bool temp;
    int fd = open_code_file(path, sizeof path, &temp);
    if (fd < 0)
        return fail(error, MOX_ERR_MODULE_LOAD,
                    mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s': %s failed: %s", img->name,
                                   temp ? "creating a temporary file for the code" : "memfd_create",
                                   strerror(errno)));
    if (!write_all(fd, img->bytes, img->size)) {
        int e = errno;
        discard_file(fd, path, temp);
        return fail(error, MOX_ERR_MODULE_LOAD,
                    mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s': writing the code failed: %s",
                                   img->name, strerror(e)));
    }
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl && temp) {
        /* mapped, its symbols read: no file is left behind, and its name
         * is kept from reuse by open_code_file's check, not by a file */
        discard_file(fd, path, temp);
        fd = -1;
    }
    if (!dl) {
        discard_file(fd, path, temp);
        const char *why = dlerror();
        return fail(error, MOX_ERR_MODULE_LOAD,
                    mox__error_new(MOX_ERR_MODULE_LOAD,
                                   "module '%s': the CPU code (kernels_cpu.so of %s) does not load: %s",
                                   img->name, img->dir, why ? why : "unknown error"));
    }
    typedef const mox_cpu_module_entry *(*entry_fn)(void);
    entry_fn fn;
    void *sym = dlsym(dl, MOX_CPU_MODULE_SYMBOL);
    memcpy(&fn, &sym, sizeof fn);
    const mox_cpu_module_entry *entry = fn ? fn() : NULL;
    mox_error *e = NULL;
    mox_status st = MOX_OK;
    if (!entry) {
        st = MOX_ERR_MODULE_LOAD;
        e = mox__error_new(st, "module '%s': the CPU code has no %s() entry table", img->name,
                           MOX_CPU_MODULE_SYMBOL);
    } else if (entry->interface_version != MOX_CPU_INTERFACE_VERSION) {
        st = MOX_ERR_MODULE_LOAD;
        e = mox__error_new(st,
                           "module '%s': CPU interface version %u, this libmox supports %u "
                           "(rebuild the kernels)",
                           img->name, entry->interface_version, MOX_CPU_INTERFACE_VERSION);
    } else if (!entry->kernels && entry->kernel_count) {
        st = MOX_ERR_MODULE_LOAD;
        e = mox__error_new(st, "module '%s': the CPU code lists %u kernels but no kernel table", img->name,
                           entry->kernel_count);
    } else if (entry->abi_sha256 && strcmp(entry->abi_sha256, img->abi_sha256) != 0) {
        st = MOX_ERR_ABI_MISMATCH;
        e = mox__error_new(st, "module '%s': the CPU code was built for another ABI (%.12s...)",
                           img->name, entry->abi_sha256);
    } else {
        for (size_t k = 0; k < img->abi->kernel_count && !e; k++) {
            const char *want = img->abi->kernels[k].name;
            if (k >= entry->kernel_count || !entry->kernels[k].name ||
                strcmp(entry->kernels[k].name, want) != 0) {
                st = MOX_ERR_KERNEL_NOT_FOUND;
                e = mox__error_new(st, "module '%s': kernel '%s' is not in the CPU code at index %zu",
                                   img->name, want, k);
            } else if (!entry_points_valid(&entry->kernels[k]) || !entry->lane_slot) {
                st = MOX_ERR_MODULE_LOAD;
                e = mox__error_new(st,
                                   "module '%s': kernel '%s' has no valid CPU entry points "
                                   "(executor %u)",
                                   img->name, want, entry->kernels[k].executor);
            }
        }
        if (!e && entry->kernel_count != img->abi->kernel_count) {
            st = MOX_ERR_MODULE_LOAD;
            e = mox__error_new(st, "module '%s': the CPU code has %u kernels, the ABI %zu",
                               img->name, entry->kernel_count, img->abi->kernel_count);
        }
    }
    if (!e) {
        mox__cpu_module *m = mox__malloc(sizeof *m);
        if (!m) {
            st = MOX_ERR_OUT_OF_MEMORY;
            e = mox__error_new(st, "out of memory loading module '%s'", img->name);
        } else {
            m->dl = dl;
            m->fd = fd;
            m->entry = entry;
            *out = m;
            return MOX_OK;
        }
    }
    release_code(dl, fd);
    return fail(error, st, e);
}

void mox__cpu_module_unload(mox__cpu_module *m)
{
    if (!m)
        return;
    release_code(m->dl, m->fd);
    mox__free(m);
}
