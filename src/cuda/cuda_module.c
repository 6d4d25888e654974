/* src/cuda/cuda_module.c - module preparation: cuModuleLoadData on the
 * verified fatbin bytes (never a path), one cuModuleGetFunction per kernel
 * entry (mox_entry_<kernel> and its variants), and the attribute checks that must hold before any
 * launch: the kernel's required block fits the function's thread limit, and
 * its static shared memory fits the device; with MOX_CUDA_PDL on, whether
 * the entries wait for programmatic dependencies. Runs on the core's preparation
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

/* How much dynamic shared memory a launch of the kernel may ask for: the
 * default limit less its static shared memory, or for kernels that declare
 * MOX_SHARED_DYNAMIC the device's opt-in limit less it, which the entries
 * are told (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). */
static mox_status allow_dynamic_shared(mox__cuda_dev *dev, const mox_abi_kernel *ak, mox__cuda_kernel *k)
{
    uint32_t limit = (ak->features & MOX_KFEAT_DYNAMIC_SHARED) ? dev->limits.shared_optin
                                                               : dev->limits.shared_per_block;
    k->max_dynamic_shared = limit > k->static_shared ? limit - k->static_shared : 0;
    if (!(ak->features & MOX_KFEAT_DYNAMIC_SHARED) || k->max_dynamic_shared <= dev->limits.shared_per_block)
        return MOX_OK;
    CUfunction fns[6] = {k->fn,         k->fn_noalias,         k->fn_ungated,
                         k->fn_ungated_noalias, k->fn_gate1, k->fn_gate1_noalias};
    for (int i = 0; i < 6; i++) {
        if (!fns[i])
            continue;
        CUresult r = dev->api->cuFuncSetAttribute(fns[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  (int)k->max_dynamic_shared);
        if (r != CUDA_SUCCESS) {
            char ctx[160];
            snprintf(ctx, sizeof ctx, "(kernel %s, %u bytes of dynamic shared memory)", ak->name,
                     k->max_dynamic_shared);
            return mox__cuda_fail(dev->api, r, "cuFuncSetAttribute", ctx);
        }
    }
    return MOX_OK;
}

/* A second entry of kernel `ak` (mox_entry_<kernel> + `suffix`, gen_cuda.c)
 * into *fn: NULL when the artifact lacks it (built before it existed) or
 * when it cannot run the required block or differs from the default entry
 * in shared memory, so the default entry always remains. */
static mox_status load_variant(mox__cuda_dev *dev, CUmodule module, const mox_abi_kernel *ak, uint64_t need,
                               const mox__cuda_kernel *k, const char *suffix, CUfunction *fn)
{
    char sym[192];
    snprintf(sym, sizeof sym, "mox_entry_%s%s", ak->name, suffix);
    *fn = NULL;
    CUfunction found = NULL;
    CUresult r = dev->api->cuModuleGetFunction(&found, module, sym);
    if (r == CUDA_ERROR_NOT_FOUND)
        return MOX_OK;
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(dev->api, r, "cuModuleGetFunction", sym);
    uint32_t threads = 0, shared = 0;
    mox_status st = fn_attr(dev, found, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ak->name, &threads);
    if (st == MOX_OK)
        st = fn_attr(dev, found, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, ak->name, &shared);
    if (st != MOX_OK)
        return st;
    if (need <= threads && shared == k->static_shared && threads >= k->max_threads)
        *fn = found;
    return MOX_OK;
}

/* The no-alias entry of a kernel with read buffers, and the entries
 * without the gate check and with the check of one dependency; with
 * MOX_CUDA_PDL on only where they wait for programmatic dependencies too
 * (`grid_wait` is MOX__GRID_WAIT_ALL). */
static mox_status load_variants(mox__cuda_dev *dev, CUmodule module, const mox_abi_kernel *ak, uint64_t need,
                                unsigned grid_wait, mox__cuda_kernel *k)
{
    bool reads = false;
    for (size_t p = 0; p < ak->param_count; p++)
        reads = reads || (ak->params[p].kind == MOX_PARAM_BUFFER && ak->params[p].access == MOX_PARAM_READ);
    mox_status st = MOX_OK;
    if (reads)
        st = load_variant(dev, module, ak, need, k, MOX_ENTRY_NOALIAS_SUFFIX, &k->fn_noalias);
    if (st != MOX_OK || (dev->pdl != MOX__CUDA_PDL_OFF && grid_wait != MOX__GRID_WAIT_ALL))
        return st;
    st = load_variant(dev, module, ak, need, k, MOX_ENTRY_UNGATED_SUFFIX, &k->fn_ungated);
    if (st == MOX_OK && k->fn_noalias)
        st = load_variant(dev, module, ak, need, k, MOX_ENTRY_UNGATED_SUFFIX MOX_ENTRY_NOALIAS_SUFFIX,
                          &k->fn_ungated_noalias);
    if (st == MOX_OK)
        st = load_variant(dev, module, ak, need, k, MOX_ENTRY_ONE_DEP_SUFFIX, &k->fn_gate1);
    if (st == MOX_OK && k->fn_noalias)
        st = load_variant(dev, module, ak, need, k, MOX_ENTRY_ONE_DEP_SUFFIX MOX_ENTRY_NOALIAS_SUFFIX,
                          &k->fn_gate1_noalias);
    return st;
}

/* Which entries of the code loaded for this GPU start with
 * griddepcontrol.wait (mox/kernel_cuda.h's marker), so that graph edges
 * into their kernels may be programmatic (MOX__GRID_WAIT_*, kernel_abi.h).
 * Asked only with MOX_CUDA_PDL on; a module without the marker (built
 * before it existed), a failing query or an unknown value means none. */
static unsigned module_grid_wait(mox__cuda_dev *dev, CUmodule module)
{
    if (dev->pdl == MOX__CUDA_PDL_OFF)
        return MOX__GRID_WAIT_NONE;
    CUdeviceptr marker = 0;
    size_t bytes = 0;
    unsigned int value = 0;
    bool read = dev->api->cuModuleGetGlobal(&marker, &bytes, module, "mox__grid_wait_entries") == CUDA_SUCCESS &&
                bytes == sizeof value && dev->api->cuMemcpyDtoH(&value, marker, sizeof value) == CUDA_SUCCESS;
    return read && value <= MOX__GRID_WAIT_ALL ? value : MOX__GRID_WAIT_NONE;
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
    unsigned grid_wait = module_grid_wait(dev, m->module);
    for (uint32_t i = 0; i < count; i++) {
        const mox_abi_kernel *ak = &abi->kernels[i];
        char sym[160];
        k[i].grid_wait = grid_wait != MOX__GRID_WAIT_NONE;
        snprintf(k[i].name, sizeof k[i].name, "%s", ak->name);
        snprintf(sym, sizeof sym, "mox_entry_%s", ak->name);
        if (ak->param_count > MOX_MAX_PARAMS) {
            st = mox__cuda_error(MOX_ERR_TOO_MANY_ARGUMENTS, "kernel %s has %zu parameters",
                                 ak->name, ak->param_count);
            goto fail;
        }
        k[i].param_count = (uint32_t)ak->param_count;
        k[i].word_params = true;
        for (size_t p = 0; p < ak->param_count; p++) {
            const mox_abi_param *ap = &ak->params[p];
            uint32_t bytes = ap->kind == MOX_PARAM_BUFFER ? (uint32_t)sizeof(void *) : (uint32_t)ap->layout->size;
            k[i].param_size[p] = bytes;
            k[i].word_params &= bytes == 4 || bytes == 8;
            k[i].wide_params |= (uint32_t)(bytes == 8) << p;
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
        st = load_variants(dev, m->module, ak, need, grid_wait, &k[i]);
        k[i].entry_plain[0] = mox__cuda_entry_of(&k[i], MOX__ENTRY_DEFAULT, 0);
        k[i].entry_plain[1] = mox__cuda_entry_of(&k[i], MOX__ENTRY_NOALIAS, 0);
        if (st == MOX_OK)
            st = allow_dynamic_shared(dev, ak, &k[i]);
        if (st != MOX_OK)
            goto fail;
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
