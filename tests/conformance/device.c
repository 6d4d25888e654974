/* device.c - devices: backend selection (MOX_BACKEND), separate contexts,
 * retain/release, limits, the event fd (A2), the submission counter and the
 * names of the runtime's threads. */
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

/* Runs f with MOX_BACKEND temporarily set to value (NULL: unset). */
static mox_status open_with_env(const char *var, const char *value, mox_device **out)
{
    const char *old = getenv(var);
    char *saved = old ? strdup(old) : NULL;
    if (value)
        setenv(var, value, 1);
    else
        unsetenv(var);
    mox_status st = mox_device_open(out);
    if (saved) {
        setenv(var, saved, 1);
        free(saved);
    } else {
        unsetenv(var);
    }
    return st;
}

static void unknown_backend_is_config_error(void **state)
{
    (void)state;
    mox_device *d = (mox_device *)1;
    assert_int_equal(open_with_env("MOX_BACKEND", "metal", &d), MOX_ERR_CONFIG);
    assert_null(d);
    assert_non_null(strstr(mox_error_last_message(), "MOX_BACKEND"));
    assert_non_null(strstr(mox_error_last_message(), "metal"));
}

static void forced_cuda_is_cuda_or_unavailable(void **state)
{
    (void)state;
    mox_device *d = NULL;
    mox_status st = open_with_env("MOX_BACKEND", "cuda", &d);
    if (st == MOX_OK) {
        assert_int_equal(mox_device_backend(d), MOX_BACKEND_CUDA);
        mox_device_release(d);
    } else {
        assert_int_equal(st, MOX_ERR_DEVICE_UNAVAILABLE);
        assert_null(d);
        assert_true(strlen(mox_error_last_message()) > 0);
    }
}

static void forced_cpu_and_empty_means_auto(void **state)
{
    (void)state;
    mox_device *d = NULL;
    assert_int_equal(open_with_env("MOX_BACKEND", "cpu", &d), MOX_OK);
    assert_int_equal(mox_device_backend(d), MOX_BACKEND_CPU);
    mox_device_release(d);
    assert_int_equal(open_with_env("MOX_BACKEND", "", &d), MOX_OK);
    assert_true(mox_device_backend(d) == MOX_BACKEND_CPU || mox_device_backend(d) == MOX_BACKEND_CUDA);
    mox_device_release(d);
}

static void explicit_option_overrides_environment(void **state)
{
    (void)state;
    const char *old = getenv("MOX_BACKEND");
    char *saved = old ? strdup(old) : NULL;
    setenv("MOX_BACKEND", "bogus", 1);
    mox_device_options o = {.backend = MOX_BACKEND_CPU, .command_capacity = 0, .cpu_threads = 3};
    mox_device *d = NULL;
    mox_status st = mox_device_open_with(&o, &d);
    if (saved) {
        setenv("MOX_BACKEND", saved, 1);
        free(saved);
    } else {
        unsetenv("MOX_BACKEND");
    }
    assert_int_equal(st, MOX_OK);
    assert_int_equal(mox_device_backend(d), MOX_BACKEND_CPU);
    assert_string_equal(mox_device_name(d), "CPU (3 threads)");
    mox_device_release(d);

    mox_device_options bad = {.backend = (mox_backend)7, .command_capacity = 0, .cpu_threads = 0};
    assert_int_equal(mox_device_open_with(&bad, &d), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_device_open(NULL), MOX_ERR_INVALID_ARGUMENT);
}

static void bad_debug_delay_is_config_error(void **state)
{
    (void)state;
    mox_device *d = NULL;
    assert_int_equal(open_with_env("MOX_DEBUG_PREPARE_DELAY_MS", "soon", &d), MOX_ERR_CONFIG);
    assert_non_null(strstr(mox_error_last_message(), "MOX_DEBUG_PREPARE_DELAY_MS"));
}

static void bad_wait_spin_is_config_error(void **state)
{
    (void)state;
    mox_device *d = NULL;
    assert_int_equal(open_with_env("MOX_WAIT_SPIN_US", "-5", &d), MOX_ERR_CONFIG);
    assert_non_null(strstr(mox_error_last_message(), "MOX_WAIT_SPIN_US"));
    assert_int_equal(open_with_env("MOX_WAIT_SPIN_US", "60000001", &d), MOX_ERR_CONFIG);
    assert_null(d);
    /* Nothing before the digits either, for every numeric MOX_* setting. */
    const char *const padded[] = {"+5", " 5", "\t5", "5 "};
    for (size_t i = 0; i < sizeof padded / sizeof padded[0]; i++) {
        assert_int_equal(open_with_env("MOX_WAIT_SPIN_US", padded[i], &d), MOX_ERR_CONFIG);
        assert_int_equal(open_with_env("MOX_DEBUG_PREPARE_DELAY_MS", padded[i], &d), MOX_ERR_CONFIG);
        assert_null(d);
    }
}

/* A2 whatever the waiting thread does before it sleeps: never watching
 * (0), the default, and watching for up to a minute. */
static void waits_resolve_with_any_spin_setting(void **state)
{
    (void)state;
    const char *settings[] = {"0", "", "60000000"};
    for (size_t k = 0; k < sizeof settings / sizeof *settings; k++) {
        setenv("MOX_WAIT_SPIN_US", settings[k], 1);
        mox_device *d = conf_open();
        unsetenv("MOX_WAIT_SPIN_US");
        mox_buffer *b = conf_zeros(d, 64);
        for (int i = 0; i < 20; i++) {
            mox_op *op = conf_fill(d, conf_cfg(64), b, (float)i, 64);
            assert_int_equal(mox_op_wait(op), MOX_OK);
            mox_op_drop(op);
            assert_true(conf_read1(b, 63) == (float)i);
        }
        mox_buffer_release(b);
        mox_device_release(d);
    }
}

static void limits_and_name(void **state)
{
    (void)state;
    mox_device *d = conf_open();
    mox_dim3 mb = mox_device_max_block(d);
    assert_true(mb.x >= 1024 && mb.y >= 1024 && mb.z >= 64);
    assert_int_equal(mox_device_max_threads_per_block(d), 1024);
    assert_int_equal(mox_device_warp_size(d), 32);
    assert_true(mox_device_max_buffer_bytes(d) > (1u << 20));
    assert_true(strlen(mox_device_name(d)) > 0);
    if (mox_device_backend(d) == MOX_BACKEND_CPU)
        assert_non_null(strstr(mox_device_name(d), "CPU ("));
    assert_int_equal(mox_device_health(d), MOX_OK);
    mox_device_release(d);
    assert_string_equal(mox_status_name(mox_device_health(NULL)), "MOX_ERR_INVALID_ARGUMENT");
}

static void retain_shares_the_context(void **state)
{
    (void)state;
    mox_device *d = conf_open();
    mox_device *c = mox_device_retain(d);
    assert_ptr_equal(c, d);
    mox_buffer *b = conf_zeros(d, 4);
    /* A buffer of the original works with the clone: same context. */
    mox_op *op = conf_fill(c, conf_cfg(4), b, 2.0f, 4);
    assert_int_equal(conf_run(op), MOX_OK);
    assert_true(conf_read1(b, 3) == 2.0f);
    mox_buffer_release(b);
    mox_device_release(d);
    mox_device_release(c);
    mox_device_release(NULL);
}

static void two_opens_are_separate_contexts(void **state)
{
    (void)state;
    mox_device *a = conf_open(), *b = conf_open();
    assert_ptr_not_equal(a, b);
    mox_buffer *ba = conf_zeros(a, 4);
    mox_op *op = conf_fill(b, conf_cfg(4), ba, 1.0f, 4);
    assert_int_equal(conf_run(op), MOX_ERR_DEVICE_MISMATCH);
    mox_buffer_release(ba);
    mox_device_release(a);
    mox_device_release(b);
}

static void submission_counter_counts_batches(void **state)
{
    (void)state;
    mox_device *d = conf_open();
    mox_buffer *b = conf_zeros(d, 8);
    uint64_t before = mox_device_submission_count(d);
    mox_op *op = conf_fill(d, conf_cfg(8), b, 5.0f, 8);
    assert_int_equal(mox_device_submission_count(d), before); /* A1 */
    assert_int_equal(mox_op_wait(op), MOX_OK);
    assert_int_equal(mox_device_submission_count(d), before + 1);
    mox_op_drop(op);
    mox_buffer_release(b);
    mox_device_release(d);
}

static void event_fd_becomes_readable(void **state)
{
    (void)state;
    mox_device *d = conf_open();
    int fd = mox_device_event_fd(d);
    assert_true(fd >= 0);
    assert_int_equal(mox_device_event_fd(d), fd);
    mox_buffer *b = conf_zeros(d, 64);
    /* Drain whatever is there, then drive an op through the fd alone. */
    uint64_t v;
    while (read(fd, &v, sizeof v) == (ssize_t)sizeof v) {
    }
    mox_op *op = conf_fill(d, conf_cfg(64), b, 7.0f, 64);
    mox_waker none = {NULL, NULL};
    int polls = 0;
    while (mox_op_poll(op, none) == MOX_PENDING) {
        struct pollfd p = {fd, POLLIN, 0};
        int rc = poll(&p, 1, 60000);
        assert_int_equal(rc, 1); /* readable, or the test would time out */
        assert_true(p.revents & POLLIN);
        assert_int_equal(read(fd, &v, sizeof v), (ssize_t)sizeof v);
        assert_true(v >= 1);
        polls++;
        assert_true(polls < 1000);
    }
    assert_int_equal(mox_result_status(mox_op_result(op)), MOX_OK);
    mox_op_drop(op);
    assert_true(conf_read1(b, 63) == 7.0f);
    mox_buffer_release(b);
    mox_device_release(d);
}

/* Whether thread `tid` of this process has entered the kernel's exit
 * (PF_EXITING, 0x4, in the flags field of its stat): it runs no more user
 * code. pthread_join returns once an ending thread's kernel exit has
 * cleared its thread id, which happens before the thread leaves
 * /proc/self/task; on a loaded machine the test saw such a joined thread
 * still listed there (once, in the TSan stage beside other builds). The flag is
 * set before that id is cleared, so a thread joined by
 * mox_device_release always has it: no wait is needed to tell it from
 * one still running. */
static bool thread_exiting(const char *tid)
{
    char path[300], line[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true; /* gone meanwhile */
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *p = got ? strrchr(line, ')') : NULL; /* the name may hold spaces and ')' */
    unsigned long flags = 0;
    /* After the name: state ppid pgrp session tty_nr tpgid flags. */
    if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
        return false;
    return (flags & 0x4ul) != 0;
}

/* How many threads of this process have a name starting with `prefix`,
 * leaving out those that are exiting. */
static int threads_named(const char *prefix)
{
    DIR *dir = opendir("/proc/self/task");
    assert_non_null(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        bool named = fgets(name, sizeof name, f) && strncmp(name, prefix, strlen(prefix)) == 0;
        fclose(f);
        if (named && !thread_exiting(e->d_name))
            n++;
    }
    closedir(dir);
    return n;
}

/* The runtime's own threads carry names starting "mox-" (the CUDA
 * backend's completion thread, the CPU backend's pool, the module
 * worker), so top -H, gdb and perf tell them from the program's. */
/* NULL to a device query records why (A10); the accessors of results
 * and errors take NULL and record nothing (docs/errors.md). */
static void null_queries(void **state)
{
    (void)state;
    assert_int_equal(mox_device_event_fd(NULL), -1);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_event_fd: device is NULL"));
    assert_int_equal(mox_device_health(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_health: device is NULL"));
    assert_int_equal(mox_result_status(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_int_equal(mox_error_code(NULL), MOX_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mox_error_last_message(), "mox_device_health: device is NULL"));
}

/* Waiting for everything and releasing everything leaves no thread of mox
 * running once mox_device_release returns (docs/async.md, "Ownership"):
 * the runtime's own last steps (the completing thread's, the module
 * worker's after a first use) hold no reference that outlives the wait.
 * A fresh device per round, so the module is prepared every time; the op
 * is waited on or polled until READY. First in the list: no other test's
 * device is alive yet. */
static void release_after_waiting_leaves_no_thread(void **state)
{
    (void)state;
    assert_int_equal(threads_named("mox-"), 0);
    for (int round = 0; round < 40; round++) {
        mox_device *d = conf_open();
        mox_buffer *b = conf_zeros(d, 256);
        mox_op *op = conf_fill(d, conf_cfg(256), b, 2.0f, 256);
        if (round % 2) {
            while (mox_op_poll(op, (mox_waker){NULL, NULL}) == MOX_PENDING)
                sched_yield();
            assert_int_equal(mox_result_status(mox_op_result(op)), MOX_OK);
        } else {
            assert_int_equal(mox_op_wait(op), MOX_OK);
        }
        mox_op_drop(op);
        mox_buffer_release(b);
        mox_device_release(d);
        assert_int_equal(threads_named("mox-"), 0);
    }
}

static void runtime_threads_are_named(void **state)
{
    (void)state;
    mox_device *d = conf_open();
    mox_buffer *b = conf_zeros(d, 64);
    assert_int_equal(conf_run(conf_fill(d, conf_cfg(64), b, 3.0f, 64)), MOX_OK);
    assert_true(threads_named("mox-") >= 1);
    assert_true(conf_read1(b, 63) == 3.0f);
    mox_buffer_release(b);
    mox_device_release(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(release_after_waiting_leaves_no_thread),
        cmocka_unit_test(unknown_backend_is_config_error),
        cmocka_unit_test(forced_cuda_is_cuda_or_unavailable),
        cmocka_unit_test(forced_cpu_and_empty_means_auto),
        cmocka_unit_test(explicit_option_overrides_environment),
        cmocka_unit_test(bad_debug_delay_is_config_error),
        cmocka_unit_test(bad_wait_spin_is_config_error),
        cmocka_unit_test(waits_resolve_with_any_spin_setting),
        cmocka_unit_test(limits_and_name),
        cmocka_unit_test(retain_shares_the_context),
        cmocka_unit_test(two_opens_are_separate_contexts),
        cmocka_unit_test(submission_counter_counts_batches),
        cmocka_unit_test(event_fd_becomes_readable),
        cmocka_unit_test(null_queries),
        cmocka_unit_test(runtime_threads_are_named),
    };
    /* Skip the whole program when this run's backend is unavailable. */
    mox_device_release(conf_open());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
