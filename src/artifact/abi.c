/* abi.c - the ABI model's lifetime and its validation: every rule of
 * docs/abi.md, each failure named by kernel and parameter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"

void mox_abi_free(mox_abi *abi)
{
    if (!abi)
        return;
    for (size_t k = 0; abi->kernels && k < abi->kernel_count; k++) {
        mox_abi_kernel *kernel = &abi->kernels[k];
        for (size_t p = 0; kernel->params && p < kernel->param_count; p++) {
            mox__free(kernel->params[p].name);
            mox_abi_layout_free(kernel->params[p].layout);
        }
        mox__free(kernel->params);
        mox__free(kernel->name);
    }
    mox__free(abi->kernels);
    mox__free(abi);
}

static const char *scalar_text(const mox_abi_layout *l)
{
    if (l->kind == MOX_LAYOUT_ARRAY)
        return "array";
    if (l->kind == MOX_LAYOUT_RECORD)
        return "record";
    if (l->kind == MOX_LAYOUT_VECTOR)
        return "vector";
    return mox_scalar_name(l->scalar);
}

uint32_t mox_abi_required_version(const mox_abi *abi)
{
    for (size_t k = 0; abi && k < abi->kernel_count; k++)
        if (abi->kernels[k].features & MOX_KFEAT_DYNAMIC_SHARED)
            return 2;
    for (size_t k = 0; abi && k < abi->kernel_count; k++)
        for (size_t p = 0; abi->kernels[k].params && p < abi->kernels[k].param_count; p++)
            if (abi->kernels[k].params[p].kind == MOX_PARAM_TABLE ||
                mox__layout_needs_v2(abi->kernels[k].params[p].layout))
                return 2;
    return 1;
}

/* A version-1 ABI cannot hold what version 2 added. */
static bool validate_version_needs(const mox_abi *abi, mox_artifact_error *err)
{
    if (abi->version >= 2)
        return true;
    for (size_t k = 0; k < abi->kernel_count; k++) {
        if (abi->kernels[k].features & MOX_KFEAT_DYNAMIC_SHARED)
            return mox__fail(err, "kernel %s uses dynamic shared memory, which needs kernel ABI version 2 "
                             "(this ABI is version %" PRIu32 ")", abi->kernels[k].name, abi->version);
        for (size_t p = 0; p < abi->kernels[k].param_count; p++) {
            const mox_abi_param *param = &abi->kernels[k].params[p];
            if (param->kind == MOX_PARAM_TABLE)
                return mox__fail(err, "kernel %s parameter %s is a table, which needs kernel ABI version 2 "
                                 "(this ABI is version %" PRIu32 ")", abi->kernels[k].name, param->name,
                                 abi->version);
            if (mox__layout_needs_v2(param->layout))
                return mox__fail(err, "kernel %s parameter %s uses a vector or an over-aligned record "
                                 "field, which need kernel ABI version 2 (this ABI is version %" PRIu32 ")",
                                 abi->kernels[k].name, param->name, abi->version);
        }
    }
    return true;
}

static bool validate_param(const mox_abi_kernel *kernel, size_t index, mox_artifact_error *err)
{
    const mox_abi_param *param = &kernel->params[index];
    const char *k = kernel->name;
    const char *name = param->name ? param->name : "";
    char what[sizeof err->message];

    if (param->binding != index)
        return mox__fail(err, "kernel %s has a nonsequential binding (parameter %zu \"%s\" has "
                         "binding %" PRIu32 ", expected %zu)", k, index, name, param->binding, index);
    if (!mox__is_identifier(name))
        return mox__fail(err, "kernel %s parameter name \"%s\" is not a valid identifier", k, name);
    for (size_t j = 0; j < index; j++)
        if (strcmp(name, kernel->params[j].name) == 0)
            return mox__fail(err, "kernel %s has a duplicate parameter name \"%s\"", k, name);
    if (param->kind == MOX_PARAM_BUFFER) {
        if ((unsigned)param->access > MOX_PARAM_ATOMIC)
            return mox__fail(err, "kernel %s parameter %s has an unknown access mode %d", k, name,
                             (int)param->access);
        mox__format(what, sizeof what, "kernel %s parameter %s element", k, name);
    } else if (param->kind == MOX_PARAM_VALUE || param->kind == MOX_PARAM_TABLE) {
        mox__format(what, sizeof what, "kernel %s parameter %s", k, name);
        if (param->kind == MOX_PARAM_TABLE && (!param->layout || param->layout->kind != MOX_LAYOUT_ARRAY))
            return mox__fail(err, "kernel %s parameter %s is a table, whose layout must be an array", k, name);
    } else {
        return mox__fail(err, "kernel %s parameter %s has an unknown kind %d", k, name, (int)param->kind);
    }
    if (!mox__layout_check(param->layout, what, err))
        return false;
    if (param->kind == MOX_PARAM_BUFFER && param->access == MOX_PARAM_ATOMIC) {
        const mox_abi_layout *e = param->layout;
        if (e->kind != MOX_LAYOUT_SCALAR || (e->scalar != MOX_SCALAR_U32 && e->scalar != MOX_SCALAR_I32))
            return mox__fail(err, "kernel %s requires integer atomic elements (parameter %s has %s "
                             "elements; atomic buffers hold u32 or i32)", k, name, scalar_text(e));
        if (!(kernel->features & MOX_KFEAT_ATOMICS))
            return mox__fail(err, "kernel %s has the atomic buffer parameter %s but does not list "
                             "the \"atomics\" feature", k, name);
    }
    return true;
}

static bool validate_kernel(const mox_abi *abi, size_t index, mox_artifact_error *err)
{
    const mox_abi_kernel *kernel = &abi->kernels[index];
    const char *k = kernel->name ? kernel->name : "";
    if (!mox__is_identifier(k))
        return mox__fail(err, "kernel name \"%s\" is not a valid identifier", k);
    for (size_t j = 0; j < index; j++)
        if (strcmp(k, abi->kernels[j].name) == 0)
            return mox__fail(err, "duplicate kernel name \"%s\"", k);
    if (kernel->features >> MOX__KFEATURE_COUNT)
        return mox__fail(err, "kernel %s has unknown feature bits 0x%" PRIx32, k,
                         kernel->features & ~((1u << MOX__KFEATURE_COUNT) - 1));
    if (kernel->param_count > MOX_ABI_MAX_PARAMS)
        return mox__fail(err, "kernel %s exceeds %d parameters (it has %zu)", k, MOX_ABI_MAX_PARAMS,
                         kernel->param_count);
    if (kernel->param_count && !kernel->params)
        return mox__fail(err, "kernel %s has no parameter array", k);
    for (size_t p = 0; p < kernel->param_count; p++)
        if (!validate_param(kernel, p, err))
            return false;
    if (kernel->has_required_block) {
        const uint32_t *b = kernel->required_block;
        uint64_t product = (uint64_t)b[0] * b[1];
        if (b[0] == 0 || b[1] == 0 || b[2] == 0 || product > UINT32_MAX ||
            product * b[2] > UINT32_MAX)
            return mox__fail(err, "kernel %s has an invalid block requirement (%" PRIu32 ", %" PRIu32
                             ", %" PRIu32 "): every axis must be non-zero and the product must "
                             "fit in 32 bits", k, b[0], b[1], b[2]);
    }
    return true;
}

bool mox_abi_validate(const mox_abi *abi, mox_artifact_error *err)
{
    if (!abi)
        return mox__fail(err, "no ABI");
    if (abi->version < MOX_ABI_VERSION_MIN || abi->version > MOX_ABI_VERSION)
        return mox__fail(err, "unsupported kernel ABI version %" PRIu32 " (this mox reads versions %d to %d)",
                         abi->version, MOX_ABI_VERSION_MIN, MOX_ABI_VERSION);
    if (abi->required_features >> MOX__FEATURE_COUNT)
        return mox__fail(err, "ABI has unknown required feature bits 0x%" PRIx32,
                         abi->required_features & ~((1u << MOX__FEATURE_COUNT) - 1));
    if (abi->kernel_count == 0 || !abi->kernels)
        return mox__fail(err, "artifact contains no kernels");
    for (size_t k = 0; k < abi->kernel_count; k++)
        if (!validate_kernel(abi, k, err))
            return false;
    if (!validate_version_needs(abi, err))
        return false;
    /* required_features is exactly what the kernels need, so a device check
     * against it cannot be stale. */
    static const struct {
        uint32_t module_bit, kernel_bit;
    } derived[MOX__FEATURE_COUNT] = {
        {MOX_FEAT_ATOMICS, MOX_KFEAT_ATOMICS},
        {MOX_FEAT_WARP_OPS, MOX_KFEAT_WARP},
    };
    for (int f = 0; f < MOX__FEATURE_COUNT; f++) {
        const char *user = NULL;
        for (size_t k = 0; k < abi->kernel_count && !user; k++)
            if (abi->kernels[k].features & derived[f].kernel_bit)
                user = abi->kernels[k].name;
        bool listed = (abi->required_features & derived[f].module_bit) != 0;
        if (user && !listed)
            return mox__fail(err, "required_features must list \"%s\": kernel %s needs it",
                             mox__feature_names[f], user);
        if (!user && listed)
            return mox__fail(err, "required_features lists \"%s\" but no kernel needs it",
                             mox__feature_names[f]);
    }
    return true;
}
