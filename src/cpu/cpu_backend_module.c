/* cpu_backend_module.c - the CPU side of module loading. The bytes were
 * verified against the manifest by the core; loading them through a
 * memfd (dlopen of /proc/self/fd/N) means the artifact path is never opened
 * again, so a file swapped after verification cannot be what runs. The
 * module's entry table is then checked against the ABI.
 *
 * The descriptor stays open while the library is loaded: the dynamic loader
 * finds an already loaded object by its name first, so if descriptor N were
 * closed and reused by the next module, dlopen("/proc/self/fd/N") would hand
 * back the previous module's code. */
#include "cpu_backend_module.h"

#include "core/alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Unloads the library, then frees its name (the descriptor) only if the
 * loader really dropped it: a library that stays mapped keeps its name, so
 * its descriptor is kept (never reused) rather than risk a later module
 * resolving to it. */
static void release_code(void *dl, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    dlclose(dl);
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
    int fd = memfd_create("mox-kernels", MFD_CLOEXEC);
    if (fd < 0)
        return fail(error, MOX_ERR_MODULE_LOAD,
                    mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s': memfd_create failed: %s",
                                   img->name, strerror(errno)));
    if (!write_all(fd, img->bytes, img->size)) {
        int e = errno;
        close(fd);
        return fail(error, MOX_ERR_MODULE_LOAD,
                    mox__error_new(MOX_ERR_MODULE_LOAD, "module '%s': writing the code failed: %s",
                                   img->name, strerror(e)));
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        close(fd);
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
