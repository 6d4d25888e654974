/* test_support.h - helpers shared by moxc's tests: the "demo" module built
 * by hand (the ABI of kernels/demo.c, without the front end), files and
 * temporary directories, golden-file comparison, running programs. */
#ifndef MOXC_TEST_SUPPORT_H
#define MOXC_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "build.h"

/* MOXC_TEST_DIR (tests/moxc) is compiled in. */
const char *test_dir(void);
/* The nvcc CMake found (MOX_NVCC_PATH), or NULL when it found none or the
 * file is not executable here: tests that need nvcc skip on NULL. */
const char *test_nvcc(void);
/* <tests/moxc>/<rel>, malloc'd. */
char *test_path(const char *rel);

/* The module moxc's front end should produce for kernels/demo.c. */
moxc_module *demo_module(void);
void demo_module_free(moxc_module *m);
/* The text of kernels/demo.c, matching module->edits[0]. */
moxc_source_text demo_source_text(const moxc_module *m);

/* A fresh directory under $TMPDIR (or /tmp); removed by test_rmdir. */
char *test_mkdtemp(const char *tag);
void test_rmdir(char *dir);

char *read_text(const char *path);             /* NULL when unreadable */
void write_text(const char *path, const char *text);
char *replace_all(const char *text, const char *from, const char *to);

/* Compares `actual` with tests/moxc/golden/<rel> after replacing the tests
 * directory's absolute path with "@TESTS@". With MOXC_UPDATE_GOLDEN=1 in
 * the environment, rewrites the golden file instead. */
void check_golden(const char *rel, const char *actual);

/* Runs argv (no shell), returns the exit code (-1: did not run or died);
 * *output (may be NULL) gets stdout+stderr. */
int run_capture(const char *const *argv, char **output);
/* Runs `exe` with the NULL-terminated `args` (at most 30) through
 * run_capture; returns the exit code. */
int run_program(const char *exe, char **output, const char *const *args);
/* Fails the test unless rc == expected_rc and `output` holds `needle`
 * (NULL: any output); frees `output`. */
void expect_exit(int rc, int expected_rc, char *output, const char *needle);
/* run_program, then expect_exit. */
void expect_program(const char *exe, int expected_rc, const char *needle, const char *const *args);

/* Counts non-overlapping occurrences. */
size_t count_occurrences(const char *text, const char *needle);

#endif
