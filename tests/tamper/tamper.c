/* tamper.c - damaged artifacts are refused with their code and message,
 * never loaded and never waited on: flipped bytes, truncation, deletion,
 * swapped files, a manifest rehashed to cover the damage, hand-edited
 * bindings, symbolic links,
 * FIFOs and other special files, huge and deeply nested manifests. Each
 * case prepares the conformance module conf from a damaged copy of its
 * real artifact (MOX_ARTIFACT_CONF) on a new device. tamper_flips.c flips
 * every byte of the manifest. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "artifact/manifest.h"
#include "artifact/sha256.h"
#include "conf.h"
#include "tamper_support.h"

#define SO "kernels_cpu.so"
#define MANIFEST "manifest.json"

void tamper_manifest_flips(void **state); /* tamper_flips.c */
void tamper_manifest_cuts(void **state);

static void flip(const char *path, size_t at, unsigned char mask)
{
    size_t size;
    unsigned char *data = tamper_read(path, &size);
    data[at % size] ^= mask;
    tamper_write(path, data, size);
    free(data);
}

static void truncate_to(const char *path, off_t size) { assert_int_equal(truncate(path, size), 0); }

static void flipped_code(void **state)
{
    (void)state;
    tamper_expect(tamper_copy("intact"), MOX_OK, "");
    size_t size;
    free(tamper_read(tamper_path(conf_module.artifact_dir, SO), &size));
    const size_t at[] = {0, 1, size / 3, size / 2, size - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        const char *dir = tamper_copy("flip");
        flip(tamper_path(dir, SO), at[i], 0x01);
        tamper_expect(dir, MOX_ERR_ARTIFACT, SO " does not match the manifest hash");
    }
}

static void truncated_files(void **state)
{
    (void)state;
    const off_t so_sizes[] = {0, 1, 4096};
    for (size_t i = 0; i < 3; i++) {
        const char *dir = tamper_copy("cut-so");
        truncate_to(tamper_path(dir, SO), so_sizes[i]);
        tamper_expect(dir, MOX_ERR_ARTIFACT, "does not match the manifest hash");
    }
    const off_t manifest_sizes[] = {0, 1, 100, 5000};
    for (size_t i = 0; i < 4; i++) {
        const char *dir = tamper_copy("cut-manifest");
        truncate_to(tamper_path(dir, MANIFEST), manifest_sizes[i]);
        tamper_expect(dir, MOX_ERR_ARTIFACT, "manifest is not valid JSON");
    }
}

static void deleted_files(void **state)
{
    (void)state;
    const char *dir = tamper_copy("no-manifest");
    assert_int_equal(unlink(tamper_path(dir, MANIFEST)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "no artifact at");
    dir = tamper_copy("no-so");
    assert_int_equal(unlink(tamper_path(dir, SO)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "cannot open");
    tamper_expect("/nonexistent/mox-artifact", MOX_ERR_ARTIFACT, "no artifact at '/nonexistent");
}

static void copy_file(const char *from, const char *to)
{
    size_t size;
    void *data = tamper_read(from, &size);
    tamper_write(to, data, size);
    free(data);
}

static void swapped_files(void **state)
{
    (void)state;
    const char *other = tamper_other_artifact();
    const char *dir = tamper_copy("other-so");
    copy_file(tamper_path(other, SO), tamper_path(dir, SO));
    tamper_expect(dir, MOX_ERR_ARTIFACT, SO " does not match the manifest hash");
    dir = tamper_copy("other-manifest");
    copy_file(tamper_path(other, MANIFEST), tamper_path(dir, MANIFEST));
    tamper_expect(dir, MOX_ERR_ARTIFACT, "holds module 'conf2'");
    dir = tamper_copy("abi-as-manifest");
    copy_file(tamper_path(dir, "abi.json"), tamper_path(dir, MANIFEST));
    tamper_expect(dir, MOX_ERR_ARTIFACT, "not a mox artifact manifest");
}

/* A tamperer who also rewrites the manifest's hashes gets past the hash
 * check; what the code or the ABI then says still refuses it. */
static void rehashed_manifests(void **state)
{
    (void)state;
    const char *dir = tamper_copy("rehashed-so");
    copy_file(tamper_path(tamper_other_artifact(), SO), tamper_path(dir, SO));
    tamper_rehash(dir);
    tamper_expect(dir, MOX_ERR_ABI_MISMATCH, "the CPU code was built for another ABI");

    /* Another ABI, consistent everywhere in the artifact: the bindings'
     * hash no longer matches. */
    dir = tamper_copy("rehashed-abi");
    mox_manifest *m = NULL;
    mox_artifact_error err = {0};
    assert_true(mox_manifest_load(dir, &m, &err));
    m->abi->kernels[0].has_required_block = true;
    m->abi->kernels[0].required_block[0] = 32;
    m->abi->kernels[0].required_block[1] = m->abi->kernels[0].required_block[2] = 1;
    char *abi = mox_abi_to_json(m->abi);
    assert_true(mox_sha256_hex(abi, strlen(abi), m->abi_sha256));
    tamper_write(tamper_path(dir, "abi.json"), abi, strlen(abi));
    memcpy(m->files[MOX_FILE_ABI_JSON].sha256, m->abi_sha256, sizeof m->abi_sha256);
    char *json = mox_manifest_to_json(m);
    tamper_write(tamper_path(dir, MANIFEST), json, strlen(json));
    free(json);
    free(abi);
    mox_manifest_free(m);
    tamper_expect(dir, MOX_ERR_ABI_MISMATCH, "generated bindings do not match the artifact ABI");
}

/* Bindings whose embedded ABI is consistent with its hash but is not the
 * canonical text moxc writes (reformatted by hand): refused at launch, and
 * not kept (the same text could be a parse that lost bytes). */
static void hand_edited_bindings(void **state)
{
    (void)state;
    const char *from = "{\"version\":1,";
    const char *at = strstr(conf_module.abi_json, from);
    assert_non_null(at);
    size_t n = strlen(conf_module.abi_json);
    char *spaced = malloc(n + 2);
    snprintf(spaced, n + 2, "{ %s", conf_module.abi_json + 1);
    char hex[MOX_SHA256_HEX_LEN + 1];
    assert_true(mox_sha256_hex(spaced, strlen(spaced), hex));
    static mox_module_desc edited;
    edited = conf_module;
    edited.abi_json = spaced;
    edited.abi_sha256 = hex;
    mox_device *dev = NULL;
    assert_int_equal(mox_device_open(&dev), MOX_OK);
    for (int attempt = 0; attempt < 2; attempt++) {
        mox_status st = mox_module_prepare(dev, &edited);
        assert_int_equal(st, MOX_ERR_ABI_MISMATCH);
        assert_non_null(strstr(mox_error_last_message(),
                               "module 'conf': the embedded ABI does not read back as the same "
                               "text"));
    }
    mox_device_release(dev);
    free(spaced);
}

static void symbolic_links(void **state)
{
    (void)state;
    char good[512];
    snprintf(good, sizeof good, "%s", tamper_copy("link-target"));
    char target[1024];
    snprintf(target, sizeof target, "%s", tamper_path(good, MANIFEST));
    const char *dir = tamper_copy("linked-manifest");
    unlink(tamper_path(dir, MANIFEST));
    assert_int_equal(symlink(target, tamper_path(dir, MANIFEST)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "is not a regular file (it is a symbolic link)");
    dir = tamper_copy("linked-so");
    unlink(tamper_path(dir, SO));
    assert_int_equal(symlink("/dev/zero", tamper_path(dir, SO)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, SO " is not a regular file (it is a symbolic link)");
    dir = tamper_copy("dangling");
    unlink(tamper_path(dir, MANIFEST));
    assert_int_equal(symlink("/nonexistent/manifest.json", tamper_path(dir, MANIFEST)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "no artifact at");
    dir = tamper_copy("loop");
    unlink(tamper_path(dir, SO));
    assert_int_equal(symlink(tamper_path(dir, SO), tamper_path(dir, SO)), 0);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "(it is a symbolic link)");
    /* The artifact directory itself may be a link (relocated caches). */
    char link[1024];
    snprintf(link, sizeof link, "%s-dirlink", good);
    assert_int_equal(symlink(good, link), 0);
    tamper_expect(link, MOX_OK, "");
}

static void special_files(void **state)
{
    (void)state;
    const char *files[] = {MANIFEST, SO};
    for (int i = 0; i < 2; i++) {
        const char *dir = tamper_copy("fifo");
        unlink(tamper_path(dir, files[i]));
        assert_int_equal(mkfifo(tamper_path(dir, files[i]), 0600), 0);
        tamper_expect(dir, MOX_ERR_ARTIFACT, "is not a regular file (it is a FIFO)");
        dir = tamper_copy("directory");
        unlink(tamper_path(dir, files[i]));
        assert_int_equal(mkdir(tamper_path(dir, files[i]), 0700), 0);
        tamper_expect(dir, MOX_ERR_ARTIFACT, "is not a regular file (it is a directory)");
    }
    const char *dir = tamper_copy("socket");
    unlink(tamper_path(dir, SO));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", tamper_path(dir, SO));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (strlen(tamper_path(dir, SO)) < sizeof addr.sun_path) {
        assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
        tamper_expect(dir, MOX_ERR_ARTIFACT, "is not a regular file (it is a socket)");
    }
    close(fd);
}

/* Sizes are checked before a byte is read (sparse files: nothing to read). */
static void huge_files(void **state)
{
    (void)state;
    const char *dir = tamper_copy("huge-manifest");
    truncate_to(tamper_path(dir, MANIFEST), (off_t)1 << 31);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "is 2147483648 bytes, more than its limit of 16777216 bytes");
    dir = tamper_copy("big-manifest");
    truncate_to(tamper_path(dir, MANIFEST), ((off_t)16 << 20) + 1);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "is 16777217 bytes, more than its limit");
    dir = tamper_copy("huge-so");
    truncate_to(tamper_path(dir, SO), (off_t)300 << 20);
    tamper_expect(dir, MOX_ERR_ARTIFACT, SO " is 314572800 bytes, more than its limit of 268435456");
}

/* Wraps the first parameter's element in `levels` arrays of one element. */
static void deepen(const char *dir, int levels)
{
    json_error_t jerr;
    json_t *root = json_load_file(tamper_path(dir, MANIFEST), 0, &jerr);
    assert_non_null(root);
    json_t *param = json_array_get(
        json_object_get(json_array_get(json_object_get(json_object_get(root, "abi"), "kernels"), 0),
                        "parameters"),
        0);
    json_t *element = json_incref(json_object_get(param, "element"));
    for (int i = 0; i < levels; i++)
        element = json_pack("{s:i,s:i,s:s,s:o,s:i,s:i}", "size", 4, "alignment", 4, "kind", "array",
                            "element", element, "length", 1, "stride", 4);
    json_object_set_new(param, "element", element);
    assert_int_equal(json_dump_file(root, tamper_path(dir, MANIFEST), JSON_INDENT(2)), 0);
    json_decref(root);
}

static void deep_manifests(void **state)
{
    (void)state;
    const char *dir = tamper_copy("deep-abi");
    deepen(dir, 33);
    tamper_expect(dir, MOX_ERR_ARTIFACT,
                  "kernel scale parameter in element nests arrays and records more than 32 levels "
                  "deep (array at level 33); the ABI allows at most 32");
    /* 32 levels are within the limit: what refuses it then is the ABI hash. */
    dir = tamper_copy("deep-32");
    deepen(dir, 32);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "abi_sha256");
    dir = tamper_copy("deep-json");
    size_t n = 100000;
    char *text = malloc(n);
    memset(text, '[', n);
    tamper_write(tamper_path(dir, MANIFEST), text, n);
    free(text);
    tamper_expect(dir, MOX_ERR_ARTIFACT, "manifest is not valid JSON: maximum parsing depth reached");
}

static int setup(void **state)
{
    (void)state;
    tamper_init();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tamper_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flipped_code),       cmocka_unit_test(truncated_files),
        cmocka_unit_test(deleted_files),      cmocka_unit_test(swapped_files),
        cmocka_unit_test(rehashed_manifests), cmocka_unit_test(hand_edited_bindings),
        cmocka_unit_test(symbolic_links),
        cmocka_unit_test(special_files),      cmocka_unit_test(huge_files),
        cmocka_unit_test(deep_manifests),     cmocka_unit_test(tamper_manifest_flips),
        cmocka_unit_test(tamper_manifest_cuts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
