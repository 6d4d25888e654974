/* test_front_robust.c - moxc_parse on broken input never crashes, leaks or
 * succeeds silently: every prefix-truncation of the accepted fixtures, byte
 * mutations and binary garbage either parse or give at least one located
 * error. Meant to run under ASan/UBSan (label sanitize). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front_test_support.h"

static char *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *text = malloc((size_t)n);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return text;
}

static void write_all(const char *path, const char *text, size_t size) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* Parses `text` as a source in `dir`, with the accept fixtures on the
 * include path (for particles.h); the result must be consistent. */
static void parse_text(const char *dir, const char *text, size_t size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/source.c", dir);
    write_all(path, text, size);
    const char *sources[] = {path};
    const char *includes[] = {FIXTURE("accept"), FIXTURE("accept/include"), NULL};
    const char *defines[] = {"BLOCK_X=32", "BLOCK_Y=1", NULL};
    front_run run = front_parse(sources, 1, includes, defines);
    if (!run.ok) {
        assert_non_null(run.diagnostics);
        if (!strstr(run.diagnostics, "error: "))
            fail_msg("parse failed without an error line for:\n%.*s", (int)size, text);
    } else {
        assert_true(run.module->abi->kernel_count >= 1);
    }
    front_run_free(&run);
}

static char *make_dir(void) {
    char tmpl[] = "/tmp/moxc_front_robust_XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *copy = strdup(dir);
    assert_non_null(copy);
    return copy;
}

static void remove_dir(char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/source.c", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static const char *const fixtures[] = {
    FIXTURE("accept/scale.c"), FIXTURE("accept/particles.c"), FIXTURE("accept/block_scan.c"),
    FIXTURE("accept/histogram.c"), FIXTURE("uniform/accepted.c"),
};

static void test_truncated_sources(void **state) {
    (void)state;
    char *dir = make_dir();
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        size_t size;
        char *text = read_all(fixtures[f], &size);
        size_t step = size / 24 + 1;
        for (size_t cut = 0; cut < size; cut += step)
            parse_text(dir, text, cut);
        free(text);
    }
    remove_dir(dir);
}

static uint32_t next_random(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void test_mutated_sources(void **state) {
    (void)state;
    static const char alphabet[] = "(){}[];,*&|!~^%<>=+-/\\\"'#?:.0123456789abcxyz_ \n\t";
    char *dir = make_dir();
    uint32_t seed = 0x6d6f7863u;
    for (size_t f = 0; f < sizeof fixtures / sizeof fixtures[0]; f++) {
        size_t size;
        char *text = read_all(fixtures[f], &size);
        for (int round = 0; round < 12; round++) {
            char *copy = malloc(size);
            assert_non_null(copy);
            memcpy(copy, text, size);
            for (int edits = 0; edits < 3; edits++)
                copy[next_random(&seed) % size] =
                    alphabet[next_random(&seed) % (sizeof alphabet - 1)];
            parse_text(dir, copy, size);
            free(copy);
        }
        free(text);
    }
    remove_dir(dir);
}

static void test_binary_garbage(void **state) {
    (void)state;
    char *dir = make_dir();
    uint32_t seed = 12345u;
    char garbage[2048];
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < sizeof garbage; i++)
            garbage[i] = (char)(next_random(&seed) & 0xff);
        parse_text(dir, garbage, sizeof garbage);
    }
    parse_text(dir, "", 0);
    remove_dir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_sources),
        cmocka_unit_test(test_mutated_sources),
        cmocka_unit_test(test_binary_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
