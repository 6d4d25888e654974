/* module.c - the process-wide registry of module descriptors: each
 * descriptor's ABI is parsed and checked once per process, and its
 * per-parameter checks (kind, access, layout signature) precomputed so that
 * validating a launch is a few string comparisons. Also the artifact
 * directory override (the lookup order is artifact_path.c's). */
#include "module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "artifact_path.h"
#include "artifact/sha256.h"
#include "error.h"

/* Lookup is lock-free (the hot path of every launch): an open-addressing
 * table of atomic pointers that only ever grows by insertion under
 * `registry_lock`. Entries live for the process. Past the table's size the
 * overflow list is searched under the lock. */
#define TABLE_SIZE 256u
static _Atomic(mox__modinfo *) table[TABLE_SIZE];
static mox__modinfo *overflow;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_ptr(const void *p)
{
    uintptr_t v = (uintptr_t)p;
    v ^= v >> 17;
    v *= UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(v >> 32) & (TABLE_SIZE - 1u);
}

static void free_info(mox__modinfo *info)
{
    if (!info)
        return;
    for (uint32_t k = 0; k < info->kernel_count && info->kernels; k++) {
        for (uint32_t p = 0; p < info->kernels[k].param_count; p++)
            mox__free(info->kernels[k].params[p].signature);
        mox__free(info->kernels[k].params);
    }
    mox__free(info->kernels);
    if (info->abi)
        mox_abi_free(info->abi);
    mox_error_release(info->error);
    mox__free(info);
}

/* Built-in element types by signature: most launch arguments use them, and
 * a pointer comparison then replaces a strcmp per argument. */
static const mox_type *builtin_type(const char *signature)
{
    static const mox_type *const all[] = {&mox_type_f32, &mox_type_f16, &mox_type_u32,
                                          &mox_type_i32, &mox_type_u16, &mox_type_i16,
                                          &mox_type_u8,  &mox_type_i8,  &mox_type_f32x2,
                                          &mox_type_f32x3, &mox_type_f32x4, &mox_type_i32x2,
                                          &mox_type_i32x3, &mox_type_i32x4, &mox_type_u32x2,
                                          &mox_type_u32x3, &mox_type_u32x4, &mox_type_f16x2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->signature, signature) == 0)
            return all[i];
    return NULL;
}

static mox_error *build_checks(mox__modinfo *info)
{
    const mox_abi *abi = info->abi;
    info->kernels = mox__calloc(abi->kernel_count, sizeof *info->kernels);
    if (!info->kernels)
        return mox__error_oom();
    info->kernel_count = (uint32_t)abi->kernel_count;
    for (size_t k = 0; k < abi->kernel_count; k++) {
        const mox_abi_kernel *ak = &abi->kernels[k];
        mox__kernel_check *kc = &info->kernels[k];
        kc->name = ak->name;
        kc->has_required_block = ak->has_required_block;
        kc->required_block = mox_dim3_make(ak->required_block[0], ak->required_block[1],
                                           ak->required_block[2]);
        kc->features = ak->features;
        kc->params = mox__calloc(ak->param_count, sizeof *kc->params);
        if (!kc->params)
            return mox__error_oom();
        kc->param_count = (uint32_t)ak->param_count;
        kc->all_builtin = true;
        for (size_t p = 0; p < ak->param_count; p++) {
            const mox_abi_param *ap = &ak->params[p];
            mox__param_check *pc = &kc->params[p];
            pc->name = ap->name;
            pc->kind = ap->kind == MOX_PARAM_BUFFER ? MOX_ARG_BUFFER : MOX_ARG_VALUE;
            pc->access = ap->access == MOX_PARAM_WRITE    ? MOX_ACCESS_WRITE
                         : ap->access == MOX_PARAM_ATOMIC ? MOX_ACCESS_ATOMIC
                                                          : MOX_ACCESS_READ;
            pc->size = (uint32_t)ap->layout->size;
            pc->align = (uint32_t)ap->layout->align;
            pc->signature = mox_abi_layout_signature(ap->layout);
            if (!pc->signature)
                return mox__error_oom();
            pc->builtin = builtin_type(pc->signature);
            kc->all_builtin &= pc->builtin != NULL;
            if (pc->kind == MOX_ARG_VALUE)
                kc->value_bytes += (pc->size + 15u) & ~15u;
        }
    }
    return NULL;
}

static mox_error *out_of_memory(const char *name)
{
    return mox__error_new(MOX_ERR_OUT_OF_MEMORY, "out of memory registering module '%s'", name);
}

/* The embedded ABI, parsed and written back: the text is moxc's canonical
 * JSON (its hash was checked), so the written text must be the same bytes.
 * jansson's parser can lose bytes when its own allocations fail
 * (docs/errors.md), which this catches; since that may be transient, a
 * mismatch is not kept either (a hand-made descriptor fails each launch).
 * Returns the descriptor's own error, or NULL with *transient set when
 * this attempt failed for a reason that may pass. */
static mox_error *parse_abi(mox__modinfo *info, const char *name, mox_error **transient)
{
    const mox_module_desc *desc = info->desc;
    mox_artifact_error aerr = {0};
    if (!mox_abi_from_json(desc->abi_json, strlen(desc->abi_json), &info->abi, &aerr)) {
        info->abi = NULL;
        if (aerr.out_of_memory)
            *transient = out_of_memory(name);
        return aerr.out_of_memory ? NULL
                                  : mox__error_new(MOX_ERR_ABI_MISMATCH,
                                                   "module '%s': invalid embedded ABI: %s", name,
                                                   aerr.message);
    }
    char *canonical = mox_abi_to_json(info->abi);
    if (!canonical)
        *transient = out_of_memory(name);
    else if (strcmp(canonical, desc->abi_json) != 0)
        *transient = mox__error_new(MOX_ERR_ABI_MISMATCH,
                                    "module '%s': the embedded ABI does not read back as the same "
                                    "text (the bindings were not written by this moxc, or memory "
                                    "ran out while it was read)",
                                    name);
    mox__free(canonical);
    return NULL;
}

/* Checks what the descriptor says about itself: NULL when it is usable or
 * when *transient says this attempt could not tell. */
static mox_error *check_desc(mox__modinfo *info, const char *name, mox_error **transient)
{
    const mox_module_desc *desc = info->desc;
    if (!desc->abi_json || !desc->abi_sha256)
        return mox__error_new(MOX_ERR_ABI_MISMATCH, "module '%s': descriptor has no ABI or ABI hash",
                              name);
    char hex[MOX_SHA256_HEX_LEN + 1];
    if (!mox_sha256_hex(desc->abi_json, strlen(desc->abi_json), hex)) {
        *transient = mox__error_new(MOX_ERR_OUT_OF_MEMORY, "module '%s': " MOX_SHA256_FAILED, name);
        return NULL;
    }
    if (strcmp(hex, desc->abi_sha256) != 0)
        return mox__error_new(MOX_ERR_ABI_MISMATCH,
                              "module '%s': the descriptor's ABI text does not match its "
                              "abi_sha256 (bindings corrupted or hand-edited)",
                              name);
    mox_error *e = parse_abi(info, name, transient);
    if (e || *transient)
        return e;
    if (desc->kernel_count != info->abi->kernel_count)
        return mox__error_new(MOX_ERR_ABI_MISMATCH, "module '%s': descriptor lists %u kernels, its ABI %zu",
                              name, desc->kernel_count, info->abi->kernel_count);
    for (uint32_t k = 0; k < desc->kernel_count; k++)
        if (!desc->kernel_names || !desc->kernel_names[k] ||
            strcmp(desc->kernel_names[k], info->abi->kernels[k].name) != 0)
            return mox__error_new(MOX_ERR_ABI_MISMATCH,
                                  "module '%s': descriptor kernel %u is not ABI kernel '%s'", name, k,
                                  info->abi->kernels[k].name);
    return NULL;
}

/* Parses and checks a descriptor. A problem of the descriptor itself
 * becomes info->error, reported by every launch of the module; a failed
 * allocation is no property of the descriptor, so then nothing is kept:
 * NULL, *transient says why, and the next launch tries again. */
static mox__modinfo *make_info(const mox_module_desc *desc, mox_error **transient)
{
    const char *name = desc->name ? desc->name : "(unnamed)";
    mox__modinfo *info = mox__calloc(1, sizeof *info);
    if (!info) {
        *transient = out_of_memory(name);
        return NULL;
    }
    info->desc = desc;
    info->error = check_desc(info, name, transient);
    if (!*transient && !info->error) {
        mox_error *e = build_checks(info);
        if (e)
            *transient = e;
    }
    /* Even the descriptor's error may have found no memory for its text. */
    if (!*transient && mox_error_code(info->error) == MOX_ERR_OUT_OF_MEMORY)
        *transient = mox__error_ref(info->error);
    if (*transient) {
        free_info(info);
        return NULL;
    }
    return info;
}

static mox__modinfo *lookup_locked(const mox_module_desc *desc, uint32_t *free_slot)
{
    uint32_t h = hash_ptr(desc);
    *free_slot = UINT32_MAX;
    for (uint32_t i = 0; i < TABLE_SIZE; i++) {
        uint32_t s = (h + i) & (TABLE_SIZE - 1u);
        mox__modinfo *m = atomic_load_explicit(&table[s], memory_order_acquire);
        if (!m) {
            *free_slot = s;
            return NULL;
        }
        if (m->desc == desc)
            return m;
    }
    for (mox__modinfo *m = overflow; m; m = m->next_overflow)
        if (m->desc == desc)
            return m;
    return NULL;
}

const mox__modinfo *mox__modinfo_get(const mox_module_desc *desc, mox_error **error)
{
    *error = NULL;
    uint32_t h = hash_ptr(desc);
    for (uint32_t i = 0; i < TABLE_SIZE; i++) {
        mox__modinfo *m = atomic_load_explicit(&table[(h + i) & (TABLE_SIZE - 1u)],
                                               memory_order_acquire);
        if (!m)
            break;
        if (m->desc == desc)
            return m;
    }
    pthread_mutex_lock(&registry_lock);
    uint32_t slot;
    mox__modinfo *m = lookup_locked(desc, &slot);
    if (!m) {
        m = make_info(desc, error);
        if (m) {
            if (slot != UINT32_MAX) {
                atomic_store_explicit(&table[slot], m, memory_order_release);
            } else {
                m->next_overflow = overflow;
                overflow = m;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return m;
}

mox_status mox_module_set_artifact_dir(const mox_module_desc *module, const char *dir)
{
    if (!module)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_module_set_artifact_dir: module is NULL");
    if (dir && !*dir)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT,
                         "mox_module_set_artifact_dir: empty directory (pass NULL to restore the default)");
    mox_error *transient;
    mox__modinfo *info = (mox__modinfo *)mox__modinfo_get(module, &transient);
    if (!info)
        return mox__set_last(transient);
    char *copy = NULL;
    if (dir && !(copy = mox__str_dup(dir)))
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory registering module");
    pthread_mutex_lock(&registry_lock);
    if (info->used) {
        pthread_mutex_unlock(&registry_lock);
        mox__free(copy);
        return mox__raise(MOX_ERR_STATE,
                         "module '%s' was already looked up by a device (loaded, or failed to load); set "
                         "its artifact directory before first use, or use %s",
                         module->name ? module->name : "(unnamed)",
                         module->artifact_env ? module->artifact_env : "MOX_ARTIFACT_ROOT");
    }
    mox__free(info->override_dir);
    info->override_dir = copy;
    pthread_mutex_unlock(&registry_lock);
    return MOX_OK;
}

char *mox__modinfo_artifact_dir(const mox__modinfo *cinfo, bool *chosen)
{
    mox__modinfo *info = (mox__modinfo *)cinfo;
    const mox_module_desc *desc = info->desc;
    pthread_mutex_lock(&registry_lock);
    info->used = true;
    char *override = info->override_dir ? mox__str_dup(info->override_dir) : NULL;
    bool override_oom = info->override_dir && !override;
    pthread_mutex_unlock(&registry_lock);
    if (override_oom)
        return NULL;

    *chosen = mox__artifact_chosen(desc, override);
    char *dir = mox__artifact_locate(desc, override);
    mox__free(override);
    return dir;
}
