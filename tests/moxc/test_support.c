/* test_support.c - see test_support.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_support.h"

const char *test_dir(void)
{
    return MOXC_TEST_DIR;
}

char *test_path(const char *rel)
{
    char *p = moxc_path_join(MOXC_TEST_DIR, rel);
    assert_non_null(p);
    return p;
}

static char *dup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

static mox_abi_layout *scalar(mox_scalar s)
{
    mox_abi_layout *l = mox_abi_layout_scalar(s);
    assert_non_null(l);
    return l;
}

static mox_abi_layout *record(const char *name, size_t count, const char *const *names, mox_abi_layout **layouts)
{
    mox_abi_field *fields = calloc(count, sizeof *fields);
    assert_non_null(fields);
    for (size_t i = 0; i < count; ++i) {
        fields[i].name = dup(names[i]);
        fields[i].layout = layouts[i];
    }
    mox_abi_layout *l = mox_abi_layout_record(name, fields, count);
    assert_non_null(l);
    return l;
}

static mox_abi_layout *vec2(void)
{
    static const char *const names[] = {"x", "y"};
    mox_abi_layout *layouts[] = {scalar(MOX_SCALAR_F32), scalar(MOX_SCALAR_F32)};
    return record("Vec2", 2, names, layouts);
}

static mox_abi_layout *particle(void)
{
    static const char *const names[] = {"pos", "vel", "mass", "id"};
    mox_abi_layout *layouts[] = {vec2(), vec2(), scalar(MOX_SCALAR_F32), scalar(MOX_SCALAR_U32)};
    return record("Particle", 4, names, layouts);
}

static mox_abi_layout *config(void)
{
    static const char *const names[] = {"dt", "count", "steps", "flags"};
    mox_abi_layout *flags = mox_abi_layout_array(scalar(MOX_SCALAR_U8), 2);
    assert_non_null(flags);
    mox_abi_layout *layouts[] = {scalar(MOX_SCALAR_F32), scalar(MOX_SCALAR_U32), scalar(MOX_SCALAR_U16), flags};
    return record("Config", 4, names, layouts);
}

typedef struct param_spec {
    const char *name;
    mox_param_kind kind;
    mox_param_access access;
    mox_abi_layout *layout;
    const char *spelling;
} param_spec;

static void set_kernel(moxc_module *m, size_t index, const char *name, uint32_t features, const uint32_t *block,
                       size_t count, const param_spec *params, unsigned line)
{
    mox_abi_kernel *k = &m->abi->kernels[index];
    k->name = dup(name);
    k->features = features;
    if (block) {
        k->has_required_block = true;
        memcpy(k->required_block, block, sizeof k->required_block);
    }
    k->param_count = count;
    k->params = count ? calloc(count, sizeof *k->params) : NULL;
    moxc_kernel_info *info = &m->kernels[index];
    info->file = test_path("kernels/demo.c");
    info->line = line;
    info->params = count ? calloc(count, sizeof *info->params) : NULL;
    for (size_t i = 0; i < count; ++i) {
        k->params[i] = (mox_abi_param){dup(params[i].name), (uint32_t)i, params[i].kind, params[i].access,
                                       params[i].layout};
        info->params[i].c_spelling = dup(params[i].spelling);
    }
}

/* Offset of the start of `needle`'s occurrence number `nth` (0-based). */
static size_t offset_of(const char *text, const char *needle, int nth)
{
    const char *p = text;
    for (int i = 0; i <= nth; ++i) {
        p = strstr(i ? p + 1 : p, needle);
        assert_non_null(p);
    }
    return (size_t)(p - text);
}

moxc_module *demo_module(void)
{
    moxc_module *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->abi = calloc(1, sizeof *m->abi);
    assert_non_null(m->abi);
    m->abi->version = 1;
    m->abi->required_features = MOX_FEAT_ATOMICS;
    m->abi->kernel_count = 4;
    m->abi->kernels = calloc(4, sizeof *m->abi->kernels);
    m->kernels = calloc(4, sizeof *m->kernels);
    assert_non_null(m->abi->kernels);
    assert_non_null(m->kernels);

    static const uint32_t block256[3] = {256, 1, 1}, block16[3] = {16, 16, 1};
    param_spec scale[] = {
        {"input", MOX_PARAM_BUFFER, MOX_PARAM_READ, scalar(MOX_SCALAR_F32), "float"},
        {"output", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, scalar(MOX_SCALAR_F32), "float"},
        {"n", MOX_PARAM_VALUE, MOX_PARAM_READ, scalar(MOX_SCALAR_U32), "uint32_t"},
    };
    set_kernel(m, 0, "scale", 0, block256, 3, scale, 17);
    param_spec integrate[] = {
        {"particles", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, particle(), "Particle"},
        {"config", MOX_PARAM_VALUE, MOX_PARAM_READ, config(), "Config"},
        {"gain", MOX_PARAM_VALUE, MOX_PARAM_READ, scalar(MOX_SCALAR_F16), "mox_f16"},
        {"counter", MOX_PARAM_BUFFER, MOX_PARAM_ATOMIC, scalar(MOX_SCALAR_U32), "mox_atomic_u32"},
    };
    set_kernel(m, 1, "integrate", MOX_KFEAT_ATOMICS | MOX_KFEAT_FAIL | MOX_KFEAT_F16, NULL, 4, integrate, 25);
    param_spec tile[] = {
        {"values", MOX_PARAM_BUFFER, MOX_PARAM_READ, scalar(MOX_SCALAR_F32), "float"},
        {"sums", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, scalar(MOX_SCALAR_F32), "float"},
        {"bias", MOX_PARAM_VALUE, MOX_PARAM_READ, scalar(MOX_SCALAR_I8), "int8_t"},
    };
    set_kernel(m, 2, "tile", MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED, block16, 3, tile, 41);
    set_kernel(m, 3, "noop", 0, NULL, 0, NULL, 58);

    mox_artifact_error err;
    if (!mox_abi_validate(m->abi, &err))
        fail_msg("demo ABI invalid: %s", err.message);

    static const char *const records[][2] = {{"Vec2", "Vec2"}, {"Particle", "Particle"}, {"Config", "Config"}};
    m->record_count = 3;
    m->records = calloc(3, sizeof *m->records);
    assert_non_null(m->records);
    for (size_t i = 0; i < 3; ++i)
        m->records[i] = (moxc_record){dup(records[i][0]), dup(records[i][1]), test_path("kernels/records.h")};

    m->dependency_count = 2;
    m->dependencies = calloc(2, sizeof *m->dependencies);
    assert_non_null(m->dependencies);
    m->dependencies[0] = test_path("kernels/demo.c");
    m->dependencies[1] = test_path("kernels/records.h");

    m->edit_count = 1;
    m->edits = calloc(1, sizeof *m->edits);
    assert_non_null(m->edits);
    m->edits[0].path = test_path("kernels/demo.c");
    char *text = read_text(m->edits[0].path);
    assert_non_null(text);
    /* Where the front end inserts "__device__ ": the helper, the constant
     * and each kernel. */
    static const struct { const char *needle; int nth; } spots[] = {
        {"static const float demo_offset", 0}, {"static float twice", 0}, {"MOX_KERNEL MOX_BLOCK(256", 0},
        {"MOX_KERNEL\nvoid integrate", 0},     {"MOX_KERNEL MOX_BLOCK(16", 0}, {"MOX_KERNEL\nvoid noop", 0},
    };
    m->edits[0].offset_count = sizeof spots / sizeof spots[0];
    m->edits[0].offsets = calloc(m->edits[0].offset_count, sizeof *m->edits[0].offsets);
    assert_non_null(m->edits[0].offsets);
    for (size_t i = 0; i < m->edits[0].offset_count; ++i)
        m->edits[0].offsets[i] = offset_of(text, spots[i].needle, spots[i].nth);
    free(text);
    return m;
}

void demo_module_free(moxc_module *m)
{
    if (!m)
        return;
    for (size_t k = 0; k < m->abi->kernel_count; ++k) {
        for (size_t i = 0; i < m->abi->kernels[k].param_count; ++i)
            free(m->kernels[k].params[i].c_spelling);
        free(m->kernels[k].params);
        free(m->kernels[k].file);
    }
    free(m->kernels);
    mox_abi_free(m->abi);
    for (size_t i = 0; i < m->record_count; ++i) {
        free(m->records[i].name);
        free(m->records[i].c_spelling);
        free(m->records[i].header);
    }
    free(m->records);
    for (size_t i = 0; i < m->dependency_count; ++i)
        free(m->dependencies[i]);
    free(m->dependencies);
    for (size_t i = 0; i < m->edit_count; ++i) {
        free(m->edits[i].path);
        free(m->edits[i].offsets);
    }
    free(m->edits);
    free(m);
}

moxc_source_text demo_source_text(const moxc_module *m)
{
    char *text = read_text(m->edits[0].path);
    assert_non_null(text);
    return (moxc_source_text){m->edits[0].path, text, strlen(text)};
}

char *test_mkdtemp(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    moxc_buf b = {0};
    moxc_buf_printf(&b, "%s/moxc-test-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    char *dir = moxc_buf_finish(&b);
    assert_non_null(dir);
    assert_non_null(mkdtemp(dir));
    return dir;
}

void test_rmdir(char *dir)
{
    if (dir)
        moxc_remove_tree(dir);
    free(dir);
}

char *read_text(const char *path)
{
    char *data;
    size_t size;
    return moxc_read_file(path, &data, &size) ? data : NULL;
}

void write_text(const char *path, const char *text)
{
    assert_true(moxc_write_file(path, text, strlen(text)));
}

char *replace_all(const char *text, const char *from, const char *to)
{
    moxc_buf b = {0};
    size_t n = strlen(from);
    for (const char *p = text;;) {
        const char *hit = n ? strstr(p, from) : NULL;
        if (!hit) {
            moxc_buf_put(&b, p);
            break;
        }
        moxc_buf_write(&b, p, (size_t)(hit - p));
        moxc_buf_put(&b, to);
        p = hit + n;
    }
    char *out = moxc_buf_finish(&b);
    assert_non_null(out);
    return out;
}

void check_golden(const char *rel, const char *actual)
{
    char *normal = replace_all(actual, MOXC_TEST_DIR, "@TESTS@");
    char *golden_rel = moxc_path_join("golden", rel);
    char *path = test_path(golden_rel);
    const char *update = getenv("MOXC_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        write_text(path, normal);
        fprintf(stderr, "updated %s\n", path);
    } else {
        char *expected = read_text(path);
        if (!expected)
            fail_msg("golden file %s is missing (MOXC_UPDATE_GOLDEN=1 writes it)", path);
        if (strcmp(expected, normal) != 0) {
            size_t i = 0;
            while (expected[i] && expected[i] == normal[i])
                ++i;
            size_t line = 1;
            for (size_t j = 0; j < i; ++j)
                line += expected[j] == '\n';
            fail_msg("%s differs from its golden file at line %zu (MOXC_UPDATE_GOLDEN=1 rewrites it)", path,
                     line);
        }
        free(expected);
    }
    free(path);
    free(golden_rel);
    free(normal);
}

int run_capture(const char *const *argv, char **output)
{
    moxc_proc proc;
    assert_true(moxc_run(argv, &proc));
    int rc = proc.started && !proc.signal ? proc.exit_code : -1;
    if (output)
        *output = proc.output;
    else
        moxc_proc_free(&proc);
    return rc;
}

size_t count_occurrences(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(text, needle); p; p = strstr(p + len, needle))
        ++n;
    return n;
}
