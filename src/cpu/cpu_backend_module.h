/* cpu_backend_module.h - loading a kernels_cpu.so from verified bytes. */
#ifndef MOX_CPU_BACKEND_MODULE_H
#define MOX_CPU_BACKEND_MODULE_H

#include "hal/hal.h"

typedef struct mox__cpu_module {
    void *dl;
    int fd; /* the memfd behind dl's name /proc/self/fd/<fd>; see unload. -1 under
             * valgrind: the code came from a temporary file, removed once loaded */
    const mox_cpu_module_entry *entry;
} mox__cpu_module;

/* Codes: MOX_ERR_MODULE_LOAD, MOX_ERR_KERNEL_NOT_FOUND, MOX_ERR_OUT_OF_MEMORY. */
mox_status mox__cpu_module_load(const mox__module_image *image, mox__cpu_module **out,
                                mox_error **error);
void mox__cpu_module_unload(mox__cpu_module *module);

#endif
