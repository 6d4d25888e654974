/* gen_cpu.c - generates kernels_cpu.c, the CPU translation unit of a module
 * (compiled by the host C compiler into kernels_cpu.so): it includes the
 * kernel sources unchanged, then per kernel a thread function (one thread,
 * for the fiber executor) and a work-group function (one block): the
 * region loops the CPU lowering planned (cpu_lower.c; executor "loops"),
 * or else a loop calling the kernel once per thread ("thread-calls"), or
 * none ("fibers"); then the entry tables and the exported mox_cpu_module()
 * of mox/kernel_abi.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

moxc_cpu_executor moxc_cpu_executor_of(const moxc_module *module, size_t kernel, bool use_plans)
{
    const moxc_kernel_info *info = module->kernels ? &module->kernels[kernel] : NULL;
    if (use_plans && info && info->cpu.body)
        return MOXC_CPU_LOOPS;
    uint32_t f = module->abi->kernels[kernel].features;
    return f & (MOX_KFEAT_BARRIER | MOX_KFEAT_WARP) ? MOXC_CPU_FIBERS : MOXC_CPU_THREAD_CALLS;
}

const char *moxc_cpu_executor_name(moxc_cpu_executor e)
{
    return e == MOXC_CPU_LOOPS ? "loops" : e == MOXC_CPU_FIBERS ? "fibers" : "thread-calls";
}

static void put_features(moxc_buf *b, uint32_t features)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {MOX_KFEAT_BARRIER, "MOX_KFEAT_BARRIER"}, {MOX_KFEAT_WARP, "MOX_KFEAT_WARP"},
        {MOX_KFEAT_ATOMICS, "MOX_KFEAT_ATOMICS"}, {MOX_KFEAT_FAIL, "MOX_KFEAT_FAIL"},
        {MOX_KFEAT_SHARED, "MOX_KFEAT_SHARED"},   {MOX_KFEAT_F16, "MOX_KFEAT_F16"},
        {MOX_KFEAT_DYNAMIC_SHARED, "MOX_KFEAT_DYNAMIC_SHARED"}, {MOX_KFEAT_GATE_DEFERRED, "MOX_KFEAT_GATE_DEFERRED"},
    };
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (features & names[i].bit) {
            moxc_buf_printf(b, "%s%s", first ? "" : " | ", names[i].name);
            first = false;
        }
    if (first)
        moxc_buf_put(b, "0u");
}

/* Declares each parameter from mox__args[i], named mox__a<i> (`named`
 * false) or as in the kernel source. A buffer slot holds a `void *` that
 * is read as such and then converted (reading it through a `T *` lvalue
 * would break aliasing rules); a value is copied out of its bytes for the
 * same reason. */
static void put_unpack(moxc_buf *b, const moxc_module *module, const mox_abi_kernel *k,
                       const moxc_kernel_info *info, bool named)
{
    for (size_t i = 0; i < k->param_count; ++i) {
        const mox_abi_param *p = &k->params[i];
        const char *spelling = info && info->params ? info->params[i].c_spelling : NULL;
        char name[160];
        if (named)
            snprintf(name, sizeof name, "%s", p->name);
        else
            snprintf(name, sizeof name, "mox__a%zu", i);
        moxc_buf_put(b, "    ");
        if (p->kind == MOX_PARAM_TABLE) {
            /* read in place: the launch's copy of the table's bytes */
            moxc_put_decl(b, module, p->layout->element, spelling, MOXC_DEVICE, "const ", "*");
            moxc_buf_printf(b, "%s = (", name);
            moxc_put_decl(b, module, p->layout->element, spelling, MOXC_DEVICE, "const ", "*");
            moxc_buf_printf(b, ")mox__args[%zu];\n", i);
            continue;
        }
        if (p->kind == MOX_PARAM_VALUE) {
            moxc_put_decl(b, module, p->layout, spelling, MOXC_DEVICE, "", name);
            moxc_buf_printf(b, ";\n    memcpy(&%s, mox__args[%zu], sizeof %s);\n", name, i, name);
            continue;
        }
        char pointer[168];
        snprintf(pointer, sizeof pointer, "*%s", name);
        const char *atomic = p->layout->scalar == MOX_SCALAR_I32 ? "mox_atomic_i32" : "mox_atomic_u32";
        const char *qualifier = p->access == MOX_PARAM_READ ? "const " : "";
        if (p->access == MOX_PARAM_ATOMIC)
            moxc_buf_printf(b, "%s %s", atomic, pointer);
        else
            moxc_put_decl(b, module, p->layout, spelling, MOXC_DEVICE, qualifier, pointer);
        moxc_buf_put(b, " = (");
        if (p->access == MOX_PARAM_ATOMIC)
            moxc_buf_printf(b, "%s *", atomic);
        else
            moxc_put_decl(b, module, p->layout, spelling, MOXC_DEVICE, qualifier, "*");
        moxc_buf_printf(b, ")*(void *const *)mox__args[%zu];\n", i);
    }
    if (named)
        for (size_t i = 0; i < k->param_count; ++i)
            moxc_buf_printf(b, "    (void)%s;\n", k->params[i].name);
}

static void put_call(moxc_buf *b, const mox_abi_kernel *k, const char *indent)
{
    moxc_buf_printf(b, "%s%s(", indent, k->name);
    for (size_t i = 0; i < k->param_count; ++i)
        moxc_buf_printf(b, "%smox__a%zu", i ? ", " : "", i);
    moxc_buf_put(b, ");\n");
}

static void put_thread_fn(moxc_buf *b, const moxc_module *module, size_t index)
{
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = module->kernels ? &module->kernels[index] : NULL;
    moxc_buf_printf(b, "\n/* Kernel %s: one thread (fiber executor); the runtime has installed its lane. */\n",
                    k->name);
    moxc_buf_printf(b, "static void mox__thread_%s(void *const *mox__args)\n{\n", k->name);
    if (!k->param_count)
        moxc_buf_put(b, "    (void)mox__args;\n");
    put_unpack(b, module, k, info, false);
    put_call(b, k, "    ");
    moxc_buf_put(b, "}\n");
}

static void put_thread_calls(moxc_buf *b, const moxc_module *module, size_t index, bool use_plans)
{
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = module->kernels ? &module->kernels[index] : NULL;
    moxc_buf_printf(b, "\n/* Kernel %s: every thread of one block, x fastest, one call each", k->name);
    if (info && info->cpu.note)
        moxc_buf_printf(b, " (no region loops: %s)", info->cpu.note);
    else if (!use_plans && info && info->cpu.body)
        moxc_buf_put(b, " (no region loops: its work-group function did not compile)");
    moxc_buf_put(b, ". */\n");
    moxc_buf_printf(b, "static void mox__group_%s(void *const *mox__args, const mox_cpu_group *mox__g)\n{\n", k->name);
    if (!k->param_count)
        moxc_buf_put(b, "    (void)mox__args;\n");
    put_unpack(b, module, k, info, false);
    moxc_buf_put(b, "    mox_cpu_lane *mox__lane = mox__g->lane;\n"
                    "    uint32_t mox__linear = 0;\n"
                    "    for (uint32_t mox__z = 0; mox__z < mox__g->block_dim.z; ++mox__z)\n"
                    "        for (uint32_t mox__y = 0; mox__y < mox__g->block_dim.y; ++mox__y)\n"
                    "            for (uint32_t mox__x = 0; mox__x < mox__g->block_dim.x; ++mox__x) {\n"
                    "                mox__lane->thread_idx.x = mox__x;\n"
                    "                mox__lane->thread_idx.y = mox__y;\n"
                    "                mox__lane->thread_idx.z = mox__z;\n"
                    "                mox__lane->linear = mox__linear++;\n");
    put_call(b, k, "                ");
    moxc_buf_put(b, "            }\n}\n");
}

static void put_stats(moxc_buf *b, const moxc_cpu_stats *s)
{
    moxc_buf_printf(b, " * %u region loop%s, %u warp step%s. Local variables: %u, %u used outside their region:\n"
                       " * %u kept per thread (%llu bytes per thread), %u block-level, %u recomputed per region. */\n",
                    s->regions, s->regions == 1 ? "" : "s", s->warp_steps, s->warp_steps == 1 ? "" : "s", s->locals,
                    s->crossing, s->privatized, s->private_bytes, s->block_level, s->rematerialized);
}

static void put_group_fn(moxc_buf *b, const moxc_module *module, size_t index)
{
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = &module->kernels[index];
    moxc_buf_printf(b, "\n/* Kernel %s: work-group function (one block; threads as loops, x fastest).\n", k->name);
    put_stats(b, &info->cpu.stats);
    moxc_buf_printf(b, "static inline __attribute__((always_inline)) void mox__wg_%s(void *const *mox__args,\n"
                       "                                                         const mox_cpu_group *mox__g)\n{\n",
                    k->name);
    if (!k->param_count)
        moxc_buf_put(b, "    (void)mox__args;\n");
    put_unpack(b, module, k, info, true);
    moxc_buf_put(b, info->cpu.body);
    moxc_buf_printf(b, "}\nMOX__WG_DEFINE(%s)\n", k->name);
}

static void put_table(moxc_buf *b, const moxc_module *module, const char *table, const char *suffix,
                      bool use_plans)
{
    static const char *const executors[] = {"MOX_CPU_EXEC_THREAD_CALLS", "MOX_CPU_EXEC_LOOPS", "MOX_CPU_EXEC_FIBERS"};
    moxc_buf_printf(b, "\nstatic const mox_cpu_kernel_entry %s[] = {\n", table);
    for (size_t k = 0; k < module->abi->kernel_count; k++) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        moxc_cpu_executor e = moxc_cpu_executor_of(module, k, use_plans);
        moxc_buf_printf(b, "    {\"%s\", mox__thread_%s, ", kernel->name, kernel->name);
        if (e == MOXC_CPU_FIBERS)
            moxc_buf_put(b, "NULL");
        else
            moxc_buf_printf(b, "mox__group_%s%s", kernel->name, e == MOXC_CPU_LOOPS ? suffix : "");
        moxc_buf_put(b, ", ");
        put_features(b, kernel->features);
        moxc_buf_printf(b, ", %s},\n", executors[e]);
    }
    moxc_buf_put(b, "};\n");
}

static void put_module_entry(moxc_buf *b, const moxc_module *module, const char *abi_sha256, bool use_plans)
{
    put_table(b, module, "mox__kernels", "", use_plans);
    moxc_buf_put(b, "#if MOX__WG_V3");
    put_table(b, module, "mox__kernels_v3", "_v3", use_plans);
    moxc_buf_put(b, "#endif\n\n"
                    "__attribute__((visibility(\"default\"))) const mox_cpu_module_entry *mox_cpu_module(void);\n\n"
                    "const mox_cpu_module_entry *mox_cpu_module(void)\n{\n");
    const char *tables[] = {"mox__kernels", "mox__kernels_v3"};
    for (int t = 0; t < 2; t++) {
        if (t)
            moxc_buf_put(b, "#if MOX__WG_V3\n");
        moxc_buf_printf(b, "    static const mox_cpu_module_entry entry%s = {\n"
                           "        MOX_CPU_INTERFACE_VERSION,\n"
                           "        %zuu,\n        %s,\n        \"%s\",\n        mox__lane_slot,\n    };\n",
                        t ? "_v3" : "", module->abi->kernel_count, tables[t], abi_sha256);
        if (t)
            moxc_buf_put(b, "    if (mox__wg_have_v3())\n        return &entry_v3;\n#endif\n");
    }
    moxc_buf_put(b, "    return &entry;\n}\n");
}

static char *gen_cpu(const moxc_module *module, const char *abi_sha256, bool use_plans)
{
    moxc_buf b = {0};
    moxc_buf_put(&b, "/* kernels_cpu.c - " MOXC_GEN_BANNER ".\n"
                     " * The CPU translation unit of a mox module: the kernel sources as they\n"
                     " * are, then per kernel a thread function (fiber executor) and a work-group\n"
                     " * function (one block), and the entry tables of mox/kernel_abi.h. */\n"
                     "#include <stdint.h>\n#include <string.h>\n\n#include <mox/kernel.h>\n\n");
    for (size_t i = 0; i < module->edit_count; ++i)
        moxc_buf_printf(&b, "#include \"%s\"\n", module->edits[i].path);
    moxc_buf_put(&b, "\n/* The calling thread's lane: kernel.h's intrinsics read it. */\n"
                     "static mox_cpu_lane **mox__lane_slot(void)\n{\n    return &mox__cpu_lane;\n}\n");
    for (size_t k = 0; k < module->abi->kernel_count; k++) {
        put_thread_fn(&b, module, k);
        if (moxc_cpu_executor_of(module, k, use_plans) == MOXC_CPU_THREAD_CALLS)
            put_thread_calls(&b, module, k, use_plans);
    }
    moxc_buf_put(&b, "\n/* From here on the dialect's geometry reads the work-group functions' loop\n"
                     " * variables (the kernels above keep reading the lane). */\n"
                     "#include <mox/kernel_cpu_wg.h>\n");
    for (size_t k = 0; k < module->abi->kernel_count; k++)
        if (moxc_cpu_executor_of(module, k, use_plans) == MOXC_CPU_LOOPS)
            put_group_fn(&b, module, k);
    put_module_entry(&b, module, abi_sha256, use_plans);
    return moxc_buf_finish(&b);
}

char *moxc_gen_cpu(const moxc_module *module, const char *abi_sha256)
{
    return gen_cpu(module, abi_sha256, true);
}

char *moxc_gen_cpu_unplanned(const moxc_module *module, const char *abi_sha256)
{
    return gen_cpu(module, abi_sha256, false);
}
