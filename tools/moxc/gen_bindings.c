/* gen_bindings.c - generates a module's C bindings, NAME.h and NAME.c: one
 * typed launch constructor per kernel, one mox_type per record (with
 * _Static_asserts that tie the host's struct layout to the kernels'), and
 * the module descriptor carrying the ABI JSON, its SHA-256 and where the
 * artifact lives. docs/internals.md "Generated code" is the contract. */
#include <stdint.h>
#include <stdio.h>
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
static char **binding_names(const moxc_module *module, const char *module_name, const mox_abi_kernel *k)
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

static void free_names(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; ++i)
        free(names[i]);
    free(names);
}

static void put_upper(moxc_buf *b, const char *s)
{
    for (; *s; ++s) {
        char c = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
        moxc_buf_write(b, &c, 1);
    }
}

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
        {MOX_KFEAT_DYNAMIC_SHARED, "dynamic_shared"},
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

/* "mox_op *NAME_K(mox_device *device, mox_launch_config config, ...)" */
static void put_prototype(moxc_buf *b, const moxc_module *module, const char *name, const mox_abi_kernel *k,
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
    put_upper(b, name);
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
        char **names = binding_names(module, name, kernel);
        if (!names) {
            b.failed = true;
            break;
        }
        moxc_buf_put(&b, "\n");
        put_kernel_doc(&b, module, k, names);
        put_prototype(&b, module, name, kernel, names);
        moxc_buf_put(&b, ";\n");
        free_names(names, kernel->param_count);
    }
    moxc_buf_put(&b, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
    return moxc_buf_finish(&b);
}

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
    put_upper(&b, name);
    moxc_buf_printf(&b, "\",\n    %zuu,\n    %s__kernel_names,\n};\n", module->abi->kernel_count, name);
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        char **names = binding_names(module, name, kernel);
        if (!names) {
            b.failed = true;
            break;
        }
        for (size_t i = 0; i < kernel->param_count; ++i)
            if (kernel->params[i].kind == MOX_PARAM_TABLE)
                put_table_type(&b, name, kernel, &kernel->params[i]);
        moxc_buf_put(&b, "\n");
        put_prototype(&b, module, name, kernel, names);
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
        free_names(names, kernel->param_count);
    }
    free(json);
    return moxc_buf_finish(&b);
}
