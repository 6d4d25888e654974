/* multi_device.c - several devices of one backend through the public API
 * (docs/multi-device.md): enumeration and identity (ordinals, UUIDs, open
 * by either), peer links, copies in both directions and on one device,
 * the copy's argument checks, laziness, ordering across devices in both
 * directions (read after write, write after read), and dropping. Run per
 * backend with two devices (CPU: MOX_CPU_DEVICES=2; CUDA over the simulated
 * driver: MOX_SIM_DEVICES=2; CUDA: two GPUs, else exit 77). Gating and
 * device loss across devices are in multi_device_gating.c. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multi_support.h"

static mox_device *d0, *d1;

static int setup(void **state)
{
    (void)state;
    md_open_pair(&d0, &d1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    md_release_pair(d0, d1);
    return 0;
}

static bool uuid_well_formed(const char *u)
{
    if (strlen(u) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? u[i] != '-' : !(isdigit((unsigned char)u[i]) || (u[i] >= 'a' && u[i] <= 'f')))
            return false;
    }
    return true;
}

static void enumeration_and_identity(void **state)
{
    (void)state;
    uint32_t n = 0;
    assert_int_equal(mox_device_count(MOX_BACKEND_AUTO, &n), MOX_OK);
    assert_true(n >= 2);
    uint32_t same = 0;
    assert_int_equal(mox_device_count(mox_device_backend(d0), &same), MOX_OK);
    assert_int_equal(same, n);
    assert_int_equal(mox_device_ordinal(d0), 0);
    assert_int_equal(mox_device_ordinal(d1), 1);
    char u0[37], u1[37], again[37];
    assert_int_equal(mox_device_uuid(d0, u0), MOX_OK);
    assert_int_equal(mox_device_uuid(d1, u1), MOX_OK);
    assert_true(uuid_well_formed(u0));
    assert_true(uuid_well_formed(u1));
    assert_string_not_equal(u0, u1);

    /* A second open of ordinal 0 is another context of the same device. */
    mox_device *d0b = md_open(0, 0);
    assert_int_equal(mox_device_uuid(d0b, again), MOX_OK);
    assert_string_equal(again, u0);
    mox_device_release(d0b);

    /* By UUID: as written, upper-case, and with nvidia-smi's prefix. */
    char upper[37], prefixed[48];
    for (int i = 0; i < 37; i++)
        upper[i] = (char)toupper((unsigned char)u1[i]);
    snprintf(prefixed, sizeof prefixed, "GPU-%s", u1);
    const char *forms[] = {u1, upper, prefixed};
    for (int f = 0; f < 3; f++) {
        mox_device_options o = {.uuid = forms[f]};
        mox_device *d = NULL;
        assert_int_equal(mox_device_open_with(&o, &d), MOX_OK);
        assert_int_equal(mox_device_ordinal(d), 1);
        assert_int_equal(mox_device_uuid(d, again), MOX_OK);
        assert_string_equal(again, u1);
        assert_int_equal(mox_device_backend(d), mox_device_backend(d1));
        mox_device_release(d);
    }
}

/* nvidia-smi's "GPU-" prefix in any case ("gpu-", "Gpu-"), before the
 * UUID in either case (docs/multi-device.md: "accepts that prefix and either
 * case"). */
static void uuid_prefix_any_case(void **state)
{
    (void)state;
    char u1[37], again[37], upper[37];
    assert_int_equal(mox_device_uuid(d1, u1), MOX_OK);
    for (int i = 0; i < 37; i++)
        upper[i] = (char)toupper((unsigned char)u1[i]);
    const char *prefixes[] = {"gpu-", "Gpu-", "gPU-"};
    for (int p = 0; p < 3; p++) {
        for (int c = 0; c < 2; c++) {
            char form[48];
            snprintf(form, sizeof form, "%s%s", prefixes[p], c ? upper : u1);
            mox_device_options o = {.uuid = form};
            mox_device *d = NULL;
            if (mox_device_open_with(&o, &d) != MOX_OK)
                fail_msg("uuid '%s' refused: %s", form, mox_error_last_message());
            assert_int_equal(mox_device_uuid(d, again), MOX_OK);
            assert_string_equal(again, u1);
            mox_device_release(d);
        }
    }
    /* The prefix is the only extra: "gpu" without its dash is no UUID. */
    char bad[48];
    snprintf(bad, sizeof bad, "gpu%s", u1);
    mox_device_options o = {.uuid = bad};
    mox_device *d = NULL;
    assert_int_equal(mox_device_open_with(&o, &d), MOX_ERR_INVALID_ARGUMENT);
    assert_null(d);
}

static void selection_errors(void **state)
{
    (void)state;
    mox_device *d = NULL;
    mox_device_options bad = {.uuid = "not-a-uuid"};
    assert_int_equal(mox_device_open_with(&bad, &d), MOX_ERR_INVALID_ARGUMENT);
    assert_null(d);
    assert_non_null(strstr(mox_error_last_message(), "'not-a-uuid' is not a device UUID"));
    mox_device_options unknown = {.backend = mox_device_backend(d0),
                                  .uuid = "ffffffff-ffff-4fff-8fff-ffffffffffff"};
    assert_int_equal(mox_device_open_with(&unknown, &d), MOX_ERR_DEVICE_UNAVAILABLE);
    assert_non_null(strstr(mox_error_last_message(), "has UUID ffffffff-ffff-4fff-8fff-ffffffffffff"));
    uint32_t n = 0;
    assert_int_equal(mox_device_count(mox_device_backend(d0), &n), MOX_OK);
    mox_device_options past = {.backend = mox_device_backend(d0), .use_ordinal = true, .ordinal = n};
    assert_int_equal(mox_device_open_with(&past, &d), MOX_ERR_DEVICE_UNAVAILABLE);
    char want[64];
    snprintf(want, sizeof want, " device %u (%u ", n, n);
    assert_non_null(strstr(mox_error_last_message(), want));
    /* An ordinal no backend can number (above 2^31). */
    mox_device_options huge = {.backend = mox_device_backend(d0), .use_ordinal = true,
                               .ordinal = 0x80000000u};
    assert_int_equal(mox_device_open_with(&huge, &d), MOX_ERR_DEVICE_UNAVAILABLE);
    assert_null(d);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_open: no device 2147483648"));
    assert_int_equal(mox_device_count(MOX_BACKEND_AUTO, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_count: count is NULL"));
    assert_int_equal(mox_device_count((mox_backend)9, &n), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_count: unknown backend 9"));
    assert_int_equal(mox_device_uuid(NULL, want), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_uuid: device is NULL"));
    assert_int_equal(mox_device_uuid(d0, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_uuid: out is NULL"));
    assert_int_equal(mox_device_ordinal(NULL), 0);
}

/* Bad settings are MOX_ERR_CONFIG with the value in the message (the test
 * sets them itself: no other thread reads the environment meanwhile). */
static void settings_errors(void **state)
{
    (void)state;
    const char *saved = getenv("MOX_CPU_DEVICES");
    char keep[32] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    const char *bad[] = {"0", "65", "two", "-1", "+2", " 2", "2 "};
    for (int i = 0; i < 7; i++) {
        setenv("MOX_CPU_DEVICES", bad[i], 1);
        uint32_t n = 7;
        assert_int_equal(mox_device_count(MOX_BACKEND_CPU, &n), MOX_ERR_CONFIG);
        assert_int_equal(n, 0);
        char want[96];
        snprintf(want, sizeof want, "MOX_CPU_DEVICES must be a number of CPU devices (1 to 64), not '%s'",
                 bad[i]);
        assert_non_null(strstr(mox_error_last_message(), want));
        mox_device_options cpu = {.backend = MOX_BACKEND_CPU};
        mox_device *d = NULL;
        assert_int_equal(mox_device_open_with(&cpu, &d), MOX_ERR_CONFIG);
    }
    if (saved)
        setenv("MOX_CPU_DEVICES", keep, 1);
    else
        unsetenv("MOX_CPU_DEVICES");
    const char *bad_ordinal[] = {"first", "+1", " 1", "-1"};
    for (int i = 0; i < 4; i++) {
        setenv("MOX_CUDA_DEVICE", bad_ordinal[i], 1);
        mox_device_options cuda = {.backend = MOX_BACKEND_CUDA};
        mox_device *d = NULL;
        assert_int_equal(mox_device_open_with(&cuda, &d), MOX_ERR_CONFIG);
        char want[96];
        snprintf(want, sizeof want, "MOX_CUDA_DEVICE must be a device ordinal (0, 1, ...), not '%s'",
                 bad_ordinal[i]);
        assert_non_null(strstr(mox_error_last_message(), want));
    }
    unsetenv("MOX_CUDA_DEVICE");
}

static void peer_links(void **state)
{
    (void)state;
    mox_peer_link l = MOX_PEER_NVLINK;
    assert_int_equal(mox_device_peer(d0, d0, &l), MOX_OK);
    assert_int_equal(l, MOX_PEER_SAME);
    mox_device *d0b = md_open(0, 0);
    assert_int_equal(mox_device_peer(d0, d0b, &l), MOX_OK);
    assert_int_equal(l, MOX_PEER_SAME);
    mox_device_release(d0b);
    mox_peer_link there, back;
    assert_int_equal(mox_device_peer(d0, d1, &there), MOX_OK);
    assert_int_equal(mox_device_peer(d1, d0, &back), MOX_OK);
    if (mox_device_backend(d0) == MOX_BACKEND_CPU)
        assert_int_equal(there, MOX_PEER_HOST);
    else
        assert_true(there == MOX_PEER_NONE || there == MOX_PEER_PCIE || there == MOX_PEER_NVLINK);
    assert_int_equal(there, back);
    printf("devices 0 and 1: %s\n", mox_peer_link_name(there));
    assert_string_equal(mox_peer_link_name(MOX_PEER_NVLINK), "MOX_PEER_NVLINK");
    assert_string_equal(mox_peer_link_name((mox_peer_link)77), "MOX_PEER_UNKNOWN");
    assert_int_equal(mox_device_peer(NULL, d1, &l), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_peer: a is NULL"));
    assert_int_equal(mox_device_peer(d0, NULL, &l), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_peer: b is NULL"));
    assert_int_equal(mox_device_peer(d0, d1, NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_peer: out is NULL"));
}

static void copies_both_directions(void **state)
{
    (void)state;
    const uint32_t n = 3000;
    mox_buffer *a0 = conf_ramp(d0, n, 1.0f, 0.5f), *b1 = conf_zeros(d1, n);
    mox_buffer *c0 = conf_zeros(d0, n), *e0 = conf_zeros(d0, n);
    uint64_t before = mox_device_submission_count(d1);
    mox_op *op = mox_buffer_copy(a0, 0, b1, 0, n);
    assert_int_equal(mox_device_submission_count(d1), before); /* A1: lazy */
    assert_int_equal(mox_op_wait(op), MOX_OK);
    const mox_result *r = mox_op_result(op);
    assert_int_equal(mox_result_buffer_count(r), 2);
    assert_ptr_equal(mox_result_buffer(r, 0), a0);
    assert_ptr_equal(mox_result_buffer(r, 1), b1);
    mox_op_drop(op);
    md_expect_ramp(b1, 0, n, 1.0f, 0.5f);
    /* Back, into a sub-range; and on one device. */
    assert_int_equal(conf_run(mox_buffer_copy(b1, 100, c0, 7, 500)), MOX_OK);
    float *v = conf_read(c0);
    for (uint32_t i = 0; i < n; i++) {
        float want = i >= 7 && i < 507 ? (float)(i - 7 + 100) * 0.5f + 1.0f : 0.0f;
        if (v[i] != want)
            fail_msg("c0[%u] = %g, want %g", i, (double)v[i], (double)want);
    }
    free(v);
    assert_int_equal(conf_run(mox_buffer_copy(a0, 0, e0, 0, n)), MOX_OK);
    md_expect_ramp(e0, 0, n, 1.0f, 0.5f);
    /* Two halves of one buffer that do not overlap. */
    assert_int_equal(conf_run(mox_buffer_copy(e0, 0, e0, n / 2, n / 2)), MOX_OK);
    md_expect_ramp(e0, n / 2, n / 2, 1.0f, 0.5f);
    /* count 0: resolved at once, nothing submitted. */
    before = mox_device_submission_count(d1);
    op = mox_buffer_copy(a0, 0, b1, 0, 0);
    assert_ptr_not_equal(mox_op_result(op), NULL);
    assert_int_equal(mox_op_wait(op), MOX_OK);
    mox_op_drop(op);
    assert_int_equal(mox_device_submission_count(d1), before);
    mox_buffer_release(a0);
    mox_buffer_release(b1);
    mox_buffer_release(c0);
    mox_buffer_release(e0);
}

static void expect_refused(mox_op *op, mox_status code, const char *text)
{
    assert_non_null(mox_op_result(op)); /* resolved at construction */
    assert_int_equal(mox_op_wait(op), code);
    const char *msg = mox_error_message(mox_result_error(mox_op_result(op)));
    if (!strstr(msg, text))
        fail_msg("message '%s' lacks '%s'", msg, text);
    mox_op_drop(op);
}

static void copy_argument_errors(void **state)
{
    (void)state;
    mox_buffer *a = conf_zeros(d0, 10), *b = conf_zeros(d1, 10);
    mox_buffer *u = NULL;
    assert_int_equal(mox_buffer_create(d1, &mox_type_u32, 10, &u), MOX_OK);
    expect_refused(mox_buffer_copy(NULL, 0, b, 0, 1), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_copy: src is NULL");
    expect_refused(mox_buffer_copy(a, 0, NULL, 0, 1), MOX_ERR_INVALID_ARGUMENT,
                   "mox_buffer_copy: dst is NULL");
    expect_refused(mox_buffer_copy(a, 0, u, 0, 1), MOX_ERR_INVALID_ARGUMENT,
                   "the element types differ (src f32, dst u32)");
    expect_refused(mox_buffer_copy(a, 5, b, 0, 6), MOX_ERR_OUT_OF_RANGE,
                   "source elements [5, 5+6) are outside the buffer of 10 elements");
    expect_refused(mox_buffer_copy(a, 0, b, 9, 2), MOX_ERR_OUT_OF_RANGE,
                   "destination elements [9, 9+2) are outside the buffer of 10 elements");
    expect_refused(mox_buffer_copy(a, (size_t)-1, b, 0, 2), MOX_ERR_OUT_OF_RANGE, "source elements");
    expect_refused(mox_buffer_copy(a, 0, a, 3, 4), MOX_ERR_INVALID_ARGUMENT,
                   "elements [0, 0+4) and [3, 3+4) of one buffer overlap");
    mox_buffer_release(a);
    mox_buffer_release(b);
    mox_buffer_release(u);
}

/* The writer on device 0 is still running when the copy and device 1's
 * reader are submitted: both wait for it (read after write, across). */
static void ordering_after_a_running_writer(void **state)
{
    (void)state;
    const uint32_t n = 4096;
    mox_buffer *in = conf_ramp(d0, n, 2.0f, 1.0f), *x0 = conf_zeros(d0, n);
    mox_buffer *y1 = conf_zeros(d1, n), *z1 = conf_zeros(d1, n);
    mox_op *writer = md_submit(conf_slow_copy(d0, conf_cfg(n), in, x0, n, MD_SLOW_SPINS));
    mox_op *copy = md_submit(mox_buffer_copy(x0, 0, y1, 0, n));
    mox_op *reader = md_submit(conf_scale(d1, conf_cfg(n), y1, z1, 3.0f, n));
    assert_int_equal(mox_op_wait(reader), MOX_OK);
    assert_int_equal(mox_op_wait(copy), MOX_OK);
    assert_int_equal(mox_op_wait(writer), MOX_OK);
    md_expect_ramp(y1, 0, n, 2.0f, 1.0f);
    md_expect_ramp(z1, 0, n, 6.0f, 3.0f);
    mox_op_drop(reader);
    mox_op_drop(copy);
    mox_op_drop(writer);
    mox_buffer_release(in);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(z1);
}

/* Write after read, across: the copy into y1 waits for device 1's slow
 * reader of y1; device 0's overwrite of x0 waits for the copy reading it. */
static void ordering_before_later_writers(void **state)
{
    (void)state;
    const uint32_t n = 4096;
    mox_buffer *x0 = conf_ramp(d0, n, 5.0f, 1.0f);
    mox_buffer *y1 = conf_ramp(d1, n, 100.0f, 0.0f), *w1 = conf_zeros(d1, n);
    mox_op *slow_reader = md_submit(conf_slow_copy(d1, conf_cfg(n), y1, w1, n, MD_SLOW_SPINS));
    mox_op *copy = md_submit(mox_buffer_copy(x0, 0, y1, 0, n));
    mox_op *overwrite = md_submit(conf_fill(d0, conf_cfg(n), x0, -1.0f, n));
    assert_int_equal(conf_run(overwrite), MOX_OK);
    assert_int_equal(conf_run(copy), MOX_OK);
    assert_int_equal(conf_run(slow_reader), MOX_OK);
    md_expect_ramp(w1, 0, n, 100.0f, 0.0f); /* read before the copy */
    md_expect_ramp(y1, 0, n, 5.0f, 1.0f);   /* x0 before the overwrite */
    md_expect_ramp(x0, 0, n, -1.0f, 0.0f);
    mox_buffer_release(x0);
    mox_buffer_release(y1);
    mox_buffer_release(w1);
}

/* A chain of copies back and forth: each waits for the one before. */
static void ping_pong(void **state)
{
    (void)state;
    const uint32_t n = 1024, rounds = 20;
    mox_buffer *p0 = conf_ramp(d0, n, 0.0f, 1.0f), *p1 = conf_zeros(d1, n);
    mox_op *ops[2 * 20];
    for (uint32_t r = 0; r < rounds; r++) {
        ops[2 * r] = md_submit(mox_buffer_copy(p0, 0, p1, 0, n));
        ops[2 * r + 1] = md_submit(conf_step(d1, conf_cfg(n), p1, n));
        /* p0 = p1 for the next round, also lazy and ordered */
        mox_op *back = md_submit(mox_buffer_copy(p1, 0, p0, 0, n));
        mox_op_drop(back); /* dropped after submission: it still runs (A8) */
    }
    for (uint32_t i = 0; i < 2 * rounds; i++)
        assert_int_equal(conf_run(ops[i]), MOX_OK);
    float *v = conf_read(p0);
    for (uint32_t i = 0; i < n; i++) {
        float want = (float)i;
        for (uint32_t r = 0; r < rounds; r++)
            want = want * 2.0f + 1.0f;
        if (v[i] != want)
            fail_msg("p0[%u] = %g, want %g", i, (double)v[i], (double)want);
    }
    free(v);
    mox_buffer_release(p0);
    mox_buffer_release(p1);
}

static void dropping(void **state)
{
    (void)state;
    const uint32_t n = 512;
    mox_buffer *a0 = conf_ramp(d0, n, 1.0f, 1.0f), *b1 = conf_zeros(d1, n);
    uint64_t s0 = mox_device_submission_count(d0), s1 = mox_device_submission_count(d1);
    mox_op_drop(mox_buffer_copy(a0, 0, b1, 0, n)); /* before submission: nothing runs */
    assert_int_equal(mox_device_submission_count(d0), s0);
    assert_int_equal(mox_device_submission_count(d1), s1);
    md_expect_ramp(b1, 0, n, 0.0f, 0.0f);
    /* after submission: it completes, and a later read is ordered after it */
    mox_op *op = md_submit(mox_buffer_copy(a0, 0, b1, 0, n));
    mox_op_drop(op);
    md_expect_ramp(b1, 0, n, 1.0f, 1.0f);
    /* The buffers may go before the copy completes: it holds them. */
    mox_buffer *c1 = conf_zeros(d1, n);
    mox_op *slow = md_submit(conf_slow_copy(d0, conf_cfg(n), a0, a0, n, MD_SLOW_SPINS));
    op = md_submit(mox_buffer_copy(a0, 0, c1, 0, n));
    mox_buffer_release(a0);
    mox_op_drop(op);
    mox_op_drop(slow);
    md_expect_ramp(c1, 0, n, 1.0f, 1.0f);
    mox_buffer_release(b1);
    mox_buffer_release(c1);
}

int main(void)
{
    md_require_two_devices();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enumeration_and_identity),
        cmocka_unit_test(uuid_prefix_any_case),
        cmocka_unit_test(selection_errors),
        cmocka_unit_test(settings_errors),
        cmocka_unit_test(peer_links),
        cmocka_unit_test(copies_both_directions),
        cmocka_unit_test(copy_argument_errors),
        cmocka_unit_test(ordering_after_a_running_writer),
        cmocka_unit_test(ordering_before_later_writers),
        cmocka_unit_test(ping_pong),
        cmocka_unit_test(dropping),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
