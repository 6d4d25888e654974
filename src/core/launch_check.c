/* launch_check.c - the argument checks of a generated launch (module.h's
 * order: device mismatch, argument count limit, ABI count, kinds, access
 * modes and types), each failure a resolved op naming the kernel and the
 * argument; and the one-pass test launch.c uses to skip them in the common
 * case. The geometry checks stay in launch.c (they use its memo). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "debug_check.h"
#include "error.h"
#include "launch_check.h"
#include "op.h"
#include "type_check.h"

static const char *access_name(mox_access a)
{
    return a == MOX_ACCESS_WRITE ? "write" : a == MOX_ACCESS_ATOMIC ? "atomic" : "read";
}
static const char *arg_name(const mox__kernel_check *k, uint32_t i, char buf[16])
{
    if (k && i < k->param_count)
        return k->params[i].name;
    snprintf(buf, 16, "#%u", i);
    return buf;
}

mox_op *mox__launch_error(mox_status code, const char *kernel, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mox_error *e = mox__error_createv(code, kernel, 0, NULL, fmt, ap);
    va_end(ap);
    return mox__op_failed(e);
}

/* A value's type that is the parameter's: the same signature, size and
 * alignment. The parameter's are its ABI layout's, validated, so such a
 * descriptor is consistent without parsing its signature. */
static bool value_type_matches(const mox_type *t, const mox__param_check *p)
{
    return t->size == p->size && t->align == p->align && strcmp(t->signature, p->signature) == 0;
}

/* Why a value's type is refused: MOX_ERR_INVALID_ARGUMENT when the
 * descriptor is no type at all (a size or alignment its signature does not
 * give, a signature that does not parse: type_check.h), else
 * MOX_ERR_ABI_MISMATCH naming both signatures, and both sizes where the
 * signatures are equal. */
static mox_op *value_mismatch(const char *kn, const mox__param_check *p, const mox_type *t)
{
    char why[400];
    if (!mox__type_check(t, why, sizeof why))
        return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, kn, "kernel '%s' argument '%s': value type '%s': %s", kn,
                                 p->name, t->name ? t->name : t->signature, why);
    if (strcmp(t->signature, p->signature) == 0) /* not reached: both sizes follow the signature */
        return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn,
                                 "kernel '%s' argument '%s' must be a value of %s (%u bytes, alignment %u), got "
                                 "one of %u bytes, alignment %u",
                                 kn, p->name, p->signature, p->size, p->align, t->size, t->align);
    return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn, "kernel '%s' argument '%s' must be a value of %s, got %s", kn,
                             p->name, p->signature, t->signature);
}

mox_op *mox__launch_check_args(mox_device *dev, const mox__kernel_check *k, const mox_arg *args,
                               uint32_t n)
{
    char nb[16];
    const char *kn = k->name;
    for (uint32_t i = 0; i < n; i++)
        if (MOX__CHECK_IN(args[i].buffer, BUFFER, "mox_launch_generated"), args[i].kind == MOX_ARG_BUFFER && args[i].buffer &&
            args[i].buffer->device != dev)
            return mox__launch_error(MOX_ERR_DEVICE_MISMATCH, kn,
                                "kernel '%s' argument '%s': the buffer belongs to another device "
                                "context (context %llu; the launch is on context %llu)",
                                kn, arg_name(k, i, nb),
                                (unsigned long long)args[i].buffer->device->id,
                                (unsigned long long)dev->id);
    if (n > MOX_MAX_PARAMS)
        return mox__launch_error(MOX_ERR_TOO_MANY_ARGUMENTS, kn,
                            "kernel '%s': %u arguments exceed the limit of %d", kn, n,
                            MOX_MAX_PARAMS);
    if (n != k->param_count)
        return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn, "kernel '%s' requires %u arguments, got %u",
                            kn, k->param_count, n);
    for (uint32_t i = 0; i < n; i++) {
        const mox_arg *a = &args[i];
        const mox__param_check *p = &k->params[i];
        if (a->kind != MOX_ARG_BUFFER && a->kind != MOX_ARG_VALUE)
            return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, kn,
                                "kernel '%s' argument '%s': unknown argument kind %d", kn, p->name,
                                (int)a->kind);
        if (a->kind != p->kind)
            return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn,
                                "kernel '%s' argument '%s' must be a %s, got a %s", kn, p->name,
                                p->kind == MOX_ARG_BUFFER ? "buffer" : "value",
                                a->kind == MOX_ARG_BUFFER ? "buffer" : "value");
        if (a->kind == MOX_ARG_BUFFER) {
            if (!a->buffer)
                return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, kn,
                                    "kernel '%s' argument '%s': the buffer is NULL", kn, p->name);
            if ((unsigned)a->access > MOX_ACCESS_ATOMIC)
                return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, kn,
                                    "kernel '%s' argument '%s': unknown access mode %d", kn,
                                    p->name, (int)a->access);
            if (a->access != p->access)
                return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn,
                                    "kernel '%s' argument '%s' must be a %s buffer, got %s access",
                                    kn, p->name, access_name(p->access), access_name(a->access));
            const char *sig = a->buffer->type->signature;
            char why[200];
            if (a->buffer->type != p->builtin && strcmp(sig, p->signature) != 0 &&
                !mox__view_allowed(a->buffer, p, why, sizeof why))
                return mox__launch_error(MOX_ERR_ABI_MISMATCH, kn,
                                    "kernel '%s' argument '%s' must be a buffer of %s, got a "
                                    "buffer of %s (%s)",
                                    kn, p->name, p->signature, sig, why);
        } else {
            if (!a->value || !a->type || !a->type->signature)
                return mox__launch_error(MOX_ERR_INVALID_ARGUMENT, kn,
                                    "kernel '%s' argument '%s': the value or its type is NULL", kn,
                                    p->name);
            if (a->type != p->builtin && !value_type_matches(a->type, p))
                return value_mismatch(kn, p, a->type);
        }
    }
    return NULL;
}

/* Whether every argument passes mox__launch_check_args, in one pass over them: the
 * common case (buffers and values of built-in types, of the launch's
 * device). When it does not, check_args finds the first error in the
 * documented order (or that a view or record type passes after all). */
bool mox__launch_args_pass(const mox_device *dev, const mox__kernel_check *k, const mox_arg *args,
                           uint32_t n)
{
    if (n != k->param_count || n > MOX_MAX_PARAMS)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const mox_arg *a = &args[i];
        const mox__param_check *p = &k->params[i];
        MOX__CHECK_IN(a->buffer, BUFFER, "mox_launch_generated");
        if (a->kind != p->kind || !p->builtin)
            return false;
        if (a->kind == MOX_ARG_BUFFER) {
            if (!a->buffer || a->buffer->device != dev || a->access != p->access ||
                a->buffer->type != p->builtin)
                return false;
        } else if (a->kind != MOX_ARG_VALUE || !a->value || a->type != p->builtin ||
                   a->type->size != p->size) {
            return false;
        }
    }
    return true;
}
