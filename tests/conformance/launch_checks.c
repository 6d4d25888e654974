/* launch_checks.c - launch creation checks, in their documented order
 * (device mismatch, argument count limit, ABI count and types, required
 * block, geometry), each giving a resolved, failed op (never NULL) whose
 * error names the kernel and the argument; empty grids; value copies. */
#include <string.h>

#include "support.h"

static mox_device *dev, *other;

static int setup(void **state)
{
    (void)state;
    dev = conf_open();
    other = conf_open();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mox_device_release(dev);
    mox_device_release(other);
    return 0;
}

static uint32_t kidx(const char *name)
{
    for (uint32_t k = 0; k < conf_module.kernel_count; k++)
        if (strcmp(conf_module.kernel_names[k], name) == 0)
            return k;
    fail_msg("no kernel %s", name);
    return 0;
}

/* Expects `op` to be already resolved with `code`, naming `kernel` and
 * containing `text`; drops it. */
static void expect_failed(mox_op *op, mox_status code, const char *kernel, const char *text)
{
    assert_non_null(op);
    const mox_result *r = mox_op_result(op); /* resolved at construction */
    assert_non_null(r);
    assert_int_equal(mox_result_status(r), code);
    const mox_error *e = mox_result_error(r);
    assert_non_null(e);
    assert_int_equal(mox_error_code(e), code);
    if (kernel) {
        assert_non_null(mox_error_kernel(e));
        assert_string_equal(mox_error_kernel(e), kernel);
        assert_non_null(strstr(mox_error_message(e), kernel));
    }
    if (text && !strstr(mox_error_message(e), text))
        fail_msg("message '%s' lacks '%s'", mox_error_message(e), text);
    assert_int_equal(mox_op_poll(op, (mox_waker){NULL, NULL}), MOX_READY);
    assert_int_equal(mox_op_wait(op), code);
    mox_op_drop(op);
}

static void device_mismatch_comes_first(void **state)
{
    (void)state;
    mox_buffer *mine = conf_zeros(dev, 4), *theirs = conf_zeros(other, 4);
    uint64_t subs = mox_device_submission_count(dev);
    expect_failed(conf_scale(dev, conf_cfg(4), mine, theirs, 1.0f, 4), MOX_ERR_DEVICE_MISMATCH,
                  "scale", "argument 'out'");
    /* Before the argument count and the geometry. */
    mox_arg args[40];
    for (int i = 0; i < 40; i++)
        args[i] = MOX_ARG_WRITE(theirs);
    mox_launch_config bad = {{1, 1, 1}, {0, 0, 0}, 0};
    expect_failed(mox_launch_generated(dev, &conf_module, kidx("fill"), bad, args, 40),
                  MOX_ERR_DEVICE_MISMATCH, "fill", "another device context");
    assert_int_equal(mox_device_submission_count(dev), subs);
    mox_buffer_release(mine);
    mox_buffer_release(theirs);
}

static void argument_count_limit(void **state)
{
    (void)state;
    mox_buffer *b = conf_zeros(dev, 4);
    mox_arg args[32];
    for (int i = 0; i < 32; i++)
        args[i] = MOX_ARG_WRITE(b);
    mox_launch_config bad = {{1, 1, 1}, {0, 0, 0}, 0};
    expect_failed(mox_launch_generated(dev, &conf_module, kidx("fill"), bad, args, 32),
                  MOX_ERR_TOO_MANY_ARGUMENTS, "fill", "32 arguments");
    mox_buffer_release(b);
}

static void abi_count_and_types(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 4);
    mox_buffer *u = NULL;
    assert_int_equal(mox_buffer_create(dev, &mox_type_u32, 4, &u), MOX_OK);
    float value = 1.0f;
    uint32_t n = 4;
    mox_launch_config c = conf_cfg(4);
    uint32_t fill = kidx("fill");

    mox_arg two[2] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, two, 2), MOX_ERR_ABI_MISMATCH,
                  "fill", "requires 3 arguments, got 2");

    mox_arg kind[3] = {MOX_ARG_VALUE(&value, &mox_type_f32), MOX_ARG_VALUE(&value, &mox_type_f32),
                       MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, kind, 3), MOX_ERR_ABI_MISMATCH,
                  "fill", "argument 'out' must be a buffer, got a value");

    mox_arg access[3] = {MOX_ARG_READ(f), MOX_ARG_VALUE(&value, &mox_type_f32),
                         MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, access, 3),
                  MOX_ERR_ABI_MISMATCH, "fill", "must be a write buffer, got read access");

    mox_arg elem[3] = {MOX_ARG_WRITE(u), MOX_ARG_VALUE(&value, &mox_type_f32),
                       MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, elem, 3), MOX_ERR_ABI_MISMATCH,
                  "fill", "must be a buffer of f32, got a buffer of u32");

    mox_arg val[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32),
                      MOX_ARG_VALUE(&value, &mox_type_f32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, val, 3), MOX_ERR_ABI_MISMATCH,
                  "fill", "argument 'n' must be a value of u32, got f32");

    mox_arg null_buf[3] = {MOX_ARG_WRITE(NULL), MOX_ARG_VALUE(&value, &mox_type_f32),
                           MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, null_buf, 3),
                  MOX_ERR_INVALID_ARGUMENT, "fill", "buffer is NULL");

    mox_arg null_val[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(NULL, &mox_type_f32),
                           MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, null_val, 3),
                  MOX_ERR_INVALID_ARGUMENT, "fill", "value or its type is NULL");

    /* Out-of-range enum values are misuse, named as such. */
    mox_arg bad_access[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32),
                             MOX_ARG_VALUE(&n, &mox_type_u32)};
    bad_access[0].access = (mox_access)9;
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, bad_access, 3),
                  MOX_ERR_INVALID_ARGUMENT, "fill", "argument 'out': unknown access mode 9");
    mox_arg bad_kind[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32),
                           MOX_ARG_VALUE(&n, &mox_type_u32)};
    bad_kind[1].kind = (mox_arg_kind)7;
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, bad_kind, 3),
                  MOX_ERR_INVALID_ARGUMENT, "fill", "argument 'value': unknown argument kind 7");

    /* Atomic access where the kernel wants an atomic u32 buffer, but f32. */
    mox_arg atom[2] = {MOX_ARG_ATOMIC(f), MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, kidx("count"), c, atom, 2),
                  MOX_ERR_ABI_MISMATCH, "count", "must be a buffer of u32, got a buffer of f32");

    /* ABI errors are reported for empty grids too (validation first). */
    mox_launch_config empty = conf_cfg(0);
    expect_failed(mox_launch_generated(dev, &conf_module, fill, empty, elem, 3),
                  MOX_ERR_ABI_MISMATCH, "fill", NULL);
    mox_buffer_release(f);
    mox_buffer_release(u);
}

/* A value whose type descriptor contradicts its signature (docs/abi.md:
 * the signature gives the size) is refused as no type, saying what is
 * wrong, though its signature is the parameter's; one whose signature does
 * not parse likewise; an alias of the right type passes. */
static void value_types_must_be_consistent(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 4);
    double wide = 1.0;
    float value = 1.0f;
    uint32_t n = 4;
    mox_launch_config c = conf_cfg(4);
    uint32_t fill = kidx("fill");
    static const mox_type f32_8 = {"f32", "f32", 8, 8}, f32_a1 = {"f32", "f32", 4, 1},
                          junk = {"Junk", "not a signature", 4, 4}, alias = {"float", "f32", 4, 4};
    mox_arg big[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&wide, &f32_8), MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, big, 3), MOX_ERR_INVALID_ARGUMENT, "fill",
                  "kernel 'fill' argument 'value': value type 'f32': its size is 8 bytes, but its signature f32 "
                  "has size 4 (docs/abi.md)");
    mox_arg loose[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &f32_a1), MOX_ARG_VALUE(&n, &mox_type_u32)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, loose, 3), MOX_ERR_INVALID_ARGUMENT, "fill",
                  "value type 'f32': its alignment is 1, but its signature f32 has alignment 4");
    mox_arg bad[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32), MOX_ARG_VALUE(&n, &junk)};
    expect_failed(mox_launch_generated(dev, &conf_module, fill, c, bad, 3), MOX_ERR_INVALID_ARGUMENT, "fill",
                  "argument 'n': value type 'Junk': 'not a signature' is not a type signature");
    mox_arg ok[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &alias), MOX_ARG_VALUE(&n, &mox_type_u32)};
    assert_int_equal(conf_run(mox_launch_generated(dev, &conf_module, fill, c, ok, 3)), MOX_OK);
    assert_true(conf_read1(f, 3) == 1.0f);
    mox_buffer_release(f);
}

static void required_block_then_geometry(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 256);
    mox_launch_config c32;
    assert_int_equal(mox_launch_config_for_elements(32, 256, &c32), MOX_OK);
    expect_failed(conf_fixed64(dev, c32, f, 256), MOX_ERR_INVALID_LAUNCH, "fixed64",
                  "required block (64,1,1)");
    /* Even with an empty grid, and before the geometry check. */
    mox_launch_config bad = {{0, 1, 1}, {2048, 1, 1}, 0};
    expect_failed(conf_fixed64(dev, bad, f, 256), MOX_ERR_INVALID_LAUNCH, "fixed64",
                  "does not match the kernel's required block");
    mox_launch_config ok;
    assert_int_equal(mox_launch_config_for_elements(64, 256, &ok), MOX_OK);
    assert_int_equal(conf_run(conf_fixed64(dev, ok, f, 256)), MOX_OK);
    assert_true(conf_read1(f, 255) == 64.0f);
    mox_buffer_release(f);
}

static void geometry_checks(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 4);
    struct {
        mox_launch_config c;
        const char *text;
    } cases[] = {
        {{{1, 1, 1}, {0, 1, 1}, 0}, "block dimensions must be positive"},
        {{{0, 1, 1}, {64, 0, 1}, 0}, "block dimensions must be positive"},
        {{{1, 1, 1}, {2048, 1, 1}, 0}, "block dimensions exceed device limits"},
        {{{1, 1, 1}, {1, 1, 65}, 0}, "block dimensions exceed device limits"},
        {{{1, 1, 1}, {32, 32, 2}, 0}, "threads per block exceed kernel limit"},
        {{{0x2000000u, 1, 1}, {256, 1, 1}, 0}, "global thread dimensions exceed u32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_failed(conf_fill(dev, cases[i].c, f, 1.0f, 4), MOX_ERR_INVALID_LAUNCH, "fill",
                      cases[i].text);
    mox_buffer_release(f);
}

static void bad_handles_give_failed_ops(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 4);
    expect_failed(conf_fill(NULL, conf_cfg(4), f, 1.0f, 4), MOX_ERR_INVALID_ARGUMENT, NULL,
                  "device is NULL");
    expect_failed(mox_launch_generated(dev, NULL, 0, conf_cfg(4), NULL, 0),
                  MOX_ERR_INVALID_ARGUMENT, NULL, "module is NULL");
    expect_failed(mox_launch_generated(dev, &conf_module, 0, conf_cfg(4), NULL, 3),
                  MOX_ERR_INVALID_ARGUMENT, NULL, "args is NULL");
    expect_failed(mox_launch_generated(dev, &conf_module, 999, conf_cfg(4), NULL, 0),
                  MOX_ERR_KERNEL_NOT_FOUND, NULL, "no kernel 999");
    mox_buffer_release(f);
}

static void empty_grid_runs_nothing(void **state)
{
    (void)state;
    float init[4] = {9, 9, 9, 9};
    mox_buffer *f = conf_buffer(dev, init, 4);
    uint64_t subs = mox_device_submission_count(dev);
    mox_launch_config empty = {{4, 0, 1}, {64, 1, 1}, 0};
    mox_op *op = conf_fill(dev, empty, f, 1.0f, 4);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    const mox_result *r = mox_op_result(op);
    assert_int_equal(mox_result_buffer_count(r), 3);
    assert_ptr_equal(mox_result_buffer(r, 0), f);
    mox_op_drop(op);
    assert_int_equal(mox_device_submission_count(dev), subs);
    assert_true(conf_read1(f, 0) == 9.0f);
    mox_buffer_release(f);
}

static void values_are_copied_at_creation(void **state)
{
    (void)state;
    mox_buffer *f = conf_zeros(dev, 8);
    float value = 3.0f;
    uint32_t n = 8;
    mox_arg args[3] = {MOX_ARG_WRITE(f), MOX_ARG_VALUE(&value, &mox_type_f32),
                       MOX_ARG_VALUE(&n, &mox_type_u32)};
    mox_op *op = mox_launch_generated(dev, &conf_module, kidx("fill"), conf_cfg(8), args, 3);
    value = -100.0f;
    n = 0;
    assert_int_equal(conf_run(op), MOX_OK);
    assert_true(conf_read1(f, 7) == 3.0f);
    mox_buffer_release(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(device_mismatch_comes_first),
        cmocka_unit_test(argument_count_limit),
        cmocka_unit_test(abi_count_and_types),
        cmocka_unit_test(value_types_must_be_consistent),
        cmocka_unit_test(required_block_then_geometry),
        cmocka_unit_test(geometry_checks),
        cmocka_unit_test(bad_handles_give_failed_ops),
        cmocka_unit_test(empty_grid_runs_nothing),
        cmocka_unit_test(values_are_copied_at_creation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
