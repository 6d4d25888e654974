/* tests/cuda/sim_cuda.h - shared between the simulated driver's API
 * (sim_cuda.c and the files of sim_driver.h) and its kernels
 * (sim_kernels.c). */
#ifndef MOX_TESTS_SIM_CUDA_H
#define MOX_TESTS_SIM_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/cuda_api.h"
#include <mox/kernel_abi.h>

/* One launch: geometry and copies of the kernel's parameters. */
typedef struct sim_launch {
    uint32_t grid[3], block[3];
    _Alignas(16) unsigned char args[8][128]; /* args[0] is the gate; the fill kernel's pattern is 128 bytes */
} sim_launch;

typedef void (*sim_kernel_fn)(const sim_launch *l);

struct CUfunc_st {
    const char *name;
    uint32_t nargs;
    uint32_t size[8];
    sim_kernel_fn fn;
    bool ungated; /* mox_entry_<k>__ungated: runs without the gate check */
};

/* The kernels the simulated driver knows (sim_kernels.c), and each again
 * as its entry without the gate check (MOX_ENTRY_UNGATED_SUFFIX), which
 * runs the same code with the gate's dependencies ignored. */
extern struct CUfunc_st sim_funcs[];
extern struct CUfunc_st sim_ungated_funcs[];
extern const size_t sim_func_count;

/* The kernels of tests/cuda/kernels.cu with the deferred gate check
 * (sim_kernels_defer.c): with MOX_KFEAT_GATE_DEFERRED (no question at the
 * entry's end), and without it (thread 0 of each block asks). */
void sim_defer_finish(const sim_launch *l);
void sim_defer_asks(const sim_launch *l);

/* Makes every later driver call of the running kernel's context fail with
 * `r` (a sticky fault). */
void sim_set_sticky(CUresult r);
/* The context of the stream whose worker runs the calling kernel. */
CUcontext sim_kernel_ctx(void);
/* Whether a kernel of context `ctx` may touch `p` (its own memory, a peer's
 * with peer access enabled, or host memory). */
bool sim_can_touch(CUcontext ctx, const void *p);
/* p is device memory of some context. */
bool sim_device_mem(const void *p);
/* [p, p + n) lies in pinned host memory (cuMemHostAlloc). */
bool sim_host_pinned(const void *p, size_t n);

#endif
