/* src/cuda/cuda_copy.c - COPY commands (mox_buffer_copy): device bytes from
 * a buffer of this device, or of another CUDA device, into one of this
 * device, on the destination's stream; and FILL commands (mox_buffer_fill).
 *
 *   - a copy no failure can gate is a plain copy: cuMemcpyDtoDAsync within
 *     one context, cuMemcpyPeerAsync across contexts - over the peer link
 *     when peer access is on (enabled on first use, this context reading
 *     the source's), staged through host memory by the driver otherwise;
 *   - a copy whose source's writer may still fail runs the backend's gated
 *     copy kernel (cuda_copy_kernel.cu, PTX in cuda_copy_ptx.c, loaded on
 *     first use): its gate reads the writer's status word, on this device
 *     or mirrored first into the copy's own slot (cuda_foreign.c), so a
 *     gated copy copies nothing and raises GATED for what reads after it -
 *     on the device, no host decision. Without peer access the kernel
 *     cannot read the source: it is peer-copied into a stream-ordered
 *     temporary first and the kernel copies that.
 *   - a fill no failure can gate whose pattern repeats every 1, 2 or 4
 *     bytes is cuMemsetD8/16/32Async; any other fill runs the backend's
 *     fill kernel (beside the copy kernel), with its gate (empty when
 *     nothing can gate it).
 * That is the stream path. In graph launches a fill or a copy within one
 * context is a kernel node of those two kernels (mox__cuda_builtin_kernel,
 * describe_node), the command's operands its parameters (hal.h).
 */
#include "cuda/cuda_internal.h"

#include <stdio.h>
#include <string.h>

/* The gated copy kernel (cuda_copy_ptx.c, generated). */
extern const char mox__cuda_copy_ptx[];

#define COPY_BLOCK MOX__COMMAND_BLOCK /* the commands' launch shape (hal.h) */

/* Whether this context can read `src_ctx`'s memory directly. Enables peer
 * access the first time (for this device's context, towards the source). */
static bool peer_access(mox__cuda_dev *dev, CUcontext src_ctx)
{
    if (src_ctx == dev->ctx)
        return true;
    for (uint32_t i = 0; i < dev->peer_count; i++)
        if (dev->peers[i].ctx == src_ctx)
            return dev->peers[i].access;
    CUresult r = dev->api->cuCtxEnablePeerAccess(src_ctx, 0);
    bool ok = r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    if (dev->peer_count < MOX__CUDA_MAX_PEERS)
        dev->peers[dev->peer_count++] = (mox__cuda_peer){src_ctx, ok};
    return ok;
}

/* The two kernels as graph nodes see them: one entry for every gate (the
 * kernels check theirs), parameters as hal.h lays out the operands. */
static void builtin_init(mox__cuda_kernel *k, CUfunction fn, const char *name, uint32_t count,
                         const uint32_t *sizes)
{
    memset(k, 0, sizeof *k);
    k->fn = fn;
    k->entry_plain[0] = k->entry_plain[1] = fn;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->max_threads = COPY_BLOCK;
    k->param_count = count;
    k->word_params = true;
    for (uint32_t p = 0; p < count; p++) {
        k->param_size[p] = sizes[p];
        k->word_params &= sizes[p] == 8u;
        k->wide_params |= (sizes[p] == 8u) << p;
    }
}

/* A failed load is remembered (not one for lack of memory): the driver
 * JIT-compiles the PTX on every try, and a driver too old for its PTX
 * version refuses it every time. */
static mox_status load_failed(mox__cuda_dev *dev, mox_status st)
{
    if (st != MOX_ERR_ALLOCATION_FAILED && st != MOX_ERR_OUT_OF_MEMORY) {
        dev->builtins_failure = st;
        snprintf(dev->builtins_message, sizeof dev->builtins_message, "%s",
                 mox__cuda_last_message());
    }
    return st;
}

static mox_status load_kernel(mox__cuda_dev *dev)
{
    if (dev->copy_fn)
        return MOX_OK;
    if (dev->builtins_failure != MOX_OK)
        return mox__cuda_error(dev->builtins_failure, "%s (failed before; not tried again)",
                               dev->builtins_message);
    const mox__cuda_api *api = dev->api;
    atomic_fetch_add_explicit(&dev->stats.builtin_loads, 1, memory_order_relaxed);
    CUresult r = api->cuModuleLoadData(&dev->copy_module, mox__cuda_copy_ptx);
    if (r != CUDA_SUCCESS)
        return load_failed(dev, mox__cuda_fail(api, r, "cuModuleLoadData",
                                               "(the PTX of the backend's copy and fill kernels)"));
    const char *name = "mox__copy_gated";
    r = api->cuModuleGetFunction(&dev->copy_fn, dev->copy_module, name);
    if (r == CUDA_SUCCESS) {
        name = "mox__fill_gated";
        r = api->cuModuleGetFunction(&dev->fill_fn, dev->copy_module, name);
    }
    if (r != CUDA_SUCCESS) {
        api->cuModuleUnload(dev->copy_module);
        dev->copy_module = NULL;
        dev->copy_fn = dev->fill_fn = NULL;
        char what[64];
        snprintf(what, sizeof what, "(%s)", name);
        return load_failed(dev, mox__cuda_fail(api, r, "cuModuleGetFunction", what));
    }
    static const uint32_t copy_sizes[3] = {8, 8, 8};
    static const uint32_t fill_sizes[4] = {8, 8, MOX__FILL_MAX_PATTERN, 4};
    builtin_init(&dev->copy_k, dev->copy_fn, "mox__copy_gated", 3, copy_sizes);
    builtin_init(&dev->fill_k, dev->fill_fn, "mox__fill_gated", 4, fill_sizes);
    atomic_store_explicit(&dev->builtins_ready, true, memory_order_release);
    return MOX_OK;
}

void mox__cuda_builtins_preload(mox__cuda_dev *dev, const mox__cuda_group *g)
{
    if (g->count > 1 && dev->builtins_failure == MOX_OK)
        (void)load_kernel(dev);
}

void mox__cuda_copy_unload(mox__cuda_dev *dev)
{
    atomic_store(&dev->builtins_ready, false);
    if (dev->copy_module)
        dev->api->cuModuleUnload(dev->copy_module);
    dev->copy_module = NULL;
    dev->copy_fn = dev->fill_fn = NULL;
}

const mox__cuda_kernel *mox__cuda_builtin_kernel(const mox__cuda_dev *dev, const mox__dispatch *d)
{
    /* an upload from memory the core had lent (param_count 3) is a copy
     * from that memory (hal.h) */
    bool upload = d->kind == MOX__CMD_UPLOAD && d->param_count == 3;
    if (d->kind != MOX__CMD_COPY && d->kind != MOX__CMD_FILL && !upload)
        return NULL;
    if (!atomic_load_explicit(&dev->builtins_ready, memory_order_acquire))
        return NULL;
    if (d->kind == MOX__CMD_FILL)
        return &dev->fill_k;
    if (upload)
        return &dev->copy_k;
    const mox__cuda_dev *sdev = (const mox__cuda_dev *)d->src_device;
    return !sdev || sdev == dev ? &dev->copy_k : NULL;
}

static mox_status plain_copy(mox__cuda_dev *dev, CUdeviceptr dst, CUdeviceptr src,
                             CUcontext src_ctx, size_t n, CUstream stream)
{
    const mox__cuda_api *api = dev->api;
    CUresult r;
    if (src_ctx == dev->ctx) {
        r = api->cuMemcpyDtoDAsync(dst, src, n, stream);
        return r == CUDA_SUCCESS ? MOX_OK : mox__cuda_fail(api, r, "cuMemcpyDtoDAsync", "(copy)");
    }
    (void)peer_access(dev, src_ctx); /* the driver's path: peer link or host staging */
    r = api->cuMemcpyPeerAsync(dst, dev->ctx, src, src_ctx, n, stream);
    return r == CUDA_SUCCESS ? MOX_OK
                             : mox__cuda_fail(api, r, "cuMemcpyPeerAsync", "(copy between devices)");
}

/* The copy kernel over `bytes`, in the launch shape the core gave the
 * command (hal.h: the same one its graph node gets). */
static mox_status gated_kernel(mox__cuda_dev *dev, const mox__dispatch *d, const mox_gate *gate,
                               CUdeviceptr src, CUdeviceptr dst, unsigned long long bytes,
                               CUstream stream)
{
    mox_status st = load_kernel(dev);
    if (st != MOX_OK)
        return st;
    unsigned int grid = d->config.grid.x;
    mox_gate g = *gate;
    void *params[4] = {&g, &src, &dst, &bytes};
    CUresult r = dev->api->cuLaunchKernel(dev->copy_fn, grid, 1, 1, COPY_BLOCK, 1, 1, 0, stream,
                                          params, NULL);
    atomic_fetch_add(&dev->stats.stream_launches, 1);
    return r == CUDA_SUCCESS ? MOX_OK
                             : mox__cuda_fail(dev->api, r, "cuLaunchKernel", "(mox__copy_gated)");
}

static mox_status mirrors(mox__cuda_dev *dev, const mox__cuda_group *g, uint32_t node,
                          CUstream stream)
{
    for (uint32_t i = 0; i < g->mirror_count; i++) {
        const mox__cuda_mirror *m = &g->mirrors[i];
        if (m->node != node)
            continue;
        CUdeviceptr own = dev->pool + 8ull * (g->inst->slot_base + node);
        CUresult r = dev->api->cuMemcpyPeerAsync(own, dev->ctx, m->word, m->ctx, 8, stream);
        if (r != CUDA_SUCCESS)
            return mox__cuda_fail(dev->api, r, "cuMemcpyPeerAsync",
                                  "(a status word of another device)");
    }
    return MOX_OK;
}

mox_status mox__cuda_copy(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t node,
                          const mox__dispatch *d, const mox_gate *gate, CUstream stream)
{
    if (d->bytes == 0)
        return MOX_OK;
    const mox__cuda_dev *sdev = (const mox__cuda_dev *)d->src_device;
    CUcontext src_ctx = sdev ? sdev->ctx : dev->ctx;
    CUdeviceptr dst = (CUdeviceptr)(uintptr_t)d->address + d->offset;
    CUdeviceptr src = (CUdeviceptr)(uintptr_t)d->src_address + d->src_offset;
    size_t n = (size_t)d->bytes;
    mox_status st = mirrors(dev, g, node, stream);
    mox__cuda_builtins_preload(dev, g);
    if (st != MOX_OK || !gate || gate->dep_count == 0)
        return st != MOX_OK ? st : plain_copy(dev, dst, src, src_ctx, n, stream);
    if (peer_access(dev, src_ctx))
        return gated_kernel(dev, d, gate, src, dst, n, stream);
    /* The kernel cannot read the source: copy it here first. */
    const mox__cuda_api *api = dev->api;
    CUdeviceptr tmp = 0;
    CUresult r = api->cuMemAllocAsync(&tmp, n, stream);
    if (r != CUDA_SUCCESS)
        return mox__cuda_fail(api, r, "cuMemAllocAsync", "(staging a gated copy)");
    st = plain_copy(dev, tmp, src, src_ctx, n, stream);
    if (st == MOX_OK)
        st = gated_kernel(dev, d, gate, tmp, dst, n, stream);
    r = api->cuMemFreeAsync(tmp, stream);
    if (st == MOX_OK && r != CUDA_SUCCESS)
        st = mox__cuda_fail(api, r, "cuMemFreeAsync", "(staging a gated copy)");
    return st;
}

/* ---------------- fills ---------------- */

/* The fill kernel's pattern parameter (cuda_copy_kernel.cu). */
typedef struct fill_words {
    unsigned int w[MOX__FILL_MAX_PATTERN / 4u];
} fill_words;

/* The period (1, 2 or 4 bytes) in which the pattern repeats, when one
 * divides it; 0 when none does (then no cuMemsetD* writes it). */
static uint32_t memset_period(const unsigned char *pat, uint32_t size)
{
    for (uint32_t p = 1; p <= 4u && size % p == 0; p *= 2u) {
        bool same = true;
        for (uint32_t k = p; k < size && same; k++)
            same = pat[k] == pat[k % p];
        if (same)
            return p;
    }
    return 0;
}

/* Above this many bytes an ungated fill that a memset can write, or an
 * ungated copy, keeps the stream path: on an H100 a 256 MiB u32 fill ran
 * at 0.76 of cuMemsetD32Async as two fill-kernel graph nodes (before the
 * kernel's 16-byte stores: 0.954 since, on a 12-byte pattern)
 * (bench/cuda_overhead E), while below a few MiB the kernel's time is
 * small against a stream launch's per-node cost. */
#define GRAPH_COMMAND_MAX_BYTES (16ull << 20)

bool mox__cuda_command_prefers_stream(const mox__cuda_dev *dev, const mox__dispatch *d)
{
    /* the copy kernel reads an upload's lent memory across the bus: above
     * MOX_CUDA_UPLOAD_NODE_KIB the DMA engines' copy on the stream wins */
    if (d->kind == MOX__CMD_UPLOAD)
        return d->bytes > dev->upload_node_max;
    if (d->bytes <= GRAPH_COMMAND_MAX_BYTES)
        return false;
    return d->kind == MOX__CMD_COPY || memset_period(d->host, d->pattern_size) != 0;
}

static mox_status memset_fill(const mox__cuda_api *api, CUdeviceptr dst, const unsigned char *pat,
                              uint32_t period, size_t bytes, CUstream stream)
{
    CUresult r;
    const char *fn;
    if (period == 1) {
        fn = "cuMemsetD8Async";
        r = api->cuMemsetD8Async(dst, pat[0], bytes, stream);
    } else if (period == 2) {
        unsigned short v;
        memcpy(&v, pat, 2);
        fn = "cuMemsetD16Async";
        r = api->cuMemsetD16Async(dst, v, bytes / 2u, stream);
    } else {
        unsigned int v;
        memcpy(&v, pat, 4);
        fn = "cuMemsetD32Async";
        r = api->cuMemsetD32Async(dst, v, bytes / 4u, stream);
    }
    return r == CUDA_SUCCESS ? MOX_OK : mox__cuda_fail(api, r, fn, "(buffer fill)");
}

mox_status mox__cuda_fill(mox__cuda_dev *dev, mox__cuda_group *g, uint32_t node,
                          const mox__dispatch *d, const mox_gate *gate, CUstream stream)
{
    if (d->bytes == 0)
        return MOX_OK;
    CUdeviceptr dst = (CUdeviceptr)(uintptr_t)d->address + d->offset;
    const unsigned char *pat = d->host;
    uint32_t size = d->pattern_size;
    mox_status st = mirrors(dev, g, node, stream);
    if (st != MOX_OK)
        return st;
    mox__cuda_builtins_preload(dev, g);
    bool gated = gate && gate->dep_count != 0;
    uint32_t period = gated ? 0 : memset_period(pat, size);
    if (period)
        return memset_fill(dev->api, dst, pat, period, (size_t)d->bytes, stream);
    st = load_kernel(dev);
    if (st != MOX_OK)
        return st;
    mox_gate gv;
    if (gate)
        gv = *gate;
    else
        memset(&gv, 0, sizeof gv);
    fill_words words;
    memset(&words, 0, sizeof words);
    memcpy(words.w, pat, size);
    unsigned long long bytes = d->bytes;
    void *params[5] = {&gv, &dst, &bytes, &words, &size};
    CUresult r = dev->api->cuLaunchKernel(dev->fill_fn, d->config.grid.x, 1, 1, COPY_BLOCK,
                                          1, 1, 0, stream, params, NULL);
    atomic_fetch_add(&dev->stats.stream_launches, 1);
    return r == CUDA_SUCCESS ? MOX_OK
                             : mox__cuda_fail(dev->api, r, "cuLaunchKernel", "(mox__fill_gated)");
}
