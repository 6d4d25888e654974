/* test_copy_ptx.c - the CUDA backend's gated copy kernel is committed as
 * PTX (src/cuda/cuda_copy_ptx.c, generated from cuda_copy_kernel.cu): the
 * PTX must come from the current source (its recorded SHA-256), and ptxas
 * must accept it for sm_90 where ptxas is installed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "artifact/sha256.h"

extern const char mox__cuda_copy_ptx[];
extern const char mox__cuda_copy_ptx_source_sha256[];

static void generated_from_the_current_source(void **state)
{
    (void)state;
    FILE *f = fopen(COPY_KERNEL_SOURCE, "rb");
    assert_non_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    char hex[MOX_SHA256_HEX_LEN + 1];
    assert_true(mox_sha256_hex(text, n, hex));
    if (strcmp(hex, mox__cuda_copy_ptx_source_sha256) != 0)
        fail_msg("src/cuda/cuda_copy_ptx.c is older than cuda_copy_kernel.cu: regenerate it with "
                 "cmake --build <build> --target mox_cuda_copy_ptx");
    assert_non_null(strstr(mox__cuda_copy_ptx, ".entry mox__copy_gated("));
}

static void ptxas_accepts_it(void **state)
{
    (void)state;
    if (!PTXAS[0])
        skip(); /* no CUDA toolkit here */
    char path[] = "/tmp/mox_copy_ptx_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(mox__cuda_copy_ptx, f);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -o /dev/null '%s'", PTXAS, path);
    int rc = system(cmd);
    remove(path);
    assert_int_equal(rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_from_the_current_source),
        cmocka_unit_test(ptxas_accepts_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
