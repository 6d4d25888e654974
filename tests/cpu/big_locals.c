/* big_locals.c - a kernel whose threads keep 128 KiB of locals across a
 * barrier runs on fibers with the default fiber stack (256 KiB; 1 MiB
 * under sanitizers) and gives the right values (docs/kernel-language.md,
 * "The CPU executor, briefly"). It crashed on the earlier 64 KiB stacks. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "cpubig.h"

static void big_locals_run_on_the_default_stack(void **state)
{
    (void)state;
    mox_device_options opts = {0};
    opts.backend = MOX_BACKEND_CPU;
    mox_device *dev = NULL;
    assert_int_equal(mox_device_open_with(&opts, &dev), MOX_OK);
    enum { BLOCKS = 4, N = BLOCKS * 32 };
    mox_buffer *out = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_f32, N, &out), MOX_OK);
    mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(BLOCKS, 1, 1), mox_dim3_make(32, 1, 1));
    mox_op *op = cpubig_big_locals(dev, cfg, out);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_op_drop(op);
    float got[N];
    assert_int_equal(mox_buffer_read(out, 0, N, got), MOX_OK);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t t = i % 32u;
        /* local[k] = k + t: local[32767 - t] + local[t] = 32767 + 2t */
        assert_true(got[i] == (float)(32767u + 2u * t));
    }
    mox_buffer_release(out);
    mox_device_release(dev);
}

/* `--exit-holding`: runs the kernel once and exits with the device and
 * module still held (cpu.kernel_symbols_under_valgrind: no code file is
 * left behind even then). */
static int exit_holding(void)
{
    mox_device_options opts = {0};
    opts.backend = MOX_BACKEND_CPU;
    mox_device *dev = NULL;
    mox_buffer *out = NULL;
    if (mox_device_open_with(&opts, &dev) != MOX_OK ||
        mox_buffer_create(dev, &mox_type_f32, 32, &out) != MOX_OK)
        return 1;
    mox_launch_config cfg = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(32, 1, 1));
    return mox_op_wait(cpubig_big_locals(dev, cfg, out)) == MOX_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exit-holding") == 0)
        return exit_holding();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(big_locals_run_on_the_default_stack),
    };
    return cmocka_run_group_tests_name("cpu_big_locals", tests, NULL, NULL);
}
