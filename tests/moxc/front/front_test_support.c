/* front_test_support.c - see front_test_support.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front_test_support.h"

static size_t list_length(const char *const *list) {
    size_t n = 0;
    while (list && list[n])
        n++;
    return n;
}

front_run front_parse(const char *const *sources, size_t count, const char *const *include_dirs,
                      const char *const *defines) {
    front_run run = {false, NULL, NULL};
    size_t diag_size = 0;
    FILE *diag = open_memstream(&run.diagnostics, &diag_size);
    assert_non_null(diag);
    moxc_parse_options opts;
    memset(&opts, 0, sizeof opts);
    opts.sources = sources;
    opts.source_count = count;
    opts.include_dirs = include_dirs;
    opts.include_dir_count = list_length(include_dirs);
    opts.defines = defines;
    opts.define_count = list_length(defines);
    opts.mox_include_dir = MOX_INCLUDE_DIR;
    opts.diagnostics = diag;
    run.ok = moxc_parse(&opts, &run.module);
    fclose(diag);
    if (run.ok) {
        assert_non_null(run.module);
    } else {
        assert_null(run.module);
    }
    return run;
}

front_run front_parse1(const char *source) {
    const char *sources[] = {source};
    return front_parse(sources, 1, NULL, NULL);
}

void front_run_free(front_run *run) {
    moxc_module_free(run->module);
    free(run->diagnostics);
    run->module = NULL;
    run->diagnostics = NULL;
}

char *front_real(const char *path) {
    char *real = realpath(path, NULL);
    if (!real)
        fail_msg("fixture %s does not exist", path);
    return real;
}

static char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *text = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            text = realloc(text, cap);
            assert_non_null(text);
        }
        size_t got = fread(text + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    text[n] = '\0';
    if (size)
        *size = n;
    return text;
}

unsigned front_marker_line(const char *path, const char *marker) {
    char *text = read_file(path, NULL);
    char *hit = strstr(text, marker);
    if (!hit) {
        free(text);
        fail_msg("marker '%s' not found in %s", marker, path);
    }
    unsigned line = 1;
    for (char *p = text; p < hit; p++)
        line += *p == '\n';
    free(text);
    return line;
}

size_t front_offset_of(const char *path, const char *needle) {
    char *text = read_file(path, NULL);
    char *hit = strstr(text, needle);
    if (!hit) {
        free(text);
        fail_msg("'%s' not found in %s", needle, path);
    }
    size_t off = (size_t)(hit - text);
    free(text);
    return off;
}

void front_expect_error(const front_run *run, const char *path, unsigned line, const char *text) {
    if (run->ok)
        fail_msg("expected an error '%s' at %s:%u, but parsing succeeded", text, path, line);
    assert_null(run->module);
    char prefix[PATH_MAX + 32];
    snprintf(prefix, sizeof prefix, "%s:%u:", path, line);
    const char *d = run->diagnostics ? run->diagnostics : "";
    bool found = false;
    for (const char *p = d; *p && !found;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *one = strndup(p, len);
        assert_non_null(one);
        found = strncmp(one, prefix, strlen(prefix)) == 0 && strstr(one, "error: ") &&
                strstr(one, text);
        free(one);
        p += len + (eol ? 1 : 0);
    }
    if (!found)
        fail_msg("no diagnostic '%s...%s' in:\n%s", prefix, text, d);
}

void front_expect_error_at(const front_run *run, const char *path, const char *marker,
                           const char *text) {
    front_expect_error(run, path, front_marker_line(path, marker), text);
}

void front_expect_rejected(const char *path, const char *marker, const char *text) {
    front_run run = front_parse1(path);
    front_expect_error_at(&run, path, marker, text);
    front_run_free(&run);
}

const mox_abi_kernel *front_kernel(const moxc_module *m, const char *name, size_t *index) {
    for (size_t i = 0; i < m->abi->kernel_count; i++) {
        if (strcmp(m->abi->kernels[i].name, name) == 0) {
            if (index)
                *index = i;
            return &m->abi->kernels[i];
        }
    }
    fail_msg("kernel %s not in the module", name);
    return NULL;
}

char *front_signature(const mox_abi_layout *layout) {
    assert_non_null(layout);
    char *s = mox_abi_layout_signature(layout);
    assert_non_null(s);
    return s;
}
