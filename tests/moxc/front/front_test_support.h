/* front_test_support.h - running moxc_parse on fixtures and checking its
 * diagnostics by file, line and text. */
#ifndef FRONT_TEST_SUPPORT_H
#define FRONT_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "front.h"

#define FIXTURE(rel) FRONT_FIXTURES "/" rel

typedef struct front_run {
    bool ok;
    moxc_module *module;
    char *diagnostics; /* everything moxc_parse printed */
} front_run;

/* Parses `count` sources with the real mox include directory plus
 * `include_dirs` and `defines` (NULL-terminated lists, may be NULL). */
front_run front_parse(const char *const *sources, size_t count, const char *const *include_dirs,
                      const char *const *defines);
front_run front_parse1(const char *source);
void front_run_free(front_run *run);

/* realpath() of a fixture, malloc'd; fails the test when it does not exist. */
char *front_real(const char *path);
/* 1-based line of the first line of `path` containing `marker`. */
unsigned front_marker_line(const char *path, const char *marker);
/* Byte offset of the first occurrence of `text` in `path`. */
size_t front_offset_of(const char *path, const char *text);

/* Asserts that parsing failed without a module and that one diagnostic line
 * starts with "path:line:" and contains "error: " and `text`. */
void front_expect_error(const front_run *run, const char *path, unsigned line, const char *text);
/* Same, with the line found by front_marker_line(path, marker). */
void front_expect_error_at(const front_run *run, const char *path, const char *marker,
                           const char *text);
/* Parses one source expected to fail at its marker with `text`. */
void front_expect_rejected(const char *path, const char *marker, const char *text);

/* The kernel named `name` in a module (fails the test if absent). */
const mox_abi_kernel *front_kernel(const moxc_module *m, const char *name, size_t *index);
/* Signature text of a layout (mox_abi_layout_signature), malloc'd. */
char *front_signature(const mox_abi_layout *layout);

#endif
