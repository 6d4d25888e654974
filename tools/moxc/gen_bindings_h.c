/* gen_bindings_h.c - generates a module's NAME.h: one documented typed
 * launch constructor per kernel (its block, the features it uses, each
 * parameter's access and type), one mox_type per record, and the module
 * descriptor's declaration. docs/internals.md "Generated code" is the
 * contract. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Short type text for comments: f32, Particle, [f32;3]. */
static void put_type_text(moxc_buf *b, const mox_abi_layout *l)
{
    if (l->kind == MOX_LAYOUT_SCALAR) {
        moxc_buf_put(b, mox_scalar_name(l->scalar));
    } else if (l->kind == MOX_LAYOUT_VECTOR) {
        moxc_buf_printf(b, "%sx%llu", mox_scalar_name(l->scalar), (unsigned long long)l->length);
    } else if (l->kind == MOX_LAYOUT_RECORD) {
        moxc_buf_put(b, l->record_name);
    } else {
        moxc_buf_put(b, "[");
        put_type_text(b, l->element);
        moxc_buf_printf(b, ";%llu]", (unsigned long long)l->length);
    }
}

static void put_features(moxc_buf *b, uint32_t features)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {MOX_KFEAT_BARRIER, "barrier"}, {MOX_KFEAT_WARP, "warp"}, {MOX_KFEAT_ATOMICS, "atomics"},
        {MOX_KFEAT_FAIL, "fail"}, {MOX_KFEAT_SHARED, "shared"}, {MOX_KFEAT_F16, "f16"},
        {MOX_KFEAT_DYNAMIC_SHARED, "dynamic_shared"}, {MOX_KFEAT_GATE_DEFERRED, "gate_deferred"},
    };
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (features & names[i].bit) {
            moxc_buf_printf(b, "%s%s", first ? "" : ", ", names[i].name);
            first = false;
        }
}

static const char *access_text(const mox_abi_param *p)
{
    if (p->kind == MOX_PARAM_VALUE)
        return "value";
    if (p->kind == MOX_PARAM_TABLE)
        return "table (copied at launch)";
    return p->access == MOX_PARAM_READ ? "read buffer" : p->access == MOX_PARAM_WRITE ? "write buffer"
                                                                                       : "atomic buffer";
}

static void put_kernel_doc(moxc_buf *b, const moxc_module *module, size_t index, char *const *names)
{
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = module->kernels ? &module->kernels[index] : NULL;
    moxc_buf_printf(b, "/* Launch of kernel %s", k->name);
    if (info && info->file)
        moxc_buf_printf(b, " (%s:%u)", info->file, info->line);
    moxc_buf_put(b, ".\n");
    if (k->has_required_block)
        moxc_buf_printf(b, " * Required block: %u x %u x %u (config.block must equal it).\n", k->required_block[0],
                        k->required_block[1], k->required_block[2]);
    if (k->features) {
        moxc_buf_put(b, " * Uses: ");
        put_features(b, k->features);
        moxc_buf_put(b, ".\n");
    }
    for (size_t i = 0; i < k->param_count; ++i) {
        const mox_abi_param *p = &k->params[i];
        moxc_buf_printf(b, " *   %s: %s of ", names[i], access_text(p));
        put_type_text(b, p->layout);
        if (strcmp(names[i], p->name) != 0)
            moxc_buf_printf(b, " (kernel parameter %s)", p->name);
        if (p->kind == MOX_PARAM_VALUE && p->layout->kind == MOX_LAYOUT_SCALAR && p->layout->scalar == MOX_SCALAR_F16)
            moxc_buf_put(b, ", passed as its IEEE half bits");
        moxc_buf_put(b, "\n");
    }
    moxc_buf_put(b, " * Returns a lazy op that runs the kernel once submitted. Never NULL: a\n"
                    " * construction error (ABI mismatch, bad geometry, wrong device) resolves\n"
                    " * the op to that error. */\n");
}

static void put_guard_name(moxc_buf *b, const char *name)
{
    moxc_buf_put(b, "MOX_GENERATED_");
    moxc_put_upper(b, name);
    moxc_buf_put(b, "_H");
}

char *moxc_gen_bindings_h(const moxc_module *module, const char *name)
{
    moxc_buf b = {0};
    moxc_buf_printf(&b, "/* %s.h - " MOXC_GEN_BANNER ".\n * Typed launches of the kernels of mox module %s. */\n",
                    name, name);
    moxc_buf_put(&b, "#ifndef ");
    put_guard_name(&b, name);
    moxc_buf_put(&b, "\n#define ");
    put_guard_name(&b, name);
    moxc_buf_put(&b, "\n\n#include <mox/mox.h>\n");
    for (size_t i = 0; i < module->record_count; ++i) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; ++j)
            seen = strcmp(module->records[j].header, module->records[i].header) == 0;
        if (!seen)
            moxc_buf_printf(&b, "#include \"%s\"\n", module->records[i].header);
    }
    moxc_buf_put(&b, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    for (size_t i = 0; i < module->record_count; ++i) {
        const moxc_record *r = &module->records[i];
        const mox_abi_layout *l = moxc_find_record_layout(module->abi, r->name);
        moxc_buf_printf(&b, "/* Type of record %s (%s: %llu bytes, align %llu), for buffers and values. */\n",
                        r->name, r->c_spelling, l ? (unsigned long long)l->size : 0ull,
                        l ? (unsigned long long)l->align : 0ull);
        moxc_buf_printf(&b, "extern const mox_type %s_type_%s;\n\n", name, r->name);
    }
    moxc_buf_printf(&b, "/* The module: its ABI and where its artifact is. */\nextern const mox_module_desc %s_module;\n",
                    name);
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        char **names = moxc_binding_names(module, name, kernel);
        if (!names) {
            b.failed = true;
            break;
        }
        moxc_buf_put(&b, "\n");
        put_kernel_doc(&b, module, k, names);
        moxc_put_prototype(&b, module, name, kernel, names);
        moxc_buf_put(&b, ";\n");
        moxc_binding_names_free(names, kernel->param_count);
    }
    moxc_buf_put(&b, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    return moxc_buf_finish(&b);
}
