/* front_util.c - small helpers of moxc's front end: memory and strings,
 * diagnostics (one line per error, never repeated) and source locations.
 * Cursor queries are in front_cursors.c, type queries in front_types.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* vasprintf, realpath */
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_internal.h"

bool moxc__grow(void *ptr, size_t *cap, size_t need, size_t elem_size) {
    void **p = (void **)ptr;
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem_size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

char *moxc__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *moxc__printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

char *moxc__cxstr(CXString s) {
    const char *c = clang_getCString(s);
    char *d = moxc__strdup(c ? c : "");
    clang_disposeString(s);
    return d;
}

bool moxc__starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---------------- diagnostics ---------------- */

void moxc__print_line(moxc__front *f, const char *line) {
    /* Out of memory (-1): the line still prints, it may then repeat. */
    if (moxc__line_set_add(&f->printed, line) == 0)
        return;
    /* Held back, to print in source order (moxc__free_front); out of
     * memory, now. */
    if (f->diag && !moxc__diag_order_add(&f->held, line))
        fprintf(f->diag, "%s\n", line);
}

static void report(moxc__front *f, const char *prefix, const char *fmt, va_list ap) {
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    char *line = moxc__printf("%s: error: %s", prefix, msg ? msg : "out of memory");
    f->errors++;
    if (line)
        moxc__print_line(f, line);
    else if (f->diag)
        fprintf(f->diag, "moxc: error: out of memory\n");
    free(line);
    free(msg);
}

/* "file:line:col" of a location's expansion, malloc'd; NULL without a file. */
static char *location_prefix(CXSourceLocation loc) {
    CXFile file;
    unsigned line, col;
    moxc__expansion(loc, &file, &line, &col, NULL);
    if (!file)
        return NULL;
    char *name = moxc__cxstr(clang_getFileName(file));
    char *prefix = moxc__printf("%s:%u:%u", name ? name : "?", line, col);
    free(name);
    return prefix;
}

void moxc__error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...) {
    char *prefix = location_prefix(loc);
    va_list ap;
    va_start(ap, fmt);
    report(f, prefix ? prefix : "moxc", fmt, ap);
    va_end(ap);
    free(prefix);
}

void moxc__keyword_error_at(moxc__front *f, CXSourceLocation loc, const char *fmt, ...) {
    char *prefix = location_prefix(loc);
    /* the kernel and record checks name the place first, in their words */
    if (prefix && moxc__line_set_add(&f->keyword_at, prefix) == 0) {
        free(prefix);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    report(f, prefix ? prefix : "moxc", fmt, ap);
    va_end(ap);
    free(prefix);
}

void moxc__error_plain(moxc__front *f, const char *where, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    report(f, where ? where : "moxc", fmt, ap);
    va_end(ap);
}

void moxc__expansion(CXSourceLocation loc, CXFile *file, unsigned *line, unsigned *col,
                     unsigned *offset) {
    CXFile fl = NULL;
    unsigned l = 0, c = 0, o = 0;
    clang_getExpansionLocation(loc, &fl, &l, &c, &o);
    if (file)
        *file = fl;
    if (line)
        *line = l;
    if (col)
        *col = c;
    if (offset)
        *offset = o;
}

char *moxc__where(CXSourceLocation loc) {
    CXFile file;
    unsigned line;
    moxc__expansion(loc, &file, &line, NULL, NULL);
    if (!file)
        return moxc__strdup("<unknown>");
    char *name = moxc__cxstr(clang_getFileName(file));
    char *s = moxc__printf("%s:%u", name ? name : "?", line);
    free(name);
    return s;
}

CXSourceLocation moxc__cursor_loc(CXCursor c) {
    return clang_getCursorLocation(c);
}

CXSourceLocation moxc__cursor_start(CXCursor c) {
    return clang_getRangeStart(clang_getCursorExtent(c));
}

char *moxc__file_real(CXFile file) {
    char *name = moxc__cxstr(clang_getFileName(file));
    if (!name)
        return NULL;
    char *real = realpath(name, NULL);
    if (real) {
        free(name);
        return real;
    }
    char *tried = moxc__cxstr(clang_File_tryGetRealPathName(file));
    if (tried && tried[0] == '/') {
        free(name);
        return tried;
    }
    free(tried);
    return name;
}

bool moxc__in_mox_include(moxc__front *f, CXSourceLocation loc) {
    if (!f->mox_include_real)
        return true;
    CXFile file;
    moxc__expansion(loc, &file, NULL, NULL, NULL);
    if (!file)
        return false;
    char *real = moxc__file_real(file);
    size_t n = strlen(f->mox_include_real);
    bool in = real && strncmp(real, f->mox_include_real, n) == 0 && real[n] == '/';
    free(real);
    return in;
}

/* The ABI's names must also be usable in the C bindings and the C++ CUDA
 * translation unit: the artifact validator's list, checked here so the error
 * can point at the declaration. */
bool moxc__is_reserved_name(const char *name) {
    return mox_abi_is_reserved_name(name);
}
