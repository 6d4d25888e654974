/* main.c - moxc's command line: parses `build`, `inspect`, `doctor`,
 * `deploy`, --version and --help, and hands the options to the commands. Bad usage
 * prints one line and exits 2; a failed command exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

#define USAGE_EXIT 2

static const char usage_text[] =
    "usage: moxc build --name NAME --out-dir DIR [options] SOURCES...\n"
    "       moxc inspect --emit abi|bindings|cuda|cpu|gate|ptx|sass [options] SOURCES...\n"
    "       moxc doctor [--cc PATH] [--nvcc PATH] [--mox-include DIR] [--no-cuda]\n"
    "       moxc deploy --to DIR ARTIFACT...\n"
    "       moxc --version | --help\n"
    "\n"
    "build: compiles the kernel sources of module NAME into the artifact\n"
    "<out-dir>/<fingerprint>/ (reused when every input is unchanged) and\n"
    "prints \"Built mox artifact DIR\" or \"Cached mox artifact DIR\".\n"
    "deploy: copies artifacts (directories, or the NAME.artifact files that\n"
    "build writes with --bindings-dir) to DIR/<fingerprint>/, where a program\n"
    "finds them: DIR = <program dir>/mox-artifacts or <prefix>/lib/mox-artifacts.\n"
    "\n"
    "options:\n"
    "  --name NAME          module name (a C identifier): bindings NAME.h/NAME.c\n"
    "  --out-dir DIR        artifact cache directory\n"
    "  --bindings-dir DIR   also copy NAME.h and NAME.c here (rewritten only when changed)\n"
    "                       and write NAME.artifact, the artifact's path (for deploy)\n"
    "  -I DIR, -D X[=Y]     include directory / macro for parsing and compiling kernels\n"
    "  --cuda-arch sm_XX    SASS for this GPU architecture (repeatable; default sm_90;\n"
    "                       PTX of the lowest is embedded too)\n"
    "  --no-cuda            build for the CPU only (no fatbin)\n"
    "  --nvcc PATH          nvcc to use (default: $CUDA_HOME/bin, /usr/local/cuda/bin, PATH)\n"
    "  --cc PATH            C compiler for kernels_cpu.so (default: $CC, else clang when\n"
    "                       found, else cc)\n"
    "  --cc-flag FLAG       extra flag for the host C compiler (repeatable)\n"
    "  --mox-include DIR    directory holding mox/kernel.h (default: ../include next to moxc)\n"
    "  --depfile FILE       write the inputs as a Makefile rule for --depfile-target\n"
    "  --depfile-target T   target named in the depfile (default: the depfile itself)\n"
    "  --emit KIND          inspect: abi, bindings, cuda or cpu print generated text;\n"
    "                       gate: how each kernel's gated CUDA entries check the gate;\n"
    "                       ptx and sass build the fatbin and disassemble it (cuobjdump)\n"
    "\n"
    "See docs/moxc.md.\n";

typedef enum command { CMD_BUILD, CMD_INSPECT, CMD_DOCTOR, CMD_DEPLOY } command;

typedef struct value_option {
    const char *name;
    const char **single; /* set once */
    moxc_strv *list;     /* or appended */
} value_option;

static int usage_error(const char *fmt, const char *arg)
{
    fputs("moxc: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see moxc --help)\n", stderr);
    return USAGE_EXIT;
}

/* The value option `arg` names ("--name", "--name=x", "-Ix"), with its
 * inline value in *value (NULL when the value is the next argument). */
static const value_option *match_option(const value_option *values, size_t count, const char *arg,
                                        const char **value)
{
    *value = NULL;
    for (size_t k = 0; k < count; ++k) {
        size_t len = strlen(values[k].name);
        if (strncmp(arg, values[k].name, len) != 0)
            continue;
        bool short_opt = values[k].name[1] != '-';
        if (arg[len] == '\0')
            return &values[k];
        if (arg[len] == '=' && !short_opt) {
            *value = arg + len + 1;
            return &values[k];
        }
        if (short_opt) {
            *value = arg + len;
            return &values[k];
        }
    }
    return NULL;
}

/* Whether command `cmd` takes option `match`; 0, or the exit code. */
static int check_option_command(command cmd, const value_option *match, const char *arg, const moxc_options *o,
                                const char **emit)
{
    if (match->single == emit && cmd != CMD_INSPECT)
        return usage_error("%s is only for moxc inspect", arg);
    if ((match->single == &o->deploy_to) != (cmd == CMD_DEPLOY))
        return usage_error(cmd == CMD_DEPLOY ? "deploy takes only --to (got %s)" : "%s is only for moxc deploy",
                           match->name);
    if (cmd == CMD_DOCTOR && match->single != &o->cc && match->single != &o->nvcc &&
        match->single != &o->mox_include)
        return usage_error("doctor does not take %s", match->name);
    return 0;
}

/* Stores an option's value: appended to a list, or set once. */
static int store_option(const value_option *match, const char *value)
{
    if (!*value)
        return usage_error("%s needs a non-empty value", match->name);
    if (match->list)
        return moxc_strv_push(match->list, value) ? 0 : 1;
    if (*match->single)
        return usage_error("%s given more than once", match->name);
    *match->single = value;
    return 0;
}

/* What each command requires once all options are read; 0, or the exit code. */
static int check_required(command cmd, const moxc_options *o, const char **emit)
{
    if (cmd == CMD_DOCTOR)
        return 0;
    if (cmd == CMD_DEPLOY && !o->deploy_to)
        return usage_error("%s: --to is required", "deploy");
    if (cmd == CMD_DEPLOY && o->sources.count == 0)
        return usage_error("%s: no artifacts given", "deploy");
    if (cmd == CMD_DEPLOY)
        return 0;
    if (o->sources.count == 0)
        return usage_error("%s: no kernel sources given", cmd == CMD_BUILD ? "build" : "inspect");
    if (cmd == CMD_BUILD && !o->name)
        return usage_error("%s: --name is required", "build");
    if (cmd == CMD_BUILD && !o->out_dir)
        return usage_error("%s: --out-dir is required", "build");
    if (o->name && !moxc_is_module_name(o->name))
        return usage_error("--name '%s' is not a C identifier (of at most 200 characters)", o->name);
    for (size_t i = 0; i < o->archs.count; ++i)
        if (moxc_arch_number(o->archs.items[i]) < 0)
            return usage_error("bad --cuda-arch '%s' (expected sm_XX, e.g. sm_90)", o->archs.items[i]);
    if (o->depfile_target && !o->depfile)
        return usage_error("%s needs --depfile", "--depfile-target");
    if (cmd == CMD_INSPECT) {
        static const char *const kinds[] = {"abi", "bindings", "cuda", "cpu", "gate", "ptx", "sass"};
        if (!*emit)
            return usage_error("%s: --emit is required", "inspect");
        bool known = false;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
            known = known || strcmp(*emit, kinds[k]) == 0;
        if (!known)
            return usage_error("unknown --emit kind '%s' (abi, bindings, cuda, cpu, gate, ptx or sass)", *emit);
        if (o->bindings_dir || o->depfile)
            return usage_error("%s: --bindings-dir and --depfile are only for moxc build", "inspect");
    }
    return 0;
}

/* Parses argv[first..] into o (and *emit). Returns 0, or the exit code. */
static int parse_options(command cmd, int argc, char **argv, int first, moxc_options *o, const char **emit)
{
    const value_option values[] = {
        {"--name", &o->name, NULL},
        {"--out-dir", &o->out_dir, NULL},
        {"--bindings-dir", &o->bindings_dir, NULL},
        {"--depfile", &o->depfile, NULL},
        {"--depfile-target", &o->depfile_target, NULL},
        {"--nvcc", &o->nvcc, NULL},
        {"--cc", &o->cc, NULL},
        {"--mox-include", &o->mox_include, NULL},
        {"--emit", emit, NULL},
        {"--to", &o->deploy_to, NULL},
        {"--cuda-arch", NULL, &o->archs},
        {"--cc-flag", NULL, &o->cc_flags},
        {"-I", NULL, &o->includes},
        {"-D", NULL, &o->defines},
    };
    bool options_done = false;
    for (int i = first; i < argc; ++i) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (cmd == CMD_DOCTOR)
                return usage_error("doctor takes no sources (got '%s')", arg);
            if (!moxc_strv_push(&o->sources, arg))
                return 1;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "--no-cuda") == 0 && cmd != CMD_DEPLOY) {
            o->no_cuda = true;
            continue;
        }
        const char *value;
        const value_option *match = match_option(values, sizeof values / sizeof values[0], arg, &value);
        if (!match)
            return usage_error("unknown option '%s'", arg);
        int rc = check_option_command(cmd, match, arg, o, emit);
        if (rc)
            return rc;
        if (!value) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", match->name);
            value = argv[++i];
        }
        rc = store_option(match, value);
        if (rc)
            return rc;
    }
    return check_required(cmd, o, emit);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "no command given");
    const char *first = argv[1];
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        if (argc > 2)
            return usage_error("%s takes no arguments", first);
        printf("moxc %s\n", MOXC_VERSION);
        return 0;
    }
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 || strcmp(first, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    command cmd;
    if (strcmp(first, "build") == 0)
        cmd = CMD_BUILD;
    else if (strcmp(first, "inspect") == 0)
        cmd = CMD_INSPECT;
    else if (strcmp(first, "doctor") == 0)
        cmd = CMD_DOCTOR;
    else if (strcmp(first, "deploy") == 0)
        cmd = CMD_DEPLOY;
    else
        return usage_error("unknown command '%s' (build, inspect, doctor, deploy, --version, --help)", first);
    moxc_options o = {0};
    const char *emit = NULL;
    int rc = parse_options(cmd, argc, argv, 2, &o, &emit);
    if (rc == 0) {
        if (cmd == CMD_BUILD)
            rc = moxc_cmd_build(&o);
        else if (cmd == CMD_INSPECT)
            rc = moxc_cmd_inspect(&o, emit);
        else if (cmd == CMD_DEPLOY)
            rc = moxc_cmd_deploy(&o);
        else
            rc = moxc_cmd_doctor(&o);
    }
    moxc_options_free(&o);
    return rc;
}
