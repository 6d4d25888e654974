/* launch.c - creating generated launches: the checks of module.h in their
 * fixed order (the arguments' in launch_check.c, then the required block
 * and the geometry here), each failure a resolved op naming the kernel and
 * the argument; value arguments copied now. A per-thread memo lets a
 * repeated launch skip the registry and the geometry checks. Also
 * mox_module_prepare. */
#include <stddef.h>
#include <string.h>

#include "alloc.h"
#include "debug_check.h"
#include "error.h"
#include "launch_check.h"
#include "module.h"
#include "op.h"
#include "trace.h"

/* Per-thread memo of the last launch's device and module, and the last
 * geometry that passed the checks for a kernel on that device: launches
 * in a loop skip the module registry, the device lock of the module table
 * and the geometry checks (whose outcome depends only on the config, the
 * kernel and the device's fixed limits). The device pointer and its
 * context id together identify a live device (the caller passes it in). */
enum { MEMO_KERNELS = 8, FAST_PARAMS = 8 };

/* A parameter as launch_fast checks it: the first 8 bytes of an argument
 * that fits it (its kind and access: a value's access is READ, as
 * MOX_ARG_VALUE writes it; the ordered path takes any other), its
 * built-in type, and a value's size (0: a buffer). */
typedef struct fast_param {
    uint64_t kind_access;
    const mox_type *type;
    uint32_t size;
} fast_param;
_Static_assert(offsetof(mox_arg, kind) == 0 && offsetof(mox_arg, access) == sizeof(mox_arg_kind) &&
                   sizeof(mox_arg_kind) + sizeof(mox_access) == sizeof(uint64_t),
               "mox_arg no longer starts with its kind and access");

typedef struct launch_memo {
    const mox_device *device;
    uint64_t id;
    const mox_module_desc *module;
    const mox__modinfo *info;
    mox__devmod *dm;                 /* NULL until a launch registered it */
    /* By kernel index modulo MEMO_KERNELS: the last geometry that passed
     * for that kernel (NULL: none), whether its grid is empty, and the
     * layout of the kernel's launch blocks on the device. */
    struct memo_kernel {
        const mox__kernel_check *kernel;
        mox_launch_config config;
        bool empty;
        mox__dispatch_layout layout;
        bool fast;             /* launch_fast takes it (fast_param below) */
        fast_param params[FAST_PARAMS];
    } passed[MEMO_KERNELS];
} launch_memo;

/* The calling thread's memo; `scratch`, zeroed, when it has none. */
static launch_memo *memo_get(launch_memo *scratch)
{
    launch_memo *m = mox__thread_block(MOX__SLOT_LAUNCH_MEMO, sizeof *m);
    if (__builtin_expect(m != NULL, 1))
        return m;
    memset(scratch, 0, sizeof *scratch);
    return scratch;
}

static bool memo_holds(const launch_memo *m, const mox_device *dev, const mox_module_desc *module)
{
    return m->device == dev && m->id == dev->id && m->module == module;
}

/* module_info's lookup when the memo holds another module or device. */
static __attribute__((noinline)) const mox__modinfo *
module_lookup(launch_memo *m, mox_device *dev, const mox_module_desc *module, mox_error **error)
{
    mox_error *transient;
    const mox__modinfo *info = mox__modinfo_get(module, &transient);
    if (!info) {
        *error = transient;
        return NULL;
    }
    if (info->error) {
        *error = mox__error_ref(info->error);
        return NULL;
    }
    memset(m, 0, sizeof *m);
    m->device = dev;
    m->id = dev->id;
    m->module = module;
    m->info = info;
    return info;
}

/* The module's registry entry; NULL with *error (a reference) on failure. */
static inline const mox__modinfo *module_info(launch_memo *m, mox_device *dev,
                                              const mox_module_desc *module, mox_error **error)
{
    return memo_holds(m, dev, module) ? m->info : module_lookup(m, dev, module, error);
}

/* The device's entry for the module (the memo holds the module's info). */
static mox__devmod *devmod_for(launch_memo *m, mox_device *dev, const mox__modinfo *info)
{
    if (!m->dm)
        m->dm = mox__devmod_get(dev, info);
    return m->dm;
}

/* Seven uint32_t fields, no padding: one compare of the bytes. */
_Static_assert(sizeof(mox_launch_config) == 7 * sizeof(uint32_t), "mox_launch_config has padding");
static bool same_config(const mox_launch_config *a, const mox_launch_config *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* What the buffer arguments placed so far say about the no-alias entry,
 * which is safe when no buffer the launch writes (a write or atomic
 * argument) is also another of its arguments: then no pointer the kernel
 * reads through can see a store through another. Distinct buffers never
 * overlap, so comparing the buffers is exact (a view is its buffer). */
typedef struct arg_scan {
    uint32_t written;       /* bit i: argument i is a write or atomic buffer */
    bool alias;             /* a written buffer is also another argument */
} arg_scan;

/* What launch_fast checks of kernel k's parameters, when it can take the
 * kernel (all built-in types, at most FAST_PARAMS). */
static void fast_params(struct memo_kernel *slot, const mox__kernel_check *k)
{
    slot->fast = k->all_builtin && k->param_count <= FAST_PARAMS;
    for (uint32_t i = 0; slot->fast && i < k->param_count; i++) {
        const mox__param_check *p = &k->params[i];
        bool buffer = p->kind == MOX_ARG_BUFFER;
        mox_arg a = {p->kind, buffer ? p->access : MOX_ACCESS_READ, NULL, NULL, NULL};
        memcpy(&slot->params[i].kind_access, &a, sizeof(uint64_t));
        slot->params[i].type = p->builtin;
        slot->params[i].size = buffer ? 0 : p->size;
    }
}

/* The required block, then the geometry (launch.h's order), then the
 * device's shared memory limit; skipped when the memo says this kernel
 * passed with this config on this device. */
static mox_op *check_geometry(launch_memo *m, mox_device *device, uint32_t kernel_index,
                              const mox__kernel_check *k, const mox_launch_config *c)
{
    struct memo_kernel *slot = &m->passed[kernel_index % MEMO_KERNELS];
    if (slot->kernel == k && same_config(&slot->config, c))
        return NULL;
    mox_launch_config config = *c;
    if (k->has_required_block &&
        (config.block.x != k->required_block.x || config.block.y != k->required_block.y ||
         config.block.z != k->required_block.z))
        return mox__launch_error(MOX_ERR_INVALID_LAUNCH, k->name,
                            "invalid launch of kernel '%s': block (%u,%u,%u) does not match the "
                            "kernel's required block (%u,%u,%u)",
                            k->name, config.block.x, config.block.y, config.block.z,
                            k->required_block.x, k->required_block.y, k->required_block.z);
    if (mox_launch_config_validate(&config, device->info.max_block,
                                   device->info.max_threads_per_block, NULL) != MOX_OK)
        return mox__launch_error(MOX_ERR_INVALID_LAUNCH, k->name, "kernel '%s': %s", k->name,
                            mox_error_last_message());
    if (config.shared_bytes > device->info.max_shared_bytes)
        return mox__launch_error(MOX_ERR_INVALID_LAUNCH, k->name,
                            "invalid launch of kernel '%s': %u bytes of dynamic shared memory exceed "
                            "the device's limit of %u bytes per block",
                            k->name, config.shared_bytes, device->info.max_shared_bytes);
    /* Its MOX_SHARED_DYNAMIC array would have no byte: any use of it is out
     * of bounds (a NULL pointer on the CPU, an illegal address on CUDA).
     * An empty grid runs nothing, so it may pass 0 (a size scaled by n). */
    if ((k->features & MOX_KFEAT_DYNAMIC_SHARED) && config.shared_bytes == 0 &&
        !mox_launch_config_is_empty(&config))
        return mox__launch_error(MOX_ERR_INVALID_LAUNCH, k->name,
                            "invalid launch of kernel '%s': it declares MOX_SHARED_DYNAMIC memory "
                            "but the launch gives it 0 bytes (set mox_launch_config.shared_bytes, "
                            "e.g. with mox_launch_config_with_shared)",
                            k->name);
    slot->kernel = k;
    slot->config = config;
    slot->empty = mox_launch_config_is_empty(&config);
    mox__launch_layout(device, k->param_count, k->value_bytes, &slot->layout);
    fast_params(slot, k);
    return NULL;
}

/* Buffer argument i (checked) into the dispatch: retained, its address
 * slot, compared with the earlier buffer arguments it may alias (each
 * pair where one of the two is written is compared once; the slots of
 * value arguments are NULL). */
static inline void put_buffer(mox__dispatch *d, const mox__dispatch_parts *parts, uint32_t i,
                              const mox_arg *a, arg_scan *scan)
{
    mox_buffer *b = mox__buffer_ref(a->buffer);
    if (a->access != MOX_ACCESS_READ) {
        for (uint32_t j = 0; j < i; j++)
            scan->alias |= d->args[j].buffer == b;
        scan->written |= 1u << i;
    } else {
        for (uint32_t w = scan->written; w; w &= w - 1)
            scan->alias |= d->args[__builtin_ctz(w)].buffer == b;
    }
    d->args[i].buffer = b;
    d->args[i].access = a->access;
    parts->addr[i] = b->address;
    parts->params[i] = &parts->addr[i];
}

/* The launch op of a dispatch whose arguments are in place. */
static inline __attribute__((always_inline)) mox_op *
finish_launch(mox__dispatch *d, mox_device *device, uint32_t kernel_index, const mox__kernel_check *k,
              const struct memo_kernel *slot, mox__devmod *dm, const arg_scan *scan)
{
    d->kernel = kernel_index;
    d->kernel_name = k->name;
    d->kernel_features = k->features;
    d->entry = scan->alias ? MOX__ENTRY_DEFAULT : MOX__ENTRY_NOALIAS;
    d->config = slot->config;
    d->devmod = dm;
    /* A module already loaded goes into the dispatch now (READY is final):
     * a batch whose dispatches all have theirs skips the check at its
     * first poll (op.c, modules_check). */
    if (atomic_load_explicit(&dm->state, memory_order_acquire) == MOX__MOD_READY)
        d->module = dm->handle;
    mox_op *op = mox__launch_op(d, device, slot->empty);
    if (mox__trace_on())
        mox__trace_op_launch(op, d);
    return op;
}

/* The launch op of checked arguments (whose geometry the memo holds): a
 * dispatch holding them, values copied. */
static mox_op *make_launch(launch_memo *m, mox_device *device, const mox__modinfo *info,
                           uint32_t kernel_index, const mox_arg *args, uint32_t arg_count)
{
    const mox__kernel_check *k = &info->kernels[kernel_index];
    const struct memo_kernel *slot = &m->passed[kernel_index % MEMO_KERNELS];
    mox__devmod *dm = devmod_for(m, device, info);
    mox__dispatch_parts parts;
    mox__dispatch *d = dm ? mox__launch_alloc(&slot->layout, &parts) : NULL;
    if (!d)
        return mox__op_failed(mox__error_oom());
    arg_scan scan = {0, false};
    size_t at = 0;
    for (uint32_t i = 0; i < arg_count; i++) {
        if (args[i].kind == MOX_ARG_BUFFER) {
            put_buffer(d, &parts, i, &args[i], &scan);
        } else {
            memcpy(parts.values + at, args[i].value, k->params[i].size);
            parts.params[i] = parts.values + at;
            at += ((size_t)k->params[i].size + 15u) & ~(size_t)15u;
        }
    }
    return finish_launch(d, device, kernel_index, k, slot, dm, &scan);
}

/* The common launch in one pass: a kernel whose parameters all have
 * built-in types, a geometry the memo says passed, and arguments that pass
 * mox__launch_args_pass's checks, checked while they are copied into the dispatch.
 * NULL (nothing kept) when any of that does not hold: the ordered path then
 * decides, so the error order of mox__launch_check_args and check_geometry stands. */
static mox_op *launch_fast(launch_memo *m, mox_device *device, const mox__modinfo *info,
                           uint32_t kernel_index, const mox_launch_config *config,
                           const mox_arg *args, uint32_t n)
{
    const mox__kernel_check *k = &info->kernels[kernel_index];
    const struct memo_kernel *slot = &m->passed[kernel_index % MEMO_KERNELS];
    if (slot->kernel != k || !slot->fast || n != k->param_count || !same_config(&slot->config, config))
        return NULL;
    mox__devmod *dm = devmod_for(m, device, info);
    mox__dispatch_parts parts;
    mox__dispatch *d = dm ? mox__launch_alloc(&slot->layout, &parts) : NULL;
    if (!d)
        return NULL; /* the ordered path reports it */
    arg_scan scan = {0, false};
    unsigned char *value = parts.values;
    for (uint32_t i = 0; i < n; i++) {
        const mox_arg *a = &args[i];
        const fast_param *p = &slot->params[i];
        MOX__CHECK_IN(a->buffer, BUFFER, "mox_launch_generated");
        uint64_t kind_access;
        memcpy(&kind_access, a, sizeof kind_access);
        if (kind_access != p->kind_access)
            goto slow;
        if (p->size == 0) {
            if (!a->buffer || a->buffer->device != device || a->buffer->type != p->type)
                goto slow;
            put_buffer(d, &parts, i, a, &scan);
        } else {
            if (!a->value || a->type != p->type)
                goto slow;
            /* built-in types have the parameter's size (same pointer) */
            if (p->size == 4)
                memcpy(value, a->value, 4);
            else if (p->size == 8)
                memcpy(value, a->value, 8);
            else
                memcpy(value, a->value, p->size);
            parts.params[i] = value;
            value += ((size_t)p->size + 15u) & ~(size_t)15u;
        }
    }
    return finish_launch(d, device, kernel_index, k, slot, dm, &scan);
slow:
    mox__launch_discard(d); /* releases the buffers retained so far */
    return NULL;
}

mox_op *mox_launch_generated(mox_device *device, const mox_module_desc *module,
                             uint32_t kernel_index, mox_launch_config config, const mox_arg *args,
                             uint32_t arg_count)
{
    MOX__CHECK(device, DEVICE);
    if (!device || !module || (arg_count && !args))
        return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, NULL,
                            "mox_launch_generated: %s is NULL",
                            !device ? "device" : !module ? "module" : "args");
    launch_memo scratch;
    launch_memo *m = memo_get(&scratch);
    mox_error *failed = NULL;
    const mox__modinfo *info = module_info(m, device, module, &failed);
    if (!info)
        return mox__op_failed(failed);
    if (kernel_index >= info->kernel_count)
        return mox__launch_error(MOX_ERR_KERNEL_NOT_FOUND, NULL,
                            "module '%s' has no kernel %u (it has %u)", module->name, kernel_index,
                            info->kernel_count);
    mox_op *fast = launch_fast(m, device, info, kernel_index, &config, args, arg_count);
    if (fast)
        return fast;
    const mox__kernel_check *k = &info->kernels[kernel_index];
    if (!mox__launch_args_pass(device, k, args, arg_count)) {
        mox_op *bad = mox__launch_check_args(device, k, args, arg_count);
        if (bad)
            return bad;
    }
    mox_op *bad = check_geometry(m, device, kernel_index, k, &config);
    if (bad)
        return bad;
    return make_launch(m, device, info, kernel_index, args, arg_count);
}

mox_status mox_module_prepare(mox_device *device, const mox_module_desc *module)
{
    MOX__CHECK(device, DEVICE);
    if (!device || !module)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_module_prepare: %s is NULL",
                         device ? "module" : "device");
    launch_memo scratch;
    launch_memo *m = memo_get(&scratch);
    mox_error *failed = NULL;
    const mox__modinfo *info = module_info(m, device, module, &failed);
    if (!info)
        return mox__set_last(failed);
    mox__devmod *dm = devmod_for(m, device, info);
    if (!dm)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory registering module");

    /* Preparation always runs on the worker, so concurrent first uses of
     * the module share one load; this call just waits for it. */
    mox__waker_cell cell;
    mox__cell_init(&cell);
    cell.untraced = true; /* no op's: no wake event on an op's track */
    mox__parker parker;
    mox__parker_init(&parker);
    mox__cell_arm(&cell, (mox_waker){mox__parker_unpark, &parker});
    mox__lock(&device->lock);
    mox__devmod_retry_locked(dm);
    int st = atomic_load(&dm->state);
    if (st == MOX__MOD_NONE)
        mox__devmod_request(device, dm);
    while ((st = atomic_load(&dm->state)) != MOX__MOD_READY && st != MOX__MOD_FAILED) {
        mox__wait_list_add(&dm->waiters, &cell);
        mox__unlock(&device->lock);
        mox__parker_park(&parker);
        mox__cell_arm(&cell, (mox_waker){mox__parker_unpark, &parker});
        mox__lock(&device->lock);
    }
    mox__wait_list_remove(&cell);
    mox__unlock(&device->lock);
    mox__cell_quiesce(&cell);
    mox__cell_destroy(&cell);
    mox__parker_destroy(&parker);
    if (st == MOX__MOD_FAILED)
        return mox__set_last(mox__devmod_error(device, dm));
    return MOX_OK;
}
