/* test_build.c - `moxc build` end to end and the artifact cache: the files
 * and manifest of a CPU-only and (with nvcc) a CUDA build, the CPU shared
 * object's module table, cache hits, recovery from every corrupt or missing
 * file, abandoned stages, concurrent builds, what changes the fingerprint,
 * the bindings copy that keeps unchanged files, and the depfile. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "manifest.h"
#include "test_support.h"

extern char **environ;

typedef struct fixture {
    char *dir;     /* scratch */
    char *out;     /* --out-dir */
    char *src;     /* kernels/demo.c */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("build");
    f->out = moxc_path_join(f->dir, "out");
    f->src = test_path("kernels/demo.c");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    test_rmdir(f->dir);
    free(f->out);
    free(f->src);
    free(f);
    return 0;
}

/* moxc build --name demo --out-dir f->out --cc MOX_CC [extra...] [source]:
 * returns the exit code; *output gets what it printed. */
static int build(const fixture *f, char **output, const char *const *extra, const char *source)
{
    const char *argv[40] = {MOXC_EXECUTABLE, "build", "--name", "demo", "--out-dir", f->out, "--cc", MOX_CC};
    size_t n = 8;
    for (size_t i = 0; extra && extra[i]; ++i)
        argv[n++] = extra[i];
    argv[n++] = source ? source : f->src;
    argv[n] = NULL;
    return run_capture(argv, output);
}

#define NO_CUDA ((const char *const[]){"--no-cuda", NULL})

/* Builds, expects success and the given verb, returns the artifact dir. */
static char *build_ok(const fixture *f, const char *const *extra, const char *source, const char *verb)
{
    char *out = NULL;
    int rc = build(f, &out, extra, source);
    if (rc != 0)
        fail_msg("moxc build failed (%d):\n%s", rc, out);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s mox artifact %s/", verb, f->out);
    char *prefix = moxc_buf_finish(&b);
    const char *line = strstr(out, prefix);
    if (!line)
        fail_msg("expected \"%s...\" in:\n%s", prefix, out);
    const char *dir = line + strlen(prefix) - strlen(f->out) - 1;
    size_t len = strcspn(dir, "\n");
    char *artifact = strndup(dir, len);
    free(prefix);
    free(out);
    return artifact;
}

static char *file_in(const char *dir, const char *name)
{
    char *p = moxc_path_join(dir, name);
    assert_non_null(p);
    return p;
}

static bool exists(const char *dir, const char *name)
{
    char *p = file_in(dir, name);
    struct stat st;
    bool ok = stat(p, &st) == 0;
    free(p);
    return ok;
}

static mox_manifest *load_valid(const char *artifact)
{
    mox_manifest *m = NULL;
    mox_artifact_error err;
    if (!mox_manifest_load(artifact, &m, &err))
        fail_msg("manifest of %s: %s", artifact, err.message);
    if (!mox_manifest_verify_all(m, artifact, &err))
        fail_msg("files of %s: %s", artifact, err.message);
    return m;
}

/* Entries of out-dir other than .lock. */
static size_t count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, ".lock") &&
            strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            ++n;
    closedir(d);
    return n;
}

static void test_cpu_only_build(void **state)
{
    fixture *f = *state;
    char *bindings = file_in(f->dir, "bindings");
    const char *extra[] = {"--no-cuda", "--bindings-dir", bindings, NULL};
    char *artifact = build_ok(f, extra, NULL, "Built");
    static const char *const files[] = {"abi.json",      "kernels_cpu.so", "kernels_cuda.cu", "kernels_cpu.c",
                                        "demo.h",        "demo.c",         "manifest.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i)
        if (!exists(artifact, files[i]))
            fail_msg("%s lacks %s", artifact, files[i]);
    assert_false(exists(artifact, "kernels.fatbin"));
    mox_manifest *m = load_valid(artifact);
    assert_string_equal(m->module, "demo");
    assert_string_equal(m->moxc_version, MOXC_VERSION_TEXT);
    assert_int_equal(m->cuda_arch_count, 0);
    assert_false(m->ptx);
    assert_false(m->files[MOX_FILE_FATBIN].present);
    assert_string_equal(m->nvcc_version, "");
    assert_string_equal(strrchr(artifact, '/') + 1, m->fingerprint);
    assert_string_equal(m->abi_sha256, m->files[MOX_FILE_ABI_JSON].sha256);
    /* abi.json is the generator's text: the golden file. */
    char *abi = file_in(artifact, "abi.json");
    char *abi_text = read_text(abi);
    check_golden("demo/abi.json", abi_text);
    free(abi_text);
    free(abi);
    /* The front end's module gives the golden bindings (made from the
     * module built by hand) but for the artifact directory. */
    char *h_path = file_in(artifact, "demo.h"), *c_path = file_in(artifact, "demo.c");
    char *h_text = read_text(h_path), *c_text = read_text(c_path);
    char *c_golden = replace_all(c_text, artifact, "/artifacts/demo/0123456789abcdef");
    check_golden("demo/demo.h", h_text);
    check_golden("demo/demo.c", c_golden);
    free(c_golden);
    free(h_text);
    free(c_text);
    free(h_path);
    free(c_path);
    /* The bindings directory holds the artifact's bindings, which record
     * where the artifact is. */
    for (int k = 0; k < 2; ++k) {
        char *a = file_in(artifact, k ? "demo.c" : "demo.h"), *b = file_in(bindings, k ? "demo.c" : "demo.h");
        char *ta = read_text(a), *tb = read_text(b);
        assert_non_null(tb);
        assert_string_equal(ta, tb);
        if (k)
            assert_non_null(strstr(tb, artifact));
        free(ta);
        free(tb);
        free(a);
        free(b);
    }
    /* The CPU shared object exports the module table. */
    char *so = file_in(artifact, "kernels_cpu.so");
    void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail_msg("dlopen: %s", dlerror());
    const mox_cpu_module_entry *(*get)(void) = (const mox_cpu_module_entry *(*)(void))dlsym(lib, "mox_cpu_module");
    assert_non_null(get);
    const mox_cpu_module_entry *entry = get();
    assert_int_equal(entry->interface_version, MOX_CPU_INTERFACE_VERSION);
    assert_int_equal(entry->kernel_count, 4);
    assert_string_equal(entry->kernels[1].name, "integrate");
    assert_string_equal(entry->abi_sha256, m->abi_sha256);
    dlclose(lib);
    free(so);
    mox_manifest_free(m);
    free(bindings);
    free(artifact);
}

static void test_cuda_build(void **state)
{
    fixture *f = *state;
    const char *nvcc = test_nvcc();
    if (!nvcc)
        skip();
    const char *extra[] = {"--nvcc", nvcc, "--cuda-arch", "sm_90", "--cuda-arch", "sm_80", "--cuda-arch",
                           "sm_90", NULL};
    char *artifact = build_ok(f, extra, NULL, "Built");
    assert_true(exists(artifact, "kernels.fatbin"));
    mox_manifest *m = load_valid(artifact);
    assert_int_equal(m->cuda_arch_count, 2);
    assert_string_equal(m->cuda_archs[0], "sm_80");
    assert_string_equal(m->cuda_archs[1], "sm_90");
    assert_true(m->ptx);
    assert_non_null(strstr(m->nvcc_version, "release"));
    bool ptx80 = false, fmad = false;
    for (size_t i = 0; i < m->nvcc_flag_count; ++i) {
        ptx80 = ptx80 || strcmp(m->nvcc_flags[i], "arch=compute_80,code=compute_80") == 0;
        fmad = fmad || strcmp(m->nvcc_flags[i], "-fmad=false") == 0;
    }
    assert_true(ptx80);
    assert_true(fmad);
    mox_manifest_free(m);
    /* Same inputs: cached; another arch set: another artifact. */
    char *again = build_ok(f, extra, NULL, "Cached");
    assert_string_equal(again, artifact);
    const char *only90[] = {"--nvcc", nvcc, NULL};
    char *other = build_ok(f, only90, NULL, "Built");
    assert_string_not_equal(other, artifact);
    free(other);
    /* Two sources of one directory, also named with -I: nvcc gets that
     * directory once. */
    char *features = test_path("kernels/features.c"), *dir = test_path("kernels"), *flag = NULL;
    const char *two[] = {"--nvcc", nvcc, "-I", dir, features, NULL};
    char *both = build_ok(f, two, NULL, "Built");
    m = load_valid(both);
    assert_true(asprintf(&flag, "-I%s", dir) > 0);
    size_t times = 0;
    for (size_t i = 0; i < m->nvcc_flag_count; ++i)
        times += strcmp(m->nvcc_flags[i], flag) == 0;
    assert_int_equal(times, 1);
    mox_manifest_free(m);
    free(flag);
    free(dir);
    free(both);
    free(features);
    free(again);
    free(artifact);
}

static void test_cached_second_build(void **state)
{
    fixture *f = *state;
    char *first = build_ok(f, NO_CUDA, NULL, "Built");
    char *second = build_ok(f, NO_CUDA, NULL, "Cached");
    assert_string_equal(first, second);
    assert_int_equal(count_entries(f->out, ""), 1);
    free(first);
    free(second);
}

static void flip_byte(const char *path)
{
    char *data;
    size_t size;
    assert_true(moxc_read_file(path, &data, &size));
    assert_true(size > 0);
    data[size / 2] ^= 0x20;
    assert_true(moxc_write_file(path, data, size));
    free(data);
}

/* Every file of the artifact, manifest included: corrupt it, or delete
 * it, and the next build rebuilds a valid artifact in the same place. */
static void test_recovers_every_file(void **state)
{
    fixture *f = *state;
    char *artifact = build_ok(f, NO_CUDA, NULL, "Built");
    static const char *const files[] = {"abi.json", "kernels_cpu.so", "kernels_cuda.cu", "kernels_cpu.c",
                                        "demo.h",   "demo.c",         "manifest.json"};
    for (int remove_it = 0; remove_it < 2; ++remove_it) {
        for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
            char *path = file_in(artifact, files[i]);
            if (remove_it)
                assert_int_equal(unlink(path), 0);
            else
                flip_byte(path);
            char *out = NULL;
            assert_int_equal(build(f, &out, NO_CUDA, NULL), 0);
            if (!strstr(out, "Built mox artifact"))
                fail_msg("%s %s: no rebuild:\n%s", remove_it ? "deleting" : "corrupting", files[i], out);
            assert_non_null(strstr(out, "moxc: rebuilding"));
            assert_non_null(strstr(out, artifact));
            free(out);
            mox_manifest_free(load_valid(artifact));
            free(path);
        }
    }
    free(artifact);
}

static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

static void test_abandoned_stages(void **state)
{
    fixture *f = *state;
    assert_true(moxc_mkdir_p(f->out));
    char name[64];
    snprintf(name, sizeof name, ".build-%ld-0", (long)dead_pid());
    char *dead = file_in(f->out, name);
    assert_true(moxc_mkdir_p(dead));
    char *junk = file_in(dead, "kernels_cpu.so");
    write_text(junk, "half-written");
    snprintf(name, sizeof name, ".build-%ld-3", (long)getpid());
    char *live = file_in(f->out, name);
    assert_true(moxc_mkdir_p(live));
    char *unrelated = file_in(f->out, "keep-me");
    assert_true(moxc_mkdir_p(unrelated));

    char *out = NULL;
    assert_int_equal(build(f, &out, NO_CUDA, NULL), 0);
    assert_non_null(strstr(out, "removed abandoned build stage"));
    free(out);
    struct stat st;
    assert_int_not_equal(stat(dead, &st), 0);
    assert_int_equal(stat(live, &st), 0);
    assert_int_equal(stat(unrelated, &st), 0);
    free(junk);
    free(dead);
    free(live);
    free(unrelated);
}

static pid_t spawn_to(const fixture *f, const char *log)
{
    const char *argv[] = {MOXC_EXECUTABLE, "build", "--name", "demo", "--out-dir", f->out, "--cc", MOX_CC,
                          "--no-cuda", f->src, NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &actions, NULL, (char *const *)(uintptr_t)argv, environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

static void test_concurrent_builds(void **state)
{
    fixture *f = *state;
    char *log1 = file_in(f->dir, "1.log"), *log2 = file_in(f->dir, "2.log");
    pid_t a = spawn_to(f, log1), b = spawn_to(f, log2);
    int sa, sb;
    assert_int_equal(waitpid(a, &sa, 0), a);
    assert_int_equal(waitpid(b, &sb, 0), b);
    char *t1 = read_text(log1), *t2 = read_text(log2);
    if (!WIFEXITED(sa) || WEXITSTATUS(sa) != 0 || !WIFEXITED(sb) || WEXITSTATUS(sb) != 0)
        fail_msg("concurrent builds failed:\n%s\n---\n%s", t1, t2);
    /* The lock makes one build and the other find it cached. */
    size_t built = count_occurrences(t1, "Built mox artifact") + count_occurrences(t2, "Built mox artifact");
    size_t cached = count_occurrences(t1, "Cached mox artifact") + count_occurrences(t2, "Cached mox artifact");
    assert_int_equal(built, 1);
    assert_int_equal(cached, 1);
    assert_int_equal(count_entries(f->out, ""), 1);
    assert_int_equal(count_entries(f->out, ".build-"), 0);
    char *artifact = build_ok(f, NO_CUDA, NULL, "Cached");
    mox_manifest_free(load_valid(artifact));
    free(artifact);
    free(t1);
    free(t2);
    free(log1);
    free(log2);
}

/* A build that finds the lock held says so, waits, then builds. */
static void test_waits_for_lock(void **state)
{
    fixture *f = *state;
    assert_true(moxc_mkdir_p(f->out));
    char *lock_path = file_in(f->out, ".lock"), *log = file_in(f->dir, "wait.log");
    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    assert_true(lock >= 0);
    assert_int_equal(flock(lock, LOCK_EX), 0);
    pid_t pid = spawn_to(f, log);
    /* Bounded wait for the message (10 minutes at most, not a timing
     * assertion: moxc blocks until the lock is released). */
    bool waiting = false;
    for (int i = 0; i < 6000 && !waiting; ++i) {
        char *text = read_text(log);
        waiting = text && strstr(text, "moxc: waiting for the build lock");
        free(text);
        if (!waiting)
            usleep(100000);
    }
    assert_true(waiting);
    char *text = read_text(log);
    assert_null(strstr(text, "mox artifact"));
    free(text);
    assert_int_equal(flock(lock, LOCK_UN), 0);
    close(lock);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    text = read_text(log);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(text, "Built mox artifact"))
        fail_msg("the waiting build failed:\n%s", text);
    free(text);
    free(lock_path);
    free(log);
}

/* Copies kernels/demo.c and records.h into dir so a test may edit them. */
static char *copy_sources(const char *dir)
{
    char *src = NULL;
    static const char *const names[] = {"demo.c", "records.h"};
    for (int i = 0; i < 2; ++i) {
        char *rel = moxc_path_join("kernels", names[i]);
        char *from = test_path(rel), *to = file_in(dir, names[i]);
        char *text = read_text(from);
        write_text(to, text);
        free(text);
        free(from);
        free(rel);
        if (i == 0)
            src = to;
        else
            free(to);
    }
    return src;
}

static void append(const char *path, const char *text)
{
    char *old = read_text(path);
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s%s", old, text);
    char *joined = moxc_buf_finish(&b);
    write_text(path, joined);
    free(joined);
    free(old);
}

static void test_fingerprint_inputs(void **state)
{
    fixture *f = *state;
    char *src = copy_sources(f->dir);
    char *header = file_in(f->dir, "records.h");
    char *base = build_ok(f, NO_CUDA, src, "Built");
    /* An included header's bytes. */
    append(header, "/* edited */\n");
    char *edited = build_ok(f, NO_CUDA, src, "Built");
    assert_string_not_equal(edited, base);
    /* Content-addressed: the old bytes find the old artifact. */
    char *text = read_text(header);
    text[strlen(text) - strlen("/* edited */\n")] = '\0';
    write_text(header, text);
    free(text);
    char *back = build_ok(f, NO_CUDA, src, "Cached");
    assert_string_equal(back, base);
    /* Defines, C compiler flags and the CUDA choice. */
    const char *define[] = {"--no-cuda", "-D", "UNUSED_MACRO=1", NULL};
    char *defined = build_ok(f, define, src, "Built");
    const char *flag[] = {"--no-cuda", "--cc-flag", "-g", NULL};
    char *flagged = build_ok(f, flag, src, "Built");
    assert_string_not_equal(defined, base);
    assert_string_not_equal(flagged, base);
    assert_string_not_equal(flagged, defined);
    free(defined);
    free(flagged);
    free(back);
    free(edited);
    free(base);
    free(header);
    free(src);
}

/* The dialect headers reach the CUDA and CPU translation units in modes the
 * front end never parses: editing one must still change the fingerprint. */
static void test_fingerprint_dialect_headers(void **state)
{
    fixture *f = *state;
    char *inc = file_in(f->dir, "include");
    char *mox_dir = file_in(inc, "mox");
    assert_int_equal(mkdir(inc, 0755), 0);
    assert_int_equal(mkdir(mox_dir, 0755), 0);
    /* a copy of every dialect header, as a relocated install would have */
    DIR *all = opendir(MOX_INCLUDE_DIR "/mox");
    assert_non_null(all);
    for (struct dirent *e; (e = readdir(all)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".h") != 0)
            continue;
        char *from = moxc_path_join(MOX_INCLUDE_DIR "/mox", e->d_name);
        char *to = file_in(mox_dir, e->d_name);
        char *text = read_text(from);
        write_text(to, text);
        free(text);
        free(to);
        free(from);
    }
    closedir(all);
    const char *args[] = {"--no-cuda", "--mox-include", inc, NULL};
    char *base = build_ok(f, args, NULL, "Built");
    char *cuda_h = file_in(mox_dir, "kernel_cuda.h");
    append(cuda_h, "/* edited */\n");
    char *edited = build_ok(f, args, NULL, "Built");
    assert_string_not_equal(edited, base);
    free(edited);
    free(cuda_h);
    free(base);
    free(mox_dir);
    free(inc);
}

static void set_old_mtime(const char *path)
{
    struct timespec times[2] = {{946684800, 0}, {946684800, 0}}; /* 2000-01-01 */
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool is_old(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mtim.tv_sec == 946684800;
}

static void test_bindings_copy_keeps_unchanged(void **state)
{
    fixture *f = *state;
    char *src = copy_sources(f->dir);
    char *bindings = file_in(f->dir, "bindings");
    char *h = file_in(bindings, "demo.h"), *c = file_in(bindings, "demo.c");
    const char *extra[] = {"--no-cuda", "--bindings-dir", bindings, NULL};
    free(build_ok(f, extra, src, "Built"));
    set_old_mtime(h);
    set_old_mtime(c);
    free(build_ok(f, extra, src, "Cached"));
    assert_true(is_old(h));
    assert_true(is_old(c));
    /* A kernel body edit: new artifact, so demo.c (which records its
     * directory) changes, but demo.h does not - its users do not rebuild. */
    append(src, "\nstatic float unused_helper(float v)\n{\n    return v;\n}\n");
    free(build_ok(f, extra, src, "Built"));
    assert_true(is_old(h));
    assert_false(is_old(c));
    free(h);
    free(c);
    free(bindings);
    free(src);
}

static void test_depfile(void **state)
{
    fixture *f = *state;
    char *dep = file_in(f->dir, "demo.d");
    const char *extra[] = {"--no-cuda", "--depfile", dep, "--depfile-target", "/stamp dir/demo.stamp", NULL};
    free(build_ok(f, extra, NULL, "Built"));
    char *text = read_text(dep);
    assert_non_null(text);
    assert_int_equal(strncmp(text, "/stamp\\ dir/demo.stamp:", 23), 0);
    assert_non_null(strstr(text, f->src));
    assert_non_null(strstr(text, "kernels/records.h"));
    assert_non_null(strstr(text, "mox/kernel.h"));
    /* Each input once, though the sources and the dialect headers are also
     * among the files the front end read. */
    size_t lines = count_occurrences(text, "\n");
    assert_true(lines > 3);
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *end = strchr(line + 1, '\n');
        assert_non_null(end);
        moxc_buf b = {0};
        moxc_buf_write(&b, line, (size_t)(end - line) + 1);
        char *entry = moxc_buf_finish(&b);
        if (count_occurrences(text, entry) != 1)
            fail_msg("depfile lists%s more than once:\n%s", entry, text);
        free(entry);
    }
    free(text);
    free(dep);
}

int main(void)
{
    /* The demo goldens are test_gen's too, whose hand-built module has no
     * gate analysis: this moxc keeps every gate check at entry. The default
     * deferred entries are pinned by golden/features and golden/gate. */
    setenv("MOXC_GATE_DEFER", "0", 1);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_cpu_only_build),      T(test_cuda_build),      T(test_cached_second_build),
        T(test_recovers_every_file), T(test_abandoned_stages), T(test_concurrent_builds), T(test_waits_for_lock),
        T(test_fingerprint_inputs),  T(test_fingerprint_dialect_headers),  T(test_bindings_copy_keeps_unchanged), T(test_depfile),
    };
    return cmocka_run_group_tests_name("moxc_build", tests, NULL, NULL);
}
