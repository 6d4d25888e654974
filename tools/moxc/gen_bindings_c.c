/* gen_bindings_c.c - generates a module's NAME.c: one mox_type per record
 * (with _Static_asserts that tie the host's struct layout to the kernels'),
 * the module descriptor carrying the ABI JSON, its SHA-256 and where the
 * artifact lives, and the typed launch constructors' bodies.
 * docs/internals.md "Generated code" is the contract. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Offsets of every field, through nested records (offsetof takes a member
 * designator path such as "motion.velocity"). */
static void put_field_asserts(moxc_buf *b, const char *spelling, const char *record, const mox_abi_layout *l,
                              const char *prefix, uint64_t base)
{
    for (size_t i = 0; i < l->field_count; ++i) {
        const mox_abi_field *f = &l->fields[i];
        moxc_buf path = {0};
        moxc_buf_printf(&path, "%s%s", prefix, f->name);
        char *member = moxc_buf_finish(&path);
        if (!member) {
            b->failed = true;
            return;
        }
        unsigned long long offset = (unsigned long long)(base + f->offset);
        moxc_buf_printf(b, "_Static_assert(offsetof(%s, %s) == %llu, \"record %s: offset of %s differs from the kernel ABI\");\n",
                        spelling, member, offset, record, member);
        moxc_buf_printf(b, "_Static_assert(sizeof(((%s *)0)->%s) == %llu, \"record %s: size of %s differs from the kernel ABI\");\n",
                        spelling, member, (unsigned long long)f->layout->size, record, member);
        if (f->layout->kind == MOX_LAYOUT_RECORD) {
            moxc_buf nested = {0};
            moxc_buf_printf(&nested, "%s.", member);
            char *next = moxc_buf_finish(&nested);
            if (!next) {
                free(member);
                b->failed = true;
                return;
            }
            put_field_asserts(b, spelling, record, f->layout, next, base + f->offset);
            free(next);
        }
        free(member);
    }
}

/* The JSON as adjacent string literals, each at most 72 bytes of JSON and
 * ending after a ',' where one is near, so the pieces read as JSON. */
static void put_json_literal(moxc_buf *b, const char *json)
{
    size_t len = strlen(json);
    size_t pos = 0;
    while (pos < len) {
        size_t chunk = len - pos < 72 ? len - pos : 72;
        if (pos + chunk < len)
            for (size_t cut = chunk; cut > 40; --cut)
                if (json[pos + cut - 1] == ',') {
                    chunk = cut;
                    break;
                }
        char piece[73];
        memcpy(piece, json + pos, chunk);
        piece[chunk] = '\0';
        moxc_buf_put(b, "    \"");
        moxc_buf_put_c_string(b, piece);
        moxc_buf_put(b, "\"\n");
        pos += chunk;
    }
    if (len == 0)
        moxc_buf_put(b, "    \"\"\n");
}

/* The mox_type of table parameter `p` of kernel `k`: its array signature. */
static void put_table_type(moxc_buf *b, const char *module_name, const mox_abi_kernel *k, const mox_abi_param *p)
{
    char *signature = mox_abi_layout_signature(p->layout);
    if (!signature) {
        b->failed = true;
        return;
    }
    moxc_buf_printf(b, "\nstatic const mox_type %s__table_%s_%s = {\n    \"", module_name, k->name, p->name);
    moxc_buf_put_c_string(b, signature);
    moxc_buf_put(b, "\",\n    \"");
    moxc_buf_put_c_string(b, signature);
    moxc_buf_printf(b, "\",\n    %lluu,\n    %lluu,\n};\n", (unsigned long long)p->layout->size,
                    (unsigned long long)p->layout->align);
    free(signature);
}

static void put_arg(moxc_buf *b, const char *module_name, const mox_abi_kernel *k, const mox_abi_param *p,
                    const char *arg)
{
    if (p->kind == MOX_PARAM_TABLE) {
        moxc_buf_printf(b, "        MOX_ARG_VALUE(%s, &%s__table_%s_%s),\n", arg, module_name, k->name, p->name);
    } else if (p->kind == MOX_PARAM_BUFFER) {
        const char *macro = p->access == MOX_PARAM_READ ? "MOX_ARG_READ" : p->access == MOX_PARAM_WRITE
                                                                             ? "MOX_ARG_WRITE"
                                                                             : "MOX_ARG_ATOMIC";
        moxc_buf_printf(b, "        %s(%s),\n", macro, arg);
    } else if (p->layout->kind == MOX_LAYOUT_RECORD) {
        moxc_buf_printf(b, "        MOX_ARG_VALUE(&%s, &%s_type_%s),\n", arg, module_name, p->layout->record_name);
    } else if (p->layout->kind == MOX_LAYOUT_VECTOR) {
        moxc_buf_printf(b, "        MOX_ARG_VALUE(&%s, &mox_type_%sx%llu),\n", arg, mox_scalar_name(p->layout->scalar),
                        (unsigned long long)p->layout->length);
    } else {
        moxc_buf_printf(b, "        MOX_ARG_VALUE(&%s, &mox_type_%s),\n", arg, mox_scalar_name(p->layout->scalar));
    }
}

char *moxc_gen_bindings_c(const moxc_module *module, const char *name, const char *artifact_dir)
{
    char *json = NULL;
    char sha[65];
    if (!moxc_gen_abi(module, &json, sha))
        return NULL;
    moxc_buf b = {0};
    moxc_buf_printf(&b, "/* %s.c - " MOXC_GEN_BANNER ".\n * Descriptor, record types and launches of mox module %s. */\n",
                    name, name);
    moxc_buf_printf(&b, "#include <stddef.h>\n\n#include \"%s.h\"\n", name);
    for (size_t i = 0; i < module->record_count; ++i) {
        const moxc_record *r = &module->records[i];
        const mox_abi_layout *l = moxc_find_record_layout(module->abi, r->name);
        if (!l)
            continue;
        char *signature = mox_abi_layout_signature(l);
        if (!signature) {
            b.failed = true;
            break;
        }
        moxc_buf_printf(&b, "\n/* Record %s: the host's layout must be the kernels'. */\n", r->name);
        moxc_buf_printf(&b, "_Static_assert(sizeof(%s) == %llu, \"record %s: size differs from the kernel ABI\");\n",
                        r->c_spelling, (unsigned long long)l->size, r->name);
        moxc_buf_printf(&b, "_Static_assert(_Alignof(%s) == %llu, \"record %s: alignment differs from the kernel ABI\");\n",
                        r->c_spelling, (unsigned long long)l->align, r->name);
        put_field_asserts(&b, r->c_spelling, r->name, l, "", 0);
        moxc_buf_printf(&b, "const mox_type %s_type_%s = {\n    \"", name, r->name);
        moxc_buf_put_c_string(&b, r->name);
        moxc_buf_put(&b, "\",\n    \"");
        moxc_buf_put_c_string(&b, signature);
        moxc_buf_printf(&b, "\",\n    %lluu,\n    %lluu,\n};\n", (unsigned long long)l->size,
                        (unsigned long long)l->align);
        free(signature);
    }
    moxc_buf_printf(&b, "\n/* Canonical ABI JSON (docs/abi.md); abi_sha256 is its SHA-256. */\nstatic const char %s__abi_json[] =\n",
                    name);
    put_json_literal(&b, json);
    moxc_buf_put(&b, "    ;\n\n");
    moxc_buf_printf(&b, "static const char *const %s__kernel_names[] = {\n", name);
    for (size_t k = 0; k < module->abi->kernel_count; ++k)
        moxc_buf_printf(&b, "    \"%s\",\n", module->abi->kernels[k].name);
    moxc_buf_put(&b, "};\n\n");
    moxc_buf_printf(&b, "const mox_module_desc %s_module = {\n    \"%s\",\n    %s__abi_json,\n    \"%s\",\n    \"",
                    name, name, name, sha);
    moxc_buf_put_c_string(&b, artifact_dir);
    moxc_buf_put(&b, "\",\n    \"MOX_ARTIFACT_");
    moxc_put_upper(&b, name);
    moxc_buf_printf(&b, "\",\n    %zuu,\n    %s__kernel_names,\n};\n", module->abi->kernel_count, name);
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        char **names = moxc_binding_names(module, name, kernel);
        if (!names) {
            b.failed = true;
            break;
        }
        for (size_t i = 0; i < kernel->param_count; ++i)
            if (kernel->params[i].kind == MOX_PARAM_TABLE)
                put_table_type(&b, name, kernel, &kernel->params[i]);
        moxc_buf_put(&b, "\n");
        moxc_put_prototype(&b, module, name, kernel, names);
        moxc_buf_put(&b, "\n{\n");
        if (kernel->param_count == 0) {
            moxc_buf_printf(&b, "    return mox_launch_generated(device, &%s_module, %zuu, config, NULL, 0u);\n", name,
                            k);
        } else {
            moxc_buf_printf(&b, "    const mox_arg args[%zu] = {\n", kernel->param_count);
            for (size_t i = 0; i < kernel->param_count; ++i)
                put_arg(&b, name, kernel, &kernel->params[i], names[i]);
            moxc_buf_printf(&b, "    };\n    return mox_launch_generated(device, &%s_module, %zuu, config, args, %zuu);\n",
                            name, k, kernel->param_count);
        }
        moxc_buf_put(&b, "}\n");
        moxc_binding_names_free(names, kernel->param_count);
    }
    free(json);
    return moxc_buf_finish(&b);
}
