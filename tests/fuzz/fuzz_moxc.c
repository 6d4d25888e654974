/* fuzz_moxc.c - libFuzzer target: moxc's front end and code generators in
 * process, on the input as a kernel source file (next to a header of
 * records, particles.h, it may include). A refusal prints at least
 * one error and every line says where ("file:line:col: ..." or "moxc: ...");
 * an accepted module has a valid ABI
 * whose canonical JSON reads back, and every generator produces its text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front.h"
#include "fuzz_support.h"
#include "gen.h"
#include "sha256.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/mox-fuzz-moxc-XXXXXX", source[96], header[96];

/* A header the inputs can include: records must be declared in one. */
static const char particles_h[] =
    "#include <mox/kernel.h>\n"
    "typedef struct Motion { float position[2]; float velocity[2]; } Motion;\n"
    "typedef struct Particle { uint8_t tag; uint16_t flags; uint32_t id; Motion motion;\n"
    "                          uint8_t color[3]; } Particle;\n"
    "typedef struct { float dt; float acceleration[2]; } Config;\n"
    "struct sample { uint8_t tag; mox_f16 half[2]; int16_t grid[2][3]; };\n";

static void remove_dir(void)
{
    unlink(source);
    unlink(header);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FUZZ_CHECK(mkdtemp(dir) != NULL, "mkdtemp failed");
    snprintf(source, sizeof source, "%s/kernels.c", dir);
    snprintf(header, sizeof header, "%s/particles.h", dir);
    atexit(remove_dir);
    FILE *h = fopen(header, "w");
    FUZZ_CHECK(h && fputs(particles_h, h) >= 0 && fclose(h) == 0, "cannot write %s", header);
    return 0;
}

/* A line says where: "moxc: ...", or a file's (absolute) path, maybe with
 * ":line:col", then ": " (clang's own warnings and notes come too). */
static bool located(const char *line, size_t n)
{
    if (n >= 6 && strncmp(line, "moxc: ", 6) == 0)
        return true;
    const char *sep = memmem(line, n, ": ", 2);
    return line[0] == '/' && sep != NULL;
}

static void check_diagnostics(const char *text)
{
    FUZZ_CHECK(text && strstr(text, "error: "), "refused without an error: %s", text ? text : "");
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        FUZZ_CHECK(located(line, n), "a diagnostic without its place: %.*s", (int)n, line);
        line += n + (end ? 1 : 0);
    }
}

static void generate(const moxc_module *m, const uint8_t *data, size_t size)
{
    mox_artifact_error err = {0};
    FUZZ_CHECK(mox_abi_validate(m->abi, &err), "accepted an invalid ABI: %s", err.message);
    char *abi = mox_abi_to_json(m->abi);
    FUZZ_CHECK(abi != NULL, "an accepted module's ABI cannot be written");
    mox_abi *back = NULL;
    FUZZ_CHECK(mox_abi_from_json(abi, strlen(abi), &back, &err), "own ABI refused: %s", err.message);
    mox_abi_free(back);
    char hash[MOX_SHA256_HEX_LEN + 1];
    FUZZ_CHECK(mox_sha256_hex(abi, strlen(abi), hash), "SHA-256 failed");
    FILE *diag = fopen("/dev/null", "w");
    FUZZ_CHECK(moxc_gen_check(m, "fuzzed", diag), "a generator check failed");
    fclose(diag);
    char *h = moxc_gen_bindings_h(m, "fuzzed"), *c = moxc_gen_bindings_c(m, "fuzzed", dir);
    moxc_source_text text = {m->edit_count ? m->edits[0].path : source, (const char *)data, size};
    char *cuda = moxc_gen_cuda(m, &text, 1), *cpu = moxc_gen_cpu(m, hash);
    FUZZ_CHECK(h && c && cuda && cpu, "a generator gave nothing (h %d, c %d, cuda %d, cpu %d)", !!h,
               !!c, !!cuda, !!cpu);
    free(h);
    free(c);
    free(cuda);
    free(cpu);
    free(abi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(source, "wb");
    FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", source);
    char *text = NULL;
    size_t text_size = 0;
    FILE *diag = open_memstream(&text, &text_size);
    const char *sources[] = {source};
    const char *includes[] = {dir};
    moxc_parse_options opts = {sources, 1, includes, 1, NULL, 0, MOX_INCLUDE_DIR, diag};
    moxc_module *m = NULL;
    bool ok = moxc_parse(&opts, &m);
    fclose(diag);
    if (ok)
        generate(m, data, size);
    else
        check_diagnostics(text);
    FUZZ_CHECK(ok == (m != NULL), "moxc_parse's result and module disagree");
    moxc_module_free(m);
    free(text);
    return 0;
}
