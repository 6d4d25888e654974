/* gen_bindings.c - what a module's C bindings NAME.h (gen_bindings_h.c)
 * and NAME.c (gen_bindings_c.c) share: the parameter names of each
 * kernel's typed launch constructor (its own, renamed where they would
 * hide a name the constructor uses) and the constructor's prototype.
 * docs/internals.md "Generated code" is the contract. */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Identifiers the constructors' bodies or prototypes use: a kernel
 * parameter of that name would hide them. */
static bool name_is_taken(const moxc_module *module, const char *module_name, const char *name)
{
    static const char *const reserved[] = {"device", "config", "args"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; ++i)
        if (strcmp(name, reserved[i]) == 0)
            return true;
    if (strncmp(name, "mox_", 4) == 0)
        return true;
    size_t n = strlen(module_name);
    if (strncmp(name, module_name, n) == 0 && name[n] == '_')
        return true;
    for (size_t i = 0; i < module->record_count; ++i) {
        const char *spelling = module->records[i].c_spelling;
        if (strncmp(spelling, "struct ", 7) == 0)
            spelling += 7;
        if (strcmp(name, spelling) == 0 || strcmp(name, module->records[i].name) == 0)
            return true;
    }
    return false;
}

/* The parameter names of kernel `k` in its constructor: the kernel's own,
 * except where taken, then arg_<i>_<name> (prefixed again until unique). */
char **moxc_binding_names(const moxc_module *module, const char *module_name, const mox_abi_kernel *k)
{
    char **names = calloc(k->param_count ? k->param_count : 1, sizeof *names);
    if (!names)
        return NULL;
    bool ok = true;
    for (size_t i = 0; i < k->param_count && ok; ++i) {
        const char *original = k->params[i].name;
        moxc_buf b = {0};
        moxc_buf_put(&b, original);
        if (name_is_taken(module, module_name, original)) {
            for (;;) {
                char *prev = moxc_buf_finish(&b);
                if (!prev) {
                    ok = false;
                    break;
                }
                moxc_buf_printf(&b, "arg_%zu_%s", i, prev);
                free(prev);
                bool clash = false;
                for (size_t j = 0; j < k->param_count && b.data; ++j)
                    clash = clash || strcmp(b.data, k->params[j].name) == 0;
                if (!clash)
                    break;
            }
        }
        names[i] = moxc_buf_finish(&b);
        ok = ok && names[i];
    }
    if (!ok) {
        for (size_t i = 0; i < k->param_count; ++i)
            free(names[i]);
        free(names);
        return NULL;
    }
    return names;
}

void moxc_binding_names_free(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; ++i)
        free(names[i]);
    free(names);
}

void moxc_put_upper(moxc_buf *b, const char *s)
{
    for (; *s; ++s) {
        char c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
        moxc_buf_write(b, &c, 1);
    }
}

/* "mox_op *NAME_K(mox_device *device, mox_launch_config config, ...)" */
void moxc_put_prototype(moxc_buf *b, const moxc_module *module, const char *name, const mox_abi_kernel *k,
                        char *const *names)
{
    moxc_buf_printf(b, "mox_op *%s_%s(mox_device *device, mox_launch_config config", name, k->name);
    for (size_t i = 0; i < k->param_count; ++i) {
        const mox_abi_param *p = &k->params[i];
        moxc_buf_put(b, ",\n    ");
        if (p->kind == MOX_PARAM_BUFFER)
            moxc_buf_printf(b, "%smox_buffer *%s", p->access == MOX_PARAM_READ ? "const " : "", names[i]);
        else
            moxc_put_decl(b, module, p->layout, NULL, MOXC_HOST, p->kind == MOX_PARAM_TABLE ? "const " : "", names[i]);
    }
    moxc_buf_put(b, ")");
}
