/* gen_cpu.c - generates kernels_cpu.c, the CPU translation unit of a module
 * (compiled by the host C compiler into kernels_cpu.so): it includes the
 * kernel sources unchanged, then per kernel a thread function (one thread,
 * for fibers) and a block function (every thread of a block in order), the
 * entry table and the exported mox_cpu_module() of mox/kernel_abi.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static void put_features(moxc_buf *b, uint32_t features)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {MOX_KFEAT_BARRIER, "MOX_KFEAT_BARRIER"}, {MOX_KFEAT_WARP, "MOX_KFEAT_WARP"},
        {MOX_KFEAT_ATOMICS, "MOX_KFEAT_ATOMICS"}, {MOX_KFEAT_FAIL, "MOX_KFEAT_FAIL"},
        {MOX_KFEAT_SHARED, "MOX_KFEAT_SHARED"},   {MOX_KFEAT_F16, "MOX_KFEAT_F16"},
        {MOX_KFEAT_DYNAMIC_SHARED, "MOX_KFEAT_DYNAMIC_SHARED"},
    };
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (features & names[i].bit) {
            moxc_buf_printf(b, "%s%s", first ? "" : " | ", names[i].name);
            first = false;
        }
    if (first)
        moxc_buf_put(b, "0u");
}

/* Declares mox__a<i> from mox__args[i]. A buffer slot holds a `void *` that is
 * read as such and then converted (reading it through a `T *` lvalue would
 * break aliasing rules); a value is copied out of its bytes for the same
 * reason. */
static void put_unpack(moxc_buf *b, const moxc_module *module, const mox_abi_kernel *k,
                       const moxc_kernel_info *info)
{
    for (size_t i = 0; i < k->param_count; ++i) {
        const mox_abi_param *p = &k->params[i];
        const char *spelling = info && info->params ? info->params[i].c_spelling : NULL;
        char name[32];
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
        moxc_buf nb = {0};
        moxc_buf_printf(&nb, "*%s", name);
        char *pointer = moxc_buf_finish(&nb);
        if (!pointer) {
            b->failed = true;
            return;
        }
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
        free(pointer);
    }
}

static void put_call(moxc_buf *b, const mox_abi_kernel *k, const char *indent)
{
    moxc_buf_printf(b, "%s%s(", indent, k->name);
    for (size_t i = 0; i < k->param_count; ++i)
        moxc_buf_printf(b, "%smox__a%zu", i ? ", " : "", i);
    moxc_buf_put(b, ");\n");
}

static void put_kernel(moxc_buf *b, const moxc_module *module, size_t index)
{
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = module->kernels ? &module->kernels[index] : NULL;
    moxc_buf_printf(b, "\n/* Kernel %s: one thread; the runtime has installed its lane. */\n", k->name);
    moxc_buf_printf(b, "static void mox__thread_%s(void *const *mox__args)\n{\n", k->name);
    if (!k->param_count)
        moxc_buf_put(b, "    (void)mox__args;\n");
    put_unpack(b, module, k, info);
    put_call(b, k, "    ");
    moxc_buf_put(b, "}\n");

    moxc_buf_printf(b, "\n/* Kernel %s: every thread of one block, x fastest, on the calling thread. */\n",
                    k->name);
    moxc_buf_printf(b, "static void mox__block_%s(void *const *mox__args, mox_cpu_lane *mox__lane)\n{\n", k->name);
    if (!k->param_count)
        moxc_buf_put(b, "    (void)mox__args;\n");
    put_unpack(b, module, k, info);
    moxc_buf_put(b, "    *mox__lane_slot() = mox__lane;\n"
                    "    uint32_t mox__linear = 0;\n"
                    "    for (uint32_t mox__z = 0; mox__z < mox__lane->block_dim.z; ++mox__z)\n"
                    "        for (uint32_t mox__y = 0; mox__y < mox__lane->block_dim.y; ++mox__y)\n"
                    "            for (uint32_t mox__x = 0; mox__x < mox__lane->block_dim.x; ++mox__x) {\n"
                    "                mox__lane->thread_idx.x = mox__x;\n"
                    "                mox__lane->thread_idx.y = mox__y;\n"
                    "                mox__lane->thread_idx.z = mox__z;\n"
                    "                mox__lane->linear = mox__linear++;\n");
    put_call(b, k, "                ");
    moxc_buf_put(b, "            }\n}\n");
}

char *moxc_gen_cpu(const moxc_module *module, const char *abi_sha256)
{
    moxc_buf b = {0};
    moxc_buf_put(&b, "/* kernels_cpu.c - " MOXC_GEN_BANNER ".\n"
                     " * The CPU translation unit of a mox module: the kernel sources as they\n"
                     " * are, plus the entry table of mox/kernel_abi.h. */\n"
                     "#include <stdint.h>\n#include <string.h>\n\n#include <mox/kernel.h>\n\n");
    for (size_t i = 0; i < module->edit_count; ++i)
        moxc_buf_printf(&b, "#include \"%s\"\n", module->edits[i].path);
    moxc_buf_put(&b, "\n/* The calling thread's lane: kernel.h's intrinsics read it. */\n"
                     "static mox_cpu_lane **mox__lane_slot(void)\n{\n    return &mox__cpu_lane;\n}\n");
    for (size_t k = 0; k < module->abi->kernel_count; ++k)
        put_kernel(&b, module, k);
    moxc_buf_put(&b, "\nstatic const mox_cpu_kernel_entry mox__kernels[] = {\n");
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const mox_abi_kernel *kernel = &module->abi->kernels[k];
        moxc_buf_printf(&b, "    {\"%s\", mox__thread_%s, mox__block_%s, ", kernel->name, kernel->name,
                        kernel->name);
        put_features(&b, kernel->features);
        moxc_buf_put(&b, "},\n");
    }
    moxc_buf_put(&b, "};\n\n"
                     "__attribute__((visibility(\"default\"))) const mox_cpu_module_entry *mox_cpu_module(void);\n\n"
                     "const mox_cpu_module_entry *mox_cpu_module(void)\n{\n"
                     "    static const mox_cpu_module_entry entry = {\n"
                     "        MOX_CPU_INTERFACE_VERSION,\n");
    moxc_buf_printf(&b, "        %zuu,\n        mox__kernels,\n        \"%s\",\n        mox__lane_slot,\n    };\n"
                        "    return &entry;\n}\n",
                    module->abi->kernel_count, abi_sha256);
    return moxc_buf_finish(&b);
}
