/* manifest.c - manifest.json of an artifact directory: strict parsing with
 * every consistency rule of docs/abi.md, and stable pretty writing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact_internal.h"
#include "core/alloc.h"
#include "manifest.h"
#include "sha256.h"

static const char *const file_keys[MOX_FILE_COUNT_] = {
    "abi_json", "fatbin", "cpu_so", "cuda_tu", "cpu_tu", "bindings_h", "bindings_c",
};

const char *mox_artifact_file_key(mox_artifact_file f)
{
    return (unsigned)f < MOX_FILE_COUNT_ ? file_keys[f] : NULL;
}

static void free_strings(char **list, size_t count)
{
    for (size_t i = 0; list && i < count; i++)
        mox__free(list[i]);
    mox__free(list);
}

void mox_manifest_free(mox_manifest *m)
{
    if (!m)
        return;
    mox__free(m->module);
    mox_abi_free(m->abi);
    free_strings(m->cuda_archs, m->cuda_arch_count);
    for (int f = 0; f < MOX_FILE_COUNT_; f++)
        mox__free(m->files[f].path);
    mox__free(m->moxc_version);
    mox__free(m->nvcc_version);
    mox__free(m->cc_version);
    free_strings(m->nvcc_flags, m->nvcc_flag_count);
    free_strings(m->cc_flags, m->cc_flag_count);
    mox__manifest_free_cpu(m);
    mox__free(m);
}

/* ---------------- reading ---------------- */

static bool read_strings(const json_t *obj, const char *key, const char *what, char ***out,
                         size_t *count, mox_artifact_error *err)
{
    const json_t *array = json_object_get(obj, key);
    if (!json_is_array(array))
        return mox__fail(err, "%s: field \"%s\" must be an array of strings", what, key);
    size_t n = json_array_size(array);
    if (n && !(*out = mox__calloc(n, sizeof **out)))
        return mox__fail_oom(err, "out of memory reading %s", what);
    *count = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(array, i);
        if (!json_is_string(item))
            return mox__fail(err, "%s: field \"%s\" must be an array of strings", what, key);
        if (!((*out)[i] = mox__strdup(json_string_value(item))))
            return mox__fail_oom(err, "out of memory reading %s", what);
    }
    return true;
}

/* Copies a 64-hex-digit hash; `what`/`key` name it in the message. */
static bool read_hash(const json_t *obj, const char *key, const char *what, char out[65],
                      mox_artifact_error *err)
{
    const char *text;
    if (!mox__json_string(obj, key, what, &text, err))
        return false;
    if (!mox_sha256_is_hex(text))
        return mox__fail(err, "%s: %s \"%s\" is not 64 lowercase hex characters", what, key, text);
    memcpy(out, text, 65);
    return true;
}

static bool plain_file_name(const char *path)
{
    return *path && !strchr(path, '/') && !strchr(path, '\\') && strcmp(path, ".") != 0 &&
           !strstr(path, "..");
}

static const char *const file_entry_keys[] = {"path", "sha256"};

static bool read_files(const json_t *files, mox_manifest *m, mox_artifact_error *err)
{
    char what[sizeof err->message];
    if (!mox__json_object(files, "manifest files", file_keys, MOX_FILE_COUNT_, err))
        return false;
    for (int f = 0; f < MOX_FILE_COUNT_; f++) {
        const json_t *entry = json_object_get(files, file_keys[f]);
        mox__format(what, sizeof what, "manifest files.%s", file_keys[f]);
        if (json_is_null(entry))
            continue;
        mox_manifest_file *file = &m->files[f];
        if (!mox__json_object(entry, what, file_entry_keys, 2, err) ||
            !mox__json_strdup(entry, "path", what, &file->path, err) ||
            !read_hash(entry, "sha256", what, file->sha256, err))
            return false;
        file->present = true;
        if (!plain_file_name(file->path))
            return mox__fail(err, "%s: path \"%s\" must be a plain file name (no '/', no '..')",
                             what, file->path);
        for (int g = 0; g < f; g++)
            if (m->files[g].present && strcmp(m->files[g].path, file->path) == 0)
                return mox__fail(err, "manifest files: %s and %s have the same path \"%s\"",
                                 file_keys[g], file_keys[f], file->path);
    }
    return true;
}

static bool arch_name(const char *text)
{
    if (strncmp(text, "sm_", 3) != 0 || !(text[3] >= '1' && text[3] <= '9'))
        return false;
    const char *p = text + 4;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p >= 'a' && *p <= 'z')
        p++;
    return *p == '\0';
}

static const char *const target_keys[] = {"cuda_archs", "ptx"};
static const char *const build_keys[] = {"fingerprint", "moxc_version", "nvcc_version",
                                         "cc_version", "nvcc_flags", "cc_flags"};

static bool read_target(const json_t *target, mox_manifest *m, mox_artifact_error *err)
{
    const char *what = "manifest target";
    if (!mox__json_object(target, what, target_keys, 2, err) ||
        !read_strings(target, "cuda_archs", what, &m->cuda_archs, &m->cuda_arch_count, err))
        return false;
    const json_t *ptx = json_object_get(target, "ptx");
    if (!json_is_boolean(ptx))
        return mox__fail(err, "%s: field \"ptx\" must be true or false", what);
    m->ptx = json_is_true(ptx);
    for (size_t i = 0; i < m->cuda_arch_count; i++) {
        if (!arch_name(m->cuda_archs[i]))
            return mox__fail(err, "%s: \"%s\" is not a CUDA architecture name like \"sm_90\"", what,
                             m->cuda_archs[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->cuda_archs[i], m->cuda_archs[j]) == 0)
                return mox__fail(err, "%s: duplicate CUDA architecture \"%s\"", what, m->cuda_archs[i]);
    }
    return true;
}

static bool read_build(const json_t *build, mox_manifest *m, mox_artifact_error *err)
{
    const char *what = "manifest build";
    return mox__json_object(build, what, build_keys, 6, err) &&
           read_hash(build, "fingerprint", what, m->fingerprint, err) &&
           mox__json_strdup(build, "moxc_version", what, &m->moxc_version, err) &&
           mox__json_strdup(build, "nvcc_version", what, &m->nvcc_version, err) &&
           mox__json_strdup(build, "cc_version", what, &m->cc_version, err) &&
           read_strings(build, "nvcc_flags", what, &m->nvcc_flags, &m->nvcc_flag_count, err) &&
           read_strings(build, "cc_flags", what, &m->cc_flags, &m->cc_flag_count, err);
}

/* Rules that relate the manifest's parts to each other. */
static bool check_consistency(const mox_manifest *m, mox_artifact_error *err)
{
    char computed[MOX_SHA256_HEX_LEN + 1];
    /* The ABI is valid here, so only memory can fail its canonical text. */
    char *abi_text = mox_abi_to_json(m->abi);
    if (!abi_text)
        return mox__fail_oom(err, "out of memory writing the manifest's ABI");
    bool hashed = mox_sha256_hex(abi_text, strlen(abi_text), computed);
    mox__free(abi_text);
    if (!hashed)
        return mox__fail_oom(err, MOX_SHA256_FAILED " hashing the manifest's ABI");
    if (strcmp(computed, m->abi_sha256) != 0)
        return mox__fail(err, "manifest abi_sha256 %s does not match its ABI (whose canonical JSON "
                         "hashes to %s)", m->abi_sha256, computed);
    if (!m->files[MOX_FILE_ABI_JSON].present)
        return mox__fail(err, "manifest files: abi_json is required");
    if (!m->files[MOX_FILE_CPU_SO].present)
        return mox__fail(err, "manifest files: cpu_so is required");
    if (strcmp(m->files[MOX_FILE_ABI_JSON].sha256, m->abi_sha256) != 0)
        return mox__fail(err, "manifest files.abi_json: sha256 differs from abi_sha256 (%s must "
                         "hold exactly the canonical ABI JSON)", m->files[MOX_FILE_ABI_JSON].path);
    bool fatbin = m->files[MOX_FILE_FATBIN].present;
    if (fatbin && m->cuda_arch_count == 0)
        return mox__fail(err, "manifest target: cuda_archs is empty but the artifact has a fatbin");
    if (!fatbin && (m->cuda_arch_count || m->ptx))
        return mox__fail(err, "manifest target: cuda_archs and ptx must be empty and false "
                         "without a fatbin");
    if (!*m->moxc_version)
        return mox__fail(err, "manifest build: moxc_version is empty");
    if (!*m->cc_version)
        return mox__fail(err, "manifest build: cc_version is empty");
    if (fatbin && !*m->nvcc_version)
        return mox__fail(err, "manifest build: nvcc_version is empty but the artifact has a fatbin");
    return mox__manifest_check_cpu(m, err);
}

static const char *const manifest_keys[] = {"format", "format_version", "module", "abi",
                                            "abi_sha256", "target", "files", "build", "cpu"};

static bool read_manifest(const json_t *root, mox_manifest *m, mox_artifact_error *err)
{
    const char *what = "manifest";
    if (!json_is_object(root))
        return mox__fail(err, "manifest must be a JSON object");
    /* Format and versions first: another generation's manifest gets this
     * message rather than a complaint about a field it renamed. */
    const json_t *format = json_object_get(root, "format");
    if (!json_is_string(format) || strcmp(json_string_value(format), MOX_MANIFEST_FORMAT) != 0)
        return mox__fail(err, "not a mox artifact manifest (field \"format\" must be \"%s\")",
                         MOX_MANIFEST_FORMAT);
    const json_t *version = json_object_get(root, "format_version");
    if (!json_is_integer(version))
        return mox__fail(err, "manifest: field \"format_version\" must be an integer");
    if (json_integer_value(version) != MOX_MANIFEST_VERSION)
        return mox__fail(err, "unsupported manifest format version %" JSON_INTEGER_FORMAT
                         " (this mox reads version %d)", json_integer_value(version), MOX_MANIFEST_VERSION);
    const json_t *abi_version = json_object_get(json_object_get(root, "abi"), "version");
    if (json_is_integer(abi_version) && (json_integer_value(abi_version) < MOX_ABI_VERSION_MIN ||
                                         json_integer_value(abi_version) > MOX_ABI_VERSION))
        return mox__fail(err, "unsupported kernel ABI version %" JSON_INTEGER_FORMAT
                         " (this mox reads versions %d to %d)", json_integer_value(abi_version),
                         MOX_ABI_VERSION_MIN, MOX_ABI_VERSION);
    if (!mox__json_object(root, what, manifest_keys, 9, err) ||
        !mox__json_strdup(root, "module", what, &m->module, err))
        return false;
    if (!mox__is_identifier(m->module))
        return mox__fail(err, "manifest: module name \"%s\" is not a valid identifier", m->module);
    return mox__abi_from_value(json_object_get(root, "abi"), &m->abi, err) &&
           read_hash(root, "abi_sha256", what, m->abi_sha256, err) &&
           read_target(json_object_get(root, "target"), m, err) &&
           read_files(json_object_get(root, "files"), m, err) &&
           read_build(json_object_get(root, "build"), m, err) &&
           mox__manifest_read_cpu(json_object_get(root, "cpu"), m, err) && check_consistency(m, err);
}

bool mox_manifest_parse(const char *text, size_t length, mox_manifest **out, mox_artifact_error *err)
{
    *out = NULL;
    if (!text)
        return mox__fail(err, "no manifest text");
    json_t *root = mox__json_parse(text, length, "manifest", err);
    if (!root)
        return false;
    mox_manifest *m = mox__calloc(1, sizeof *m);
    bool ok = m ? read_manifest(root, m, err) : mox__fail_oom(err, "out of memory reading the manifest");
    json_decref(root);
    if (!ok) {
        mox_manifest_free(m);
        return false;
    }
    *out = m;
    return true;
}

/* ---------------- writing ---------------- */

static json_t *string_array(char *const *list, size_t count)
{
    json_t *array = json_array();
    for (size_t i = 0; array && i < count; i++) {
        if (!list[i] || json_array_append_new(array, json_string(list[i])) != 0) {
            json_decref(array);
            return NULL;
        }
    }
    return array;
}

char *mox_manifest_to_json(const mox_manifest *m)
{
    if (!m)
        return NULL;
    json_t *files = json_object();
    for (int f = 0; files && f < MOX_FILE_COUNT_; f++) {
        const mox_manifest_file *file = &m->files[f];
        json_t *entry = file->present ? json_pack("{s:s,s:s}", "path", file->path ? file->path : "",
                                                  "sha256", file->sha256)
                                      : json_null();
        if (json_object_set_new(files, file_keys[f], entry) != 0) {
            json_decref(files);
            files = NULL;
        }
    }
    json_t *root = json_pack(
        "{s:s,s:i,s:s?,s:o,s:s,s:{s:o,s:b},s:o,s:{s:s,s:s?,s:s?,s:s?,s:o,s:o}}", "format",
        MOX_MANIFEST_FORMAT, "format_version", MOX_MANIFEST_VERSION, "module", m->module, "abi",
        mox__abi_to_value(m->abi), "abi_sha256", m->abi_sha256, "target", "cuda_archs",
        string_array(m->cuda_archs, m->cuda_arch_count), "ptx", (int)m->ptx, "files", files,
        "build", "fingerprint", m->fingerprint, "moxc_version", m->moxc_version, "nvcc_version",
        m->nvcc_version, "cc_version", m->cc_version, "nvcc_flags",
        string_array(m->nvcc_flags, m->nvcc_flag_count), "cc_flags",
        string_array(m->cc_flags, m->cc_flag_count));
    json_t *cpu = root ? mox__manifest_cpu_to_value(m) : NULL;
    if (!cpu || json_object_set_new(root, "cpu", cpu) != 0) {
        json_decref(root);
        return NULL;
    }
    char *text = mox__json_dump(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text)
        return NULL;
    /* A trailing newline, as text files have. */
    size_t n = strlen(text);
    char *with_newline = mox__realloc(text, n + 2);
    if (!with_newline) {
        mox__free(text);
        return NULL;
    }
    with_newline[n] = '\n';
    with_newline[n + 1] = '\0';
    return with_newline;
}
