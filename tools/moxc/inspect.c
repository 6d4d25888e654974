/* inspect.c - `moxc inspect --emit KIND`: prints what moxc generates for a
 * module (abi, bindings, cuda, cpu), how each kernel's gated CUDA entries
 * check the gate (gate), without compiling, or builds the fatbin and
 * disassembles it with cuobjdump (ptx, sass). */
#include <stdlib.h>
#include <string.h>

#include "build.h"

static int print_text(const char *text)
{
    fputs(text, stdout);
    if (*text && text[strlen(text) - 1] != '\n')
        fputc('\n', stdout);
    return 0;
}

/* One line per kernel: how its gated CUDA entries check the gate, and
 * why not after the loads when they do not (gate_defer.c): the first
 * construct that prevents it, or the rule of MOXC_GATE_DEFER. */
static int print_gate(const moxc_module *module)
{
    for (size_t k = 0; k < module->abi->kernel_count; ++k) {
        const moxc_gate_defer *gate = &module->kernels[k].gate;
        const char *name = module->abi->kernels[k].name;
        if (moxc_gate_defer_on(module, k))
            printf("%s: deferred: the gate is checked after the kernel's loads, before each store%s\n", name,
                   moxc_gate_defer_one_on(module, k) ? " (its __gate1 entries read one dependency)" : "");
        else if (!gate->eligible)
            printf("%s: at entry: %s\n", name, gate->why_not ? gate->why_not : "not analysed");
        else if (gate->guard_after_collective && gate->wide_guard_after_collective)
            printf("%s: at entry: more than one thread of a block may reach a guard after a barrier or warp "
                   "operation, where the check at entry is faster (MOXC_GATE_DEFER=1 defers it)\n",
                   name);
        else
            printf("%s: at entry: MOXC_GATE_DEFER=0\n", name);
    }
    return 0;
}

/* Builds the artifact (in --out-dir, else a temporary directory) and runs
 * cuobjdump on its fatbin. */
static int disassemble(moxc_plan *plan, const char *emit)
{
    const moxc_options *o = plan->opts;
    if (o->no_cuda) {
        fprintf(stderr, "moxc: inspect --emit %s needs nvcc, but --no-cuda was given\n", emit);
        return 1;
    }
    char *cuobjdump = NULL, *out_dir = NULL, *artifact = NULL, *fatbin = NULL;
    char temp[] = "/tmp/moxc-inspect-XXXXXX";
    bool temporary = false;
    int rc = 1;
    if (!moxc_plan_fingerprint(plan, stderr))
        goto done;
    if (!plan->tc.nvcc) {
        fprintf(stderr, "moxc: inspect --emit %s needs nvcc, which was not found (see moxc doctor)\n", emit);
        goto done;
    }
    cuobjdump = moxc_find_cuobjdump(plan->tc.nvcc);
    if (!cuobjdump) {
        fprintf(stderr, "moxc: inspect --emit %s needs cuobjdump (next to nvcc or in PATH), which was not found\n",
                emit);
        goto done;
    }
    if (o->out_dir) {
        out_dir = moxc_abs_path(o->out_dir);
    } else if (mkdtemp(temp)) {
        out_dir = strdup(temp);
        temporary = true;
    } else {
        fprintf(stderr, "moxc: cannot create a temporary directory\n");
        goto done;
    }
    /* Build messages go to stderr: stdout carries only the listing. */
    artifact = out_dir ? moxc_cache_obtain(plan, out_dir, stderr, stderr) : NULL;
    fatbin = artifact ? moxc_path_join(artifact, "kernels.fatbin") : NULL;
    if (!fatbin)
        goto done;
    const char *argv[] = {cuobjdump, strcmp(emit, "ptx") == 0 ? "-ptx" : "-sass", fatbin, NULL};
    moxc_proc proc;
    if (!moxc_run(argv, &proc))
        goto done;
    if (proc.started && proc.exit_code == 0) {
        fwrite(proc.output, 1, proc.output_len, stdout);
        rc = 0;
    } else {
        fprintf(stderr, "moxc: cuobjdump failed:\n%s\n", proc.started ? proc.output : "cannot run it");
    }
    moxc_proc_free(&proc);
done:
    if (temporary)
        moxc_remove_tree(temp);
    free(cuobjdump);
    free(out_dir);
    free(artifact);
    free(fatbin);
    return rc;
}

int moxc_cmd_inspect(const moxc_options *o, const char *emit)
{
    /* The bindings record where the artifact lives, which depends on the
     * fingerprint and the cache directory. */
    if (strcmp(emit, "bindings") == 0 && (!o->name || !o->out_dir)) {
        fprintf(stderr, "moxc: inspect --emit bindings needs --name and --out-dir\n");
        return 2;
    }
    moxc_plan plan;
    int rc = 1;
    if (!moxc_plan_parse(o, &plan, stderr))
        goto done;
    if (strcmp(emit, "abi") == 0) {
        rc = print_text(plan.abi_json);
    } else if (strcmp(emit, "cuda") == 0 || strcmp(emit, "cpu") == 0) {
        char *text = emit[1] == 'u' ? moxc_gen_cuda(plan.module, plan.texts, plan.module->edit_count)
                                    : moxc_gen_cpu(plan.module, plan.abi_sha256);
        if (text)
            rc = print_text(text);
        else
            fprintf(stderr, "moxc: generating %s failed\n", emit);
        free(text);
    } else if (strcmp(emit, "gate") == 0) {
        rc = print_gate(plan.module);
    } else if (strcmp(emit, "bindings") == 0) {
        char *out_dir = moxc_abs_path(o->out_dir);
        char *artifact = NULL;
        moxc_generated g = {0};
        if (out_dir && moxc_plan_fingerprint(&plan, stderr) &&
            (artifact = moxc_path_join(out_dir, plan.fingerprint)) != NULL &&
            moxc_generate(&plan, artifact, &g, stderr)) {
            rc = print_text(g.bindings_h);
            print_text(g.bindings_c);
        }
        moxc_generated_free(&g);
        free(artifact);
        free(out_dir);
    } else {
        rc = disassemble(&plan, emit);
    }
done:
    moxc_plan_free(&plan);
    return rc;
}
