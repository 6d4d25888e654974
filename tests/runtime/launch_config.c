/* launch_config.c - launch geometry: the rounding table of for_elements and
 * every validation rule, in its fixed order (metal-oxide's table, ported). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <mox/launch.h>

static const mox_dim3 big = {1024, 1024, 64};

static void set_axis(mox_dim3 *d, int axis, uint32_t v)
{
    if (axis == 0)
        d->x = v;
    else if (axis == 1)
        d->y = v;
    else
        d->z = v;
}

static void expect(mox_launch_config c, mox_dim3 dev, uint32_t kmax, mox_status want, const char *text)
{
    uint64_t total = 12345;
    mox_status st = mox_launch_config_validate(&c, dev, kmax, &total);
    assert_int_equal(st, want);
    if (text && !strstr(mox_error_last_message(), text))
        fail_msg("'%s' lacks '%s'", mox_error_last_message(), text);
}

static uint64_t total_of(mox_launch_config c)
{
    uint64_t t = 0;
    assert_int_equal(mox_launch_config_validate(&c, big, 1024, &t), MOX_OK);
    return t;
}

static void for_elements_rounds_up(void **state)
{
    (void)state;
    const uint32_t n[] = {0, 1, 255, 256, 257, 1000003};
    const uint32_t blocks[] = {0, 1, 1, 1, 2, 3907};
    for (size_t i = 0; i < 6; i++) {
        mox_launch_config c;
        assert_int_equal(mox_launch_config_for_elements(256, n[i], &c), MOX_OK);
        assert_int_equal(c.grid.x, blocks[i]);
        assert_int_equal(c.grid.y, 1);
        assert_int_equal(c.grid.z, 1);
        assert_int_equal(c.block.x, 256);
        assert_int_equal(mox_launch_config_is_empty(&c), n[i] == 0);
    }
    mox_launch_config c;
    assert_int_equal(mox_launch_config_for_elements(32, 257, &c), MOX_OK);
    assert_int_equal(c.grid.x, 9);
    assert_int_equal(total_of(c), 288);
    /* A kernel limit of 31 rejects a 32-wide block. */
    expect(c, big, 31, MOX_ERR_INVALID_LAUNCH, "threads per block exceed kernel limit");
    assert_int_equal(mox_launch_config_for_elements(256, 1000003, &c), MOX_OK);
    assert_int_equal(total_of(c), 1000192);
    assert_int_equal(mox_launch_config_for_elements(256, UINT32_MAX, &c), MOX_ERR_INVALID_LAUNCH);
    assert_non_null(strstr(mox_error_last_message(), "global thread dimensions exceed u32"));
    assert_int_equal(mox_launch_config_for_elements(1, UINT32_MAX, &c), MOX_OK);
    assert_int_equal(c.grid.x, UINT32_MAX);
    assert_int_equal(mox_launch_config_for_elements(0, 10, &c), MOX_ERR_INVALID_LAUNCH);
    assert_non_null(strstr(mox_error_last_message(), "block dimensions must be positive"));
    assert_int_equal(mox_launch_config_for_elements(1, 1, NULL), MOX_ERR_INVALID_ARGUMENT);
}

static void grid_counts_blocks(void **state)
{
    (void)state;
    assert_int_equal(total_of(mox_launch_config_make(mox_dim3_make(4, 1, 1), mox_dim3_make(256, 1, 1))), 1024);
    assert_int_equal(total_of(mox_launch_config_make(mox_dim3_make(2, 3, 1), mox_dim3_make(4, 5, 1))), 120);
    assert_int_equal(total_of(mox_launch_config_make(mox_dim3_make(2, 3, 4), mox_dim3_make(3, 2, 2))), 288);
}

static void validation_order(void **state)
{
    (void)state;
    mox_launch_config c = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(16, 8, 8));
    expect(c, big, 1024, MOX_OK, NULL);
    expect(c, big, 512, MOX_ERR_INVALID_LAUNCH, "threads per block exceed kernel limit");
    /* 1. the kernel limit comes first, even before a zero block */
    mox_launch_config zero = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(0, 1, 1));
    expect(zero, big, 0, MOX_ERR_INVALID_LAUNCH, "kernel block limit must be positive");
    expect(c, big, 0, MOX_ERR_INVALID_LAUNCH, "kernel block limit must be positive");
    /* 2. zero block axes, also with an empty grid */
    for (int axis = 0; axis < 3; axis++) {
        mox_launch_config z = mox_launch_config_make(mox_dim3_make(0, 0, 0), mox_dim3_make(1, 1, 1));
        set_axis(&z.block, axis, 0);
        expect(z, big, 1024, MOX_ERR_INVALID_LAUNCH, "block dimensions must be positive");
    }
    /* 3. per-axis device limits (8,4,2) reject 9, 5 and 3 */
    mox_dim3 small = {8, 4, 2};
    expect(mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(8, 4, 2)), small, 1024, MOX_OK, NULL);
    expect(mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(9, 1, 1)), small, 1024,
           MOX_ERR_INVALID_LAUNCH, "block dimensions exceed device limits");
    expect(mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(1, 5, 1)), small, 1024,
           MOX_ERR_INVALID_LAUNCH, "block dimensions exceed device limits");
    expect(mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(1, 1, 3)), small, 1024,
           MOX_ERR_INVALID_LAUNCH, "block dimensions exceed device limits");
    /* device limits come before the kernel limit */
    expect(mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(9, 4, 2)), small, 8,
           MOX_ERR_INVALID_LAUNCH, "exceed device limits");
}

static void empty_grids_and_overflow(void **state)
{
    (void)state;
    for (int axis = 0; axis < 3; axis++) {
        mox_launch_config e = mox_launch_config_make(mox_dim3_make(5, 5, 5), mox_dim3_make(4, 4, 4));
        set_axis(&e.grid, axis, 0);
        uint64_t t = 99;
        assert_int_equal(mox_launch_config_validate(&e, big, 1024, &t), MOX_OK);
        assert_int_equal(t, 0);
        assert_true(mox_launch_config_is_empty(&e));
    }
    for (int axis = 0; axis < 3; axis++) {
        mox_launch_config o = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(2, 2, 2));
        set_axis(&o.grid, axis, 0x80000000u);
        expect(o, big, 1024, MOX_ERR_INVALID_LAUNCH, "global thread dimensions exceed u32");
    }
    /* Each axis fits u32; the volume does not fit u64. */
    mox_launch_config v = mox_launch_config_make(mox_dim3_make(0x7fffffffu, 0x7fffffffu, 0x7fffffffu),
                                                 mox_dim3_make(1, 1, 1));
    expect(v, big, 1024, MOX_ERR_INVALID_LAUNCH, "dimension volume overflows u64");
    assert_int_equal(mox_launch_config_validate(NULL, big, 1, NULL), MOX_ERR_INVALID_ARGUMENT);
    /* total_threads may be NULL */
    mox_launch_config ok = mox_launch_config_make(mox_dim3_make(1, 1, 1), mox_dim3_make(1, 1, 1));
    assert_int_equal(mox_launch_config_validate(&ok, big, 1, NULL), MOX_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(for_elements_rounds_up),
        cmocka_unit_test(grid_counts_blocks),
        cmocka_unit_test(validation_order),
        cmocka_unit_test(empty_grids_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
