/* fixtures.c - sample layouts, the sample ABI and artifact used by the
 * artifact tests, plus text and temporary-directory helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "sha256.h"

static char *fx_dup(const char *s)
{
    char *c = strdup(s);
    assert_non_null(c);
    return c;
}

static mox_abi_layout *scalar(mox_scalar s)
{
    mox_abi_layout *l = mox_abi_layout_scalar(s);
    assert_non_null(l);
    return l;
}

static mox_abi_layout *array(mox_abi_layout *e, uint64_t n)
{
    mox_abi_layout *l = mox_abi_layout_array(e, n);
    assert_non_null(l);
    return l;
}

/* Record from alternating (name, layout) pairs, terminated by NULL. */
static mox_abi_layout *record(const char *name, ...)
{
    mox_abi_field *fields = calloc(8, sizeof *fields);
    size_t n = 0;
    va_list ap;
    va_start(ap, name);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL; n++) {
        assert_true(n < 8);
        fields[n].name = fx_dup(f);
        fields[n].layout = va_arg(ap, mox_abi_layout *);
    }
    va_end(ap);
    mox_abi_layout *l = mox_abi_layout_record(name, fields, n);
    assert_non_null(l);
    return l;
}

mox_abi_layout *fx_motion(void)
{
    return record("Motion", "position", array(scalar(MOX_SCALAR_F32), 2), "velocity",
                  array(scalar(MOX_SCALAR_F32), 2), NULL);
}

mox_abi_layout *fx_particle(void)
{
    return record("Particle", "tag", scalar(MOX_SCALAR_U8), "flags", scalar(MOX_SCALAR_U16), "id",
                  scalar(MOX_SCALAR_U32), "motion", fx_motion(), "color",
                  array(scalar(MOX_SCALAR_U8), 3), NULL);
}

mox_abi_layout *fx_config(void)
{
    return record("Config", "dt", scalar(MOX_SCALAR_F32), "acceleration",
                  array(scalar(MOX_SCALAR_F32), 2), NULL);
}

static void param(mox_abi_param *p, uint32_t binding, const char *name, mox_param_kind kind,
                  mox_param_access access, mox_abi_layout *layout)
{
    p->name = fx_dup(name);
    p->binding = binding;
    p->kind = kind;
    p->access = access;
    p->layout = layout;
}

mox_abi *fx_abi(void)
{
    mox_abi *abi = calloc(1, sizeof *abi);
    assert_non_null(abi);
    abi->version = 1;
    abi->required_features = MOX_FEAT_ATOMICS | MOX_FEAT_WARP_OPS;
    abi->kernel_count = 3;
    abi->kernels = calloc(3, sizeof *abi->kernels);

    mox_abi_kernel *k = &abi->kernels[0];
    k->name = fx_dup("scale_256");
    k->has_required_block = true;
    k->required_block[0] = 256;
    k->required_block[1] = k->required_block[2] = 1;
    k->param_count = 3;
    k->params = calloc(3, sizeof *k->params);
    param(&k->params[0], 0, "input", MOX_PARAM_BUFFER, MOX_PARAM_READ, scalar(MOX_SCALAR_F32));
    param(&k->params[1], 1, "output", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, scalar(MOX_SCALAR_F32));
    param(&k->params[2], 2, "n", MOX_PARAM_VALUE, MOX_PARAM_READ, scalar(MOX_SCALAR_U32));

    k = &abi->kernels[1];
    k->name = fx_dup("update_particles");
    k->features = MOX_KFEAT_ATOMICS | MOX_KFEAT_FAIL;
    k->param_count = 4;
    k->params = calloc(4, sizeof *k->params);
    param(&k->params[0], 0, "particles", MOX_PARAM_BUFFER, MOX_PARAM_WRITE, fx_particle());
    param(&k->params[1], 1, "config", MOX_PARAM_VALUE, MOX_PARAM_READ, fx_config());
    param(&k->params[2], 2, "counter", MOX_PARAM_BUFFER, MOX_PARAM_ATOMIC, scalar(MOX_SCALAR_U32));
    param(&k->params[3], 3, "count", MOX_PARAM_VALUE, MOX_PARAM_READ, scalar(MOX_SCALAR_U32));

    k = &abi->kernels[2];
    k->name = fx_dup("warp_total");
    k->features = MOX_KFEAT_WARP | MOX_KFEAT_ATOMICS | MOX_KFEAT_BARRIER | MOX_KFEAT_SHARED |
                  MOX_KFEAT_F16;
    k->param_count = 3;
    k->params = calloc(3, sizeof *k->params);
    param(&k->params[0], 0, "values", MOX_PARAM_BUFFER, MOX_PARAM_READ, scalar(MOX_SCALAR_F16));
    param(&k->params[1], 1, "totals", MOX_PARAM_BUFFER, MOX_PARAM_ATOMIC, scalar(MOX_SCALAR_I32));
    param(&k->params[2], 2, "scale", MOX_PARAM_VALUE, MOX_PARAM_READ,
          array(array(scalar(MOX_SCALAR_I8), 3), 2));

    mox_artifact_error err = {0};
    if (!mox_abi_validate(abi, &err))
        fail_msg("fixture ABI does not validate: %s", err.message);
    return abi;
}

char *fx_abi_json(void)
{
    mox_abi *abi = fx_abi();
    char *text = mox_abi_to_json(abi);
    assert_non_null(text);
    mox_abi_free(abi);
    return text;
}

static const char *const file_names[MOX_FILE_COUNT_] = {
    "abi.json", "kernels.fatbin", "kernels_cpu.so", "kernels_cuda.cu",
    "kernels_cpu.c", "stages.h", "stages.c",
};

/* Contents of a file of the sample artifact (abi.json: the canonical ABI). */
static char *file_contents(mox_artifact_file f)
{
    if (f == MOX_FILE_ABI_JSON)
        return fx_abi_json();
    char *text = malloc(128);
    assert_non_null(text);
    snprintf(text, 128, "contents of %s\n", file_names[f]);
    return text;
}

mox_manifest *fx_manifest(bool with_fatbin)
{
    mox_manifest *m = calloc(1, sizeof *m);
    assert_non_null(m);
    m->module = fx_dup("stages");
    m->abi = fx_abi();
    char *abi_text = mox_abi_to_json(m->abi);
    assert_true(mox_sha256_hex(abi_text, strlen(abi_text), m->abi_sha256));
    free(abi_text);
    for (int f = 0; f < MOX_FILE_COUNT_; f++) {
        if (f == MOX_FILE_FATBIN && !with_fatbin)
            continue;
        char *text = file_contents((mox_artifact_file)f);
        m->files[f].present = true;
        m->files[f].path = fx_dup(file_names[f]);
        assert_true(mox_sha256_hex(text, strlen(text), m->files[f].sha256));
        free(text);
    }
    if (with_fatbin) {
        m->cuda_arch_count = 2;
        m->cuda_archs = calloc(2, sizeof(char *));
        m->cuda_archs[0] = fx_dup("sm_90");
        m->cuda_archs[1] = fx_dup("sm_90a");
        m->ptx = true;
    }
    assert_true(mox_sha256_hex("inputs", 6, m->fingerprint));
    m->moxc_version = fx_dup("0.1.0");
    m->nvcc_version = fx_dup(with_fatbin ? "Cuda compilation tools, release 12.4, V12.4.131" : "");
    m->cc_version = fx_dup("gcc (Debian 12.2.0-14) 12.2.0");
    if (with_fatbin) {
        m->nvcc_flag_count = 2;
        m->nvcc_flags = calloc(2, sizeof(char *));
        m->nvcc_flags[0] = fx_dup("-fmad=false");
        m->nvcc_flags[1] = fx_dup("-prec-div=true");
    }
    m->cc_flag_count = 1;
    m->cc_flags = calloc(1, sizeof(char *));
    m->cc_flags[0] = fx_dup("-O2");
    /* loops, the plain fallback and fibers, one each */
    static const char *const executors[] = {"loops", "thread-calls", "fibers"};
    m->cpu_kernel_count = m->abi->kernel_count;
    m->cpu_kernels = calloc(m->cpu_kernel_count, sizeof *m->cpu_kernels);
    assert_non_null(m->cpu_kernels);
    for (size_t k = 0; k < m->cpu_kernel_count; k++) {
        m->cpu_kernels[k].name = fx_dup(m->abi->kernels[k].name);
        m->cpu_kernels[k].executor = fx_dup(executors[k % 3]);
        m->cpu_kernels[k].note = k ? fx_dup("a barrier or warp operation inside a switch statement at k.c:9") : NULL;
    }
    return m;
}

void fx_write_file(const char *dir, const char *name, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

void fx_write_artifact(const char *dir, bool with_fatbin)
{
    for (int f = 0; f < MOX_FILE_COUNT_; f++) {
        if (f == MOX_FILE_FATBIN && !with_fatbin)
            continue;
        char *text = file_contents((mox_artifact_file)f);
        fx_write_file(dir, file_names[f], text, strlen(text));
        free(text);
    }
    mox_manifest *m = fx_manifest(with_fatbin);
    char *json = mox_manifest_to_json(m);
    assert_non_null(json);
    fx_write_file(dir, "manifest.json", json, strlen(json));
    free(json);
    mox_manifest_free(m);
}

char *fx_replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("\"%s\" does not occur in the fixture text", from);
    size_t head = (size_t)(at - text), nf = strlen(from), nt = strlen(to);
    size_t tail = strlen(at + nf);
    char *out = malloc(head + nt + tail + 1);
    assert_non_null(out);
    memcpy(out, text, head);
    memcpy(out + head, to, nt);
    memcpy(out + head + nt, at + nf, tail + 1);
    return out;
}

char *fx_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/mox-artifact-test-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(path));
    return path;
}

void fx_rmdir(char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_int_equal(unlink(path), 0);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}
