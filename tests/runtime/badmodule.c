/* badmodule.c - deliberately wrong kernels_cpu.so stand-ins for module
 * loading tests (cpu_module.c). One variant per BAD_* macro; the kernel
 * functions never run. */
#include <stddef.h>

#include <mox/kernel_abi.h>

static mox_cpu_lane *slot_value;
static mox_cpu_lane **slot(void) { return &slot_value; }
static void thread_fn(void *const *args) { (void)args; }
static void group_fn(void *const *args, const mox_cpu_group *group)
{
    (void)args;
    (void)group;
}

#if defined(BAD_NAMES)
static const mox_cpu_kernel_entry kernels[1] = {{"not_axpy", thread_fn, group_fn, 0, MOX_CPU_EXEC_LOOPS}};
#elif defined(BAD_NO_FN)
static const mox_cpu_kernel_entry kernels[1] = {{"axpy", NULL, NULL, 0, MOX_CPU_EXEC_LOOPS}};
#elif defined(BAD_EXECUTOR)
/* fibers, yet a work-group function */
static const mox_cpu_kernel_entry kernels[1] = {{"axpy", thread_fn, group_fn, 0, MOX_CPU_EXEC_FIBERS}};
#elif defined(BAD_COUNT)
static const mox_cpu_kernel_entry kernels[2] = {{"axpy", thread_fn, group_fn, 0, MOX_CPU_EXEC_LOOPS},
                                                {"extra", thread_fn, group_fn, 0, MOX_CPU_EXEC_LOOPS}};
#else
static const mox_cpu_kernel_entry kernels[1] = {{"axpy", thread_fn, group_fn, 0, MOX_CPU_EXEC_LOOPS}};
#endif

static const mox_cpu_module_entry entry = {
#if defined(BAD_VERSION)
    MOX_CPU_INTERFACE_VERSION + 98u,
#else
    MOX_CPU_INTERFACE_VERSION,
#endif
    (uint32_t)(sizeof kernels / sizeof kernels[0]),
#if defined(BAD_NO_TABLE)
    NULL, /* a count, and no table */
#else
    kernels,
#endif
#if defined(BAD_SHA)
    "0000000000000000000000000000000000000000000000000000000000000000",
#else
    NULL,
#endif
    slot,
};

#if !defined(BAD_NO_ENTRY)
__attribute__((visibility("default"))) const mox_cpu_module_entry *mox_cpu_module(void);
const mox_cpu_module_entry *mox_cpu_module(void) { return &entry; }
#else
__attribute__((visibility("default"))) const mox_cpu_module_entry *not_the_entry(void);
const mox_cpu_module_entry *not_the_entry(void) { return &entry; }
#endif
