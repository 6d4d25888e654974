/* wl_plan.c - building workload instances: slots, plans, launches and
 * their arguments (see wl.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl.h"

static void wl_bug(const char *what)
{
    fprintf(stderr, "workload definition error: %s\n", what);
    abort();
}

uint32_t wl_slot_add(wl_instance *in, const char *name, const mox_type *type, size_t length, const void *init)
{
    if (in->slot_count >= WL_MAX_SLOTS)
        wl_bug("more than WL_MAX_SLOTS slots");
    wl_slot *s = &in->slots[in->slot_count];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->type = type;
    s->length = length;
    s->init = init;
    return in->slot_count++;
}

uint32_t wl_symbol_add(wl_instance *in, const char *symbol, size_t bytes, const void *init)
{
    uint32_t s = wl_slot_add(in, symbol, &mox_type_u8, bytes, init);
    in->slots[s].symbol = symbol;
    return s;
}

size_t wl_slot_bytes(const wl_instance *in, uint32_t s)
{
    return in->slots[s].length * in->slots[s].type->size;
}

bool wl_kernel(const wl_instance *in, const char *name, uint32_t *index, char *err, size_t err_len)
{
    const mox_module_desc *m = in->workload->module;
    for (uint32_t k = 0; k < m->kernel_count; k++)
        if (strcmp(m->kernel_names[k], name) == 0) {
            *index = k;
            return true;
        }
    snprintf(err, err_len, "module %s has no kernel %s", m->name, name);
    return false;
}

void wl_plan_init(wl_plan *p, const char *const *kernels, uint32_t kernel_count)
{
    memset(p, 0, sizeof *p);
    p->kernels = kernels;
    p->kernel_count = kernel_count;
}

wl_launch *wl_plan_add(wl_plan *p, uint32_t kernel, mox_launch_config cfg)
{
    if (kernel >= p->kernel_count)
        wl_bug("launch of a kernel the plan does not name");
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        wl_launch *grown = realloc(p->launches, cap * sizeof *grown);
        if (!grown)
            return NULL;
        p->launches = grown;
        p->cap = cap;
    }
    wl_launch *l = &p->launches[p->count++];
    memset(l, 0, sizeof *l);
    l->kernel = kernel;
    l->cfg = cfg;
    return l;
}

void wl_plan_output(wl_plan *p, uint32_t slot)
{
    if (p->output_count >= WL_MAX_SLOTS)
        wl_bug("more than WL_MAX_SLOTS outputs");
    p->outputs[p->output_count++] = slot;
}

static wl_arg *next_arg(wl_launch *l)
{
    if (l->arg_count >= WL_MAX_ARGS)
        wl_bug("more than WL_MAX_ARGS arguments");
    wl_arg *a = &l->args[l->arg_count++];
    memset(a, 0, sizeof *a);
    return a;
}

void wl_arg_buffer(wl_launch *l, mox_access access, uint32_t slot, size_t offset)
{
    wl_arg *a = next_arg(l);
    a->kind = WL_ARG_BUFFER;
    a->access = access;
    a->slot = slot;
    a->offset = offset;
}

void wl_arg_value(wl_launch *l, const mox_type *type, const void *value)
{
    if (type->size > WL_VALUE_BYTES)
        wl_bug("a value argument larger than WL_VALUE_BYTES");
    wl_arg *a = next_arg(l);
    a->kind = WL_ARG_VALUE;
    a->type = type;
    a->size = type->size;
    memcpy(a->value, value, type->size);
}

void wl_arg_table(wl_launch *l, const mox_type *type, const void *data)
{
    wl_arg *a = next_arg(l);
    a->kind = WL_ARG_VALUE;
    a->type = type;
    a->size = type->size;
    a->data = data;
}

void wl_table_type(mox_type *out, const mox_type *element, uint32_t count, char *sig, size_t sig_len)
{
    snprintf(sig, sig_len, "[%s;%u]", element->signature, count);
    out->name = sig;
    out->signature = sig;
    out->size = element->size * count;
    out->align = element->align;
}

void wl_arg_u32(wl_launch *l, uint32_t v)
{
    wl_arg_value(l, &mox_type_u32, &v);
}

void wl_arg_i32(wl_launch *l, int32_t v)
{
    wl_arg_value(l, &mox_type_i32, &v);
}

void wl_arg_f32(wl_launch *l, float v)
{
    wl_arg_value(l, &mox_type_f32, &v);
}

void wl_args(wl_launch *l, const char *spec, ...)
{
    va_list ap;
    va_start(ap, spec);
    for (const char *c = spec; *c; c++) {
        switch (*c) {
        case 'R':
            wl_arg_buffer(l, MOX_ACCESS_READ, va_arg(ap, uint32_t), 0);
            break;
        case 'W':
            wl_arg_buffer(l, MOX_ACCESS_WRITE, va_arg(ap, uint32_t), 0);
            break;
        case 'A':
            wl_arg_buffer(l, MOX_ACCESS_ATOMIC, va_arg(ap, uint32_t), 0);
            break;
        case 'u':
            wl_arg_u32(l, va_arg(ap, uint32_t));
            break;
        case 'i':
            wl_arg_i32(l, va_arg(ap, int32_t));
            break;
        case 'f':
            wl_arg_f32(l, (float)va_arg(ap, double));
            break;
        default:
            wl_bug("wl_args: unknown argument letter");
        }
    }
    va_end(ap);
}

mox_launch_config wl_cfg(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by)
{
    return mox_launch_config_make(mox_dim3_make(gx, gy, 1), mox_dim3_make(bx, by, 1));
}

void wl_instance_free(wl_instance *in)
{
    if (in->workload && in->workload->destroy)
        in->workload->destroy(in);
    free(in->port.launches);
    free(in->orig.launches);
    memset(in, 0, sizeof *in);
}
