/* runner_gpu_calls.c - the kernel-quality suite's driver calls (see
 * runner_gpu.h): CUDA results turned into g->err, device memory, the
 * kernels of a workload found in the reference and generated modules, and
 * a launch of one of the three variants (the generated ones with their
 * gate by value). */
#include <stdio.h>
#include <string.h>

#include <mox/kernel_abi.h>

#include "runner_gpu.h"

const char *const gpu_variant_names[GPU_VARIANTS] = {"ref", "gen", "gen-gated"};

bool gpu_check(gpu_ctx *g, CUresult result, const char *what)
{
    if (result == CUDA_SUCCESS)
        return true;
    snprintf(g->err, sizeof g->err, "%.600s: %.200s", what, mox__cuda_error_name(g->cu, result));
    if (mox__cuda_error_is_sticky(result))
        g->dead = true;
    return false;
}

bool gpu_alloc(gpu_ctx *g, CUdeviceptr *out, size_t bytes)
{
    *out = 0;
    return gpu_check(g, g->cu->cuMemAlloc(out, bytes ? bytes : 4), "cuMemAlloc");
}

void gpu_free(gpu_ctx *g, CUdeviceptr *p)
{
    if (*p)
        g->cu->cuMemFree(*p);
    *p = 0;
}

bool gpu_upload(gpu_ctx *g, CUdeviceptr dst, const void *src, size_t bytes)
{
    return gpu_check(g, g->cu->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

bool gpu_download(gpu_ctx *g, void *dst, CUdeviceptr src, size_t bytes)
{
    return gpu_check(g, g->cu->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

bool gpu_fill32(gpu_ctx *g, CUdeviceptr dst, uint32_t pattern, size_t bytes)
{
    return gpu_check(g, g->cu->cuMemsetD32Async(dst, pattern, bytes / 4, NULL), "cuMemsetD32Async");
}

bool gpu_kernel_find(gpu_ctx *g, const char *name, gpu_kernel *out)
{
    memset(out, 0, sizeof *out);
    char sym[96];
    snprintf(sym, sizeof sym, "ref_%s", name);
    for (size_t i = 0; i < g->ref_count && !out->fn[0]; i++)
        if (g->cu->cuModuleGetFunction(&out->fn[0], g->ref[i], sym) != CUDA_SUCCESS)
            out->fn[0] = NULL;
    if (!out->fn[0]) {
        snprintf(g->err, sizeof g->err, "no reference kernel %s in the reference fatbins", sym);
        return false;
    }
    /* gen-gated: the entry the runtime launches for a gate of one
     * dependency (the one gpu_launch arms), the general one in modules
     * built before that entry existed */
    snprintf(sym, sizeof sym, "mox_entry_%s" MOX_ENTRY_ONE_DEP_SUFFIX, name);
    if (g->cu->cuModuleGetFunction(&out->fn[2], g->gen, sym) != CUDA_SUCCESS) {
        snprintf(sym, sizeof sym, "mox_entry_%s", name);
        if (!gpu_check(g, g->cu->cuModuleGetFunction(&out->fn[2], g->gen, sym), sym))
            return false;
    }
    snprintf(sym, sizeof sym, "mox_entry_%s" MOX_ENTRY_UNGATED_SUFFIX, name);
    if (g->cu->cuModuleGetFunction(&out->fn[1], g->gen, sym) != CUDA_SUCCESS)
        out->fn[1] = out->fn[2];
    for (int i = 0; i < 2; i++) {
        g->cu->cuFuncGetAttribute(&out->regs[i], CU_FUNC_ATTRIBUTE_NUM_REGS, out->fn[i]);
        g->cu->cuFuncGetAttribute(&out->local_bytes[i], CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                  out->fn[i]);
    }
    return true;
}

bool gpu_launch(gpu_ctx *g, const gpu_kernel *k, int variant, uint32_t self, unsigned gx,
                unsigned gy, unsigned bx, unsigned by, void **params, size_t count)
{
    void *all[MOX_MAX_PARAMS + 1];
    if (count > MOX_MAX_PARAMS) {
        snprintf(g->err, sizeof g->err, "too many kernel parameters (%zu)", count);
        return false;
    }
    if (variant == GPU_REF)
        return gpu_check(g, g->cu->cuLaunchKernel(k->fn[0], gx, gy, 1, bx, by, 1, 0, NULL, params, NULL),
                         "cuLaunchKernel (ref)");
    /* The gate goes by value, like every other parameter: the driver copies
     * the bytes `all[0]` points to when the launch is enqueued. */
    mox_gate gate;
    memset(&gate, 0, sizeof gate);
    if (variant == GPU_GATED) {
        /* As the runtime arms it: one inline dependency, slot 0 (OK). */
        gate.status = (uint32_t *)(uintptr_t)g->gate_status;
        gate.inline_deps[0] = 0;
        gate.self = self + 1; /* dispatch 0 is the (OK) dependency */
        gate.dep_count = 1;
    }
    all[0] = &gate;
    for (size_t i = 0; i < count; i++)
        all[i + 1] = params[i];
    return gpu_check(g, g->cu->cuLaunchKernel(k->fn[variant == GPU_GATED ? 2 : 1], gx, gy, 1, bx, by, 1, 0, NULL,
                                              all, NULL),
                     "cuLaunchKernel (gen)");
}
