/* gen_cuda.c - generates kernels_cuda.cu, the CUDA translation unit of a
 * module: every kernel source with "__device__ " inserted where the front
 * end said (functions and file-scope constants; not before MOX_KERNEL or
 * MOX_DEVICE, which are __device__ under nvcc already), then one gated
 * __global__ entry per kernel, named mox_entry_<kernel>, that the CUDA
 * backend launches, and for kernels with read buffers a second one,
 * mox_entry_<kernel>__noalias, whose pointers are all __restrict__; and
 * both again with the check of one dependency only,
 * mox_entry_<kernel>__gate1[__noalias], for launches whose gate has exactly
 * one (the common case), and without the gate check,
 * mox_entry_<kernel>__ungated[__noalias], for launches that no failure can
 * reach (the runtime picks one of them per launch). The gated entries of a
 * kernel whose gate check is deferred (moxc_gate_defer) check the
 * dependencies' status only in the kernel's deferred copy, before each
 * store (gen_cuda_source.c pastes the copy); such a kernel has __gate1
 * entries only when its first guard comes after a barrier or warp
 * operation (moxc_gate_defer_one_on), where they ask through the view of
 * one dependency. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static size_t count_lines(const moxc_buf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; ++i)
        n += b->data[i] == '\n';
    return n;
}

/* The entry's parameter for ABI parameter p: device pointers keep the
 * kernel's const-ness, and in the no-alias entry are __restrict__; atomics
 * are mox_atomic_{u32,i32}. */
static void put_entry_param(moxc_buf *b, const moxc_module *module, const char *kernel, const mox_abi_param *p,
                            const moxc_param_info *info, size_t index, bool noalias)
{
    char inner[64];
    const char *spelling = info ? info->c_spelling : NULL;
    if (p->kind == MOX_PARAM_TABLE) {
        /* by value in the constant bank; __grid_constant__ lets the kernel
         * read it in place through a pointer (no local copy) */
        moxc_buf_printf(b, "const __grid_constant__ mox__table_%s_%zu mox__p%zu", kernel, index, index);
        return;
    }
    if (p->kind == MOX_PARAM_VALUE) {
        snprintf(inner, sizeof inner, "mox__p%zu", index);
        moxc_put_decl(b, module, p->layout, spelling, MOXC_DEVICE, "", inner);
        return;
    }
    snprintf(inner, sizeof inner, "*%smox__p%zu", noalias ? "__restrict__ " : "", index);
    if (p->access == MOX_PARAM_ATOMIC) {
        moxc_buf_printf(b, "%s %s", p->layout->scalar == MOX_SCALAR_I32 ? "mox_atomic_i32" : "mox_atomic_u32",
                        inner);
        return;
    }
    moxc_put_decl(b, module, p->layout, spelling, MOXC_DEVICE, p->access == MOX_PARAM_READ ? "const " : "", inner);
}

/* The by-value type of each table parameter of kernel `k`. */
static void put_table_types(moxc_buf *b, const moxc_module *module, const mox_abi_kernel *k,
                            const moxc_kernel_info *info)
{
    for (size_t i = 0; i < k->param_count; ++i) {
        const mox_abi_param *p = &k->params[i];
        if (p->kind != MOX_PARAM_TABLE)
            continue;
        moxc_buf_printf(b, "\ntypedef struct mox__table_%s_%zu {\n    ", k->name, i);
        moxc_put_decl(b, module, p->layout, info && info->params ? info->params[i].c_spelling : NULL, MOXC_DEVICE, "",
                      "v");
        moxc_buf_printf(b, ";\n} mox__table_%s_%zu;\n", k->name, i);
    }
}

/* Whether kernel k gets a second, no-alias entry: it has a read buffer,
 * whose loads may then take the read-only path (ld.global.nc). */
static bool has_noalias_entry(const mox_abi_kernel *k)
{
    for (size_t i = 0; i < k->param_count; ++i)
        if (k->params[i].kind == MOX_PARAM_BUFFER && k->params[i].access == MOX_PARAM_READ)
            return true;
    return false;
}

bool moxc_gate_defer_on(const moxc_module *module, size_t kernel)
{
    const moxc_kernel_info *info = module->kernels ? &module->kernels[kernel] : NULL;
    return info && info->gate.eligible && (module->abi->kernels[kernel].features & MOX_KFEAT_GATE_DEFERRED);
}

/* A deferred kernel whose first guard comes after a barrier or warp
 * operation (so, by default, every guard after one is reached by one
 * thread of a block) gets deferred __gate1 entries: on an H200 the
 * reduction ran at 0.984 of ungated through them against 0.969 through its
 * general deferred entry, while vec-add, whose guards come first, ran at
 * 0.984 against 0.991 (docs/kernel-language.md). */
bool moxc_gate_defer_one_on(const moxc_module *module, size_t kernel)
{
    return moxc_gate_defer_on(module, kernel) && module->kernels[kernel].gate.guard_after_collective;
}

/* Which gate check an entry makes (its name's suffix). */
typedef enum entry_gate { ENTRY_GATED, ENTRY_ONE_DEP, ENTRY_UNGATED } entry_gate;

static void put_entry_comment(moxc_buf *b, bool noalias, entry_gate kind, bool deferred)
{
    bool gated = kind == ENTRY_GATED;
    if (gated && deferred && !noalias)
        moxc_buf_put(b, "\n/* The gate is checked after the kernel's loads: its deferred copy runs\n"
                        " * and does no store, atomic or mox_fail when a dependency failed. */");
    if (noalias)
        moxc_buf_put(b, "\n/* The runtime launches this one when no written buffer of the launch is\n"
                        " * also another of its arguments: every pointer is __restrict__. */");
    if (kind == ENTRY_ONE_DEP && deferred)
        moxc_buf_put(b, "\n/* The deferred check of one inline dependency alone, without the code for\n"
                        " * the other forms of the gate: for launches whose gate has exactly one. */");
    else if (kind == ENTRY_ONE_DEP)
        moxc_buf_put(b, "\n/* The check of one inline dependency alone, without the code for the other\n"
                        " * forms of the gate: for launches whose gate has exactly one. */");
    if (kind == ENTRY_UNGATED)
        moxc_buf_put(b, "\n/* Without the gate check (the grid-dependency wait alone): for launches\n"
                        " * no failure can reach. */");
}

static void put_entry(moxc_buf *b, const moxc_module *module, size_t index, bool noalias, entry_gate kind)
{
    bool gated = kind == ENTRY_GATED;
    const mox_abi_kernel *k = &module->abi->kernels[index];
    const moxc_kernel_info *info = module->kernels ? &module->kernels[index] : NULL;
    if (!noalias && gated)
        put_table_types(b, module, k, info);
    bool deferred = (gated && moxc_gate_defer_on(module, index)) ||
                    (kind == ENTRY_ONE_DEP && moxc_gate_defer_one_on(module, index));
    put_entry_comment(b, noalias, kind, deferred);
    moxc_buf_put(b, "\nextern \"C\" __global__ void ");
    if (k->has_required_block) {
        /* The product fits u32: mox_abi_validate checked it. */
        unsigned long long threads =
            (unsigned long long)k->required_block[0] * k->required_block[1] * k->required_block[2];
        moxc_buf_printf(b, "__launch_bounds__(%llu) ", threads);
    }
    moxc_buf_printf(b, "mox_entry_%s%s%s(mox_gate mox__gate", k->name,
                    kind == ENTRY_GATED     ? ""
                    : kind == ENTRY_ONE_DEP ? MOX_ENTRY_ONE_DEP_SUFFIX
                                            : MOX_ENTRY_UNGATED_SUFFIX,
                    noalias ? MOX_ENTRY_NOALIAS_SUFFIX : "");
    for (size_t i = 0; i < k->param_count; ++i) {
        moxc_buf_put(b, ", ");
        put_entry_param(b, module, k->name, &k->params[i], info && info->params ? &info->params[i] : NULL, i,
                        noalias);
    }
    moxc_buf_put(b, ")\n{\n");
    if (k->has_required_block) {
        /* The runtime launches this entry with its required block only
         * (launch validation): telling the compiler lets it fold the thread
         * geometry the dialect derives (linear index, warp masks). */
        static const char axis[3] = {'x', 'y', 'z'};
        for (int a = 0; a < 3; ++a)
            moxc_buf_printf(b, "    __builtin_assume(blockDim.%c == %uu);\n", axis[a], k->required_block[a]);
        for (int a = 0; a < 3; ++a)
            moxc_buf_printf(b, "    __builtin_assume(threadIdx.%c < %uu);\n", axis[a], k->required_block[a]);
    }
    /* All start with the wait for programmatic dependencies (a no-op on
     * GPUs before sm_90); the gated one inside mox__gate_enter. The
     * deferred one's copy reads the status at its first guard. */
    if (deferred)
        moxc_buf_put(b, "    mox__grid_dependency_wait();\n");
    else if (gated)
        moxc_buf_put(b, "    if (mox__gate_enter(&mox__gate))\n        return;\n");
    else if (kind == ENTRY_ONE_DEP)
        moxc_buf_put(b, "    if (mox__gate_enter_one(&mox__gate))\n        return;\n");
    else
        moxc_buf_put(b, "    mox__grid_dependency_wait();\n");
    /* mox_fail, possibly deep in a helper, cannot see the parameter: it
     * finds the gate in block-shared memory (mox/kernel_cuda_gate.h). */
    if (k->features & MOX_KFEAT_FAIL)
        moxc_buf_put(b, "    MOX__GATE_PUBLISH(&mox__gate);\n");
    /* The deferred copy asks the gate through a view that keeps the
     * answer: one read per thread (mox/kernel_cuda_gate.h). */
    if (deferred)
        moxc_buf_printf(b, "    mox__gate_view mox__gv = mox__gate_view_of%s(&mox__gate);\n",
                        kind == ENTRY_ONE_DEP ? "_one" : "");
    moxc_buf_printf(b, deferred ? "    %s__mox_deferred(&mox__gv" : "    %s(", k->name);
    for (size_t i = 0; i < k->param_count; ++i)
        moxc_buf_printf(b, "%smox__p%zu%s", i || deferred ? ", " : "", i,
                        k->params[i].kind == MOX_PARAM_TABLE ? ".v" : "");
    moxc_buf_put(b, ");\n");
    /* With the kernel's MOX_KFEAT_GATE_DEFERRED it asks nothing: the
     * runtime derives the state of a dispatch that stored nothing. */
    if (deferred)
        moxc_buf_put(b, "    mox__gate_leave_deferred(&mox__gv, MOX_KFEAT_GATE_DEFERRED);\n");
    moxc_buf_put(b, "    mox__gate_leave(&mox__gate);\n}\n");
}

char *moxc_gen_cuda(const moxc_module *module, const moxc_source_text *texts, size_t text_count)
{
    if (text_count != module->edit_count)
        return NULL;
    moxc_buf b = {0};
    moxc_buf_put(&b, "/* kernels_cuda.cu - " MOXC_GEN_BANNER ".\n"
                     " * The CUDA translation unit of a mox module (nvcc -x cu): the kernel\n"
                     " * sources with __device__ added, then one gated entry per kernel. */\n"
                     "#include <mox/kernel.h>\n\n");
    for (size_t i = 0; i < module->edit_count; ++i) {
        if (strcmp(module->edits[i].path, texts[i].path) != 0 ||
            !moxc_gen_cuda_put_source(&b, module, &module->edits[i], &texts[i])) {
            free(b.data);
            return NULL;
        }
    }
    if (module->edit_count)
        moxc_buf_printf(&b, "#line %zu \"kernels_cuda.cu\"\n", count_lines(&b) + 2);
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        bool noalias = has_noalias_entry(&module->abi->kernels[k]);
        /* A deferred kernel's gated entries serve every gated launch,
         * unless it has deferred __gate1 entries. */
        bool skip_one = moxc_gate_defer_on(module, k) && !moxc_gate_defer_one_on(module, k);
        for (entry_gate kind = ENTRY_GATED; kind <= ENTRY_UNGATED; kind++) {
            if (kind == ENTRY_ONE_DEP && skip_one)
                continue;
            put_entry(&b, module, k, false, kind);
            if (noalias)
                put_entry(&b, module, k, true, kind);
        }
    }
    return moxc_buf_finish(&b);
}
