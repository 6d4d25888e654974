/* src/cuda/cuda_module.c - module preparation: cuModuleLoadData on the
 * verified fatbin bytes (never a path), one cuModuleGetFunction per kernel
 * (mox_entry_<kernel>), and the attribute checks that must hold before any
 * launch: the kernel's required block fits the function's thread limit, and
 * its static shared memory fits the device. Runs on the core's preparation
 * worker thread, so the driver's JIT or load time never blocks a poll.
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mox_status fn_attr(mox__cuda_dev *dev, CUfunction fn, int which, const char *kernel,
                          uint32_t *out)
{
    int v = 0;
    CUresult r = dev->api->cuFuncGetAttribute(&v, which, fn);
    if (r != CUDA_SUCCESS) {
        char ctx[160];
        snprintf(ctx, sizeof ctx, "(kernel %s)", kernel);
        return mox__cuda_fail(dev->api, r, "cuFuncGetAttribute", ctx);
    }
    *out = v < 0 ? 0u : (uint32_t)v;
    return MOX_OK;
}

mox_status mox__cuda_module_load(mox__cuda_dev *dev, const void *image, size_t size,
                                 const mox_abi *abi, mox__cuda_module **out)
{
    *out = NULL;
    if (!image || size == 0)
        return mox__cuda_error(MOX_ERR_MODULE_LOAD, "the CUDA module image is empty");
    mox_status st = mox__cuda_dev_enter(dev);
    if (st != MOX_OK)
        return st;
    uint32_t count = (uint32_t)abi->kernel_count;
    mox__cuda_module *m = mox__calloc(1, sizeof *m);
    mox__cuda_kernel *k = mox__calloc(count ? count : 1, sizeof *k);
    if (!m || !k) {
        mox__free(m);
        mox__free(k);
        return mox__cuda_error(MOX_ERR_OUT_OF_MEMORY, "out of memory loading a CUDA module");
    }
    m->dev = dev;
    m->kernels = k;
    m->kernel_count = count;
    CUresult r = dev->api->cuModuleLoadData(&m->module, image);
    if (r != CUDA_SUCCESS) {
        char ctx[256];
        snprintf(ctx, sizeof ctx, "(fatbin of %zu bytes, device %s, sm_%u%u)", size, dev->name,
                 dev->limits.cc_major, dev->limits.cc_minor);
        st = mox__cuda_fail(dev->api, r, "cuModuleLoadData", ctx);
        mox__free(k);
        mox__free(m);
        return st;
    }
    for (uint32_t i = 0; i < count; i++) {
        const mox_abi_kernel *ak = &abi->kernels[i];
        char sym[160];
        snprintf(k[i].name, sizeof k[i].name, "%s", ak->name);
        snprintf(sym, sizeof sym, "mox_entry_%s", ak->name);
        if (ak->param_count > MOX_MAX_PARAMS) {
            st = mox__cuda_error(MOX_ERR_TOO_MANY_ARGUMENTS, "kernel %s has %zu parameters",
                                 ak->name, ak->param_count);
            goto fail;
        }
        k[i].param_count = (uint32_t)ak->param_count;
        for (size_t p = 0; p < ak->param_count; p++) {
            const mox_abi_param *ap = &ak->params[p];
            k[i].param_size[p] =
                ap->kind == MOX_PARAM_BUFFER ? (uint32_t)sizeof(void *) : (uint32_t)ap->layout->size;
        }
        r = dev->api->cuModuleGetFunction(&k[i].fn, m->module, sym);
        if (r != CUDA_SUCCESS) {
            char ctx[200];
            snprintf(ctx, sizeof ctx, "(%s is not in the module's fatbin)", sym);
            st = mox__cuda_fail(dev->api, r, "cuModuleGetFunction", ctx);
            goto fail;
        }
        st = fn_attr(dev, k[i].fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ak->name,
                     &k[i].max_threads);
        if (st == MOX_OK)
            st = fn_attr(dev, k[i].fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, ak->name,
                         &k[i].static_shared);
        if (st != MOX_OK)
            goto fail;
        uint64_t need = ak->has_required_block ? (uint64_t)ak->required_block[0] *
                                                     ak->required_block[1] * ak->required_block[2]
                                               : 0;
        if (need > k[i].max_threads) {
            st = mox__cuda_error(MOX_ERR_UNSUPPORTED_DEVICE,
                                 "kernel %s requires blocks of %llu threads but %s allows at most "
                                 "%u for it (registers or limits)",
                                 ak->name, (unsigned long long)need, dev->name, k[i].max_threads);
            goto fail;
        }
        if (k[i].static_shared > dev->limits.shared_per_block) {
            st = mox__cuda_error(MOX_ERR_UNSUPPORTED_DEVICE,
                                 "kernel %s uses %u bytes of shared memory; %s allows %u",
                                 ak->name, k[i].static_shared, dev->name,
                                 dev->limits.shared_per_block);
            goto fail;
        }
    }
    *out = m;
    return MOX_OK;
fail:
    dev->api->cuModuleUnload(m->module);
    mox__free(k);
    mox__free(m);
    return st;
}

void mox__cuda_module_unload(mox__cuda_module *module)
{
    if (!module)
        return;
    mox__cuda_dev *dev = module->dev;
    /* Unloading while the device is lost only fails; nothing else to do. */
    if (dev->api->cuCtxSetCurrent(dev->ctx) == CUDA_SUCCESS)
        dev->api->cuModuleUnload(module->module);
    mox__free(module->kernels);
    mox__free(module);
}
