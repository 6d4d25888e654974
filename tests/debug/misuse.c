/* misuse.c - a debug build of libmox aborts, naming the call, on the
 * ownership errors docs/async.md calls undefined behaviour: double drop,
 * double release, use after release, pushing a consumed launch, ending a
 * batch twice. Each case runs in a child process (this program run again
 * with the case's name), which must die of SIGABRT with the message. Built
 * with NDEBUG (release builds, where the checks are compiled away) the
 * test is skipped. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <mox/mox.h>

#include "conf.h"

static mox_device *open_device(void)
{
    mox_device *dev = NULL;
    if (mox_device_open(&dev) != MOX_OK)
        exit(2);
    return dev;
}

static mox_buffer *floats(mox_device *dev)
{
    mox_buffer *b = NULL;
    if (mox_buffer_create(dev, &mox_type_f32, 64, &b) != MOX_OK)
        exit(2);
    return b;
}

static mox_op *fill(mox_device *dev, mox_buffer *b)
{
    mox_launch_config c;
    if (mox_launch_config_for_elements(64, 64, &c) != MOX_OK)
        exit(2);
    return conf_fill(dev, c, b, 1.0f, 64);
}

static mox_status next_stage(void *ctx, const mox_result *in, mox_op **next)
{
    (void)ctx;
    (void)in;
    *next = NULL;
    return MOX_OK;
}

/* The misuse itself; returns only if the check did not fire. */
static void misuse(const char *name)
{
    mox_device *dev = open_device();
    mox_buffer *b = floats(dev);
    if (strcmp(name, "double_drop") == 0) {
        mox_op *op = mox_buffer_readback(b);
        mox_op_drop(op);
        mox_op_drop(op);
    } else if (strcmp(name, "wait_after_drop") == 0) {
        mox_op *op = fill(dev, b);
        mox_op_drop(op);
        mox_op_wait(op);
    } else if (strcmp(name, "then_after_drop") == 0) {
        mox_op *op = fill(dev, b), *chain = NULL;
        mox_op_drop(op);
        mox_op_then(op, next_stage, NULL, &chain);
    } else if (strcmp(name, "double_release_buffer") == 0) {
        mox_buffer_release(b);
        mox_buffer_release(b);
    } else if (strcmp(name, "write_after_release") == 0) {
        float x[64] = {0};
        mox_buffer_release(b);
        mox_buffer_write(b, 0, 64, x);
    } else if (strcmp(name, "launch_after_release") == 0) {
        mox_buffer_release(b);
        fill(dev, b);
    } else if (strcmp(name, "double_release_device") == 0) {
        mox_buffer_release(b);
        mox_device_release(dev);
        mox_device_release(dev);
    } else if (strcmp(name, "push_consumed_launch") == 0) {
        mox_batch *batch = NULL;
        if (mox_batch_begin(dev, &batch) != MOX_OK)
            exit(2);
        mox_op *launch = fill(dev, b);
        if (mox_batch_push(batch, launch) != MOX_OK)
            exit(2);
        mox_batch_push(batch, launch);
    } else if (strcmp(name, "end_batch_twice") == 0) {
        mox_batch *batch = NULL;
        mox_op *op = NULL;
        if (mox_batch_begin(dev, &batch) != MOX_OK || mox_batch_end(batch, &op) != MOX_OK)
            exit(2);
        mox_batch_end(batch, &op);
    }
}

/* Runs the case in a child; returns its stderr (malloc'd) and wait status. */
static char *run_child(const char *name, int *status)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        execl("/proc/self/exe", "misuse", name, (char *)NULL);
        _exit(3);
    }
    close(fds[1]);
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    ssize_t n;
    while ((n = read(fds[0], text + len, cap - 1 - len)) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0)
            len += (size_t)n;
        if (len + 1 == cap)
            text = realloc(text, cap *= 2);
    }
    text[len] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, status, 0), pid);
    return text;
}

static void expect_abort(const char *name, const char *message)
{
    int status = 0;
    char *text = run_child(name, &status);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(text, message))
        fail_msg("%s: expected SIGABRT with \"%s\", got status 0x%x and:\n%s", name, message,
                 status, text);
    free(text);
}

#define NOT_LIVE "(undefined behaviour; caught by a debug build of libmox"

static void ops(void **state)
{
    (void)state;
    expect_abort("double_drop", "mox: mox_op_drop: the op is not live: it was already dropped");
    expect_abort("wait_after_drop", "mox: mox_op_wait: the op is not live");
    expect_abort("then_after_drop", "mox: mox_op_then: the op is not live: it was already "
                                    "dropped, or consumed by mox_batch_push, mox_op_then");
    expect_abort("double_drop", NOT_LIVE);
}

static void buffers_and_devices(void **state)
{
    (void)state;
    expect_abort("double_release_buffer",
                 "mox: mox_buffer_release: the buffer is not live: it was already released");
    expect_abort("write_after_release", "mox: mox_buffer_write: the buffer is not live");
    expect_abort("launch_after_release", "mox: mox_launch_generated: the buffer is not live");
    expect_abort("double_release_device",
                 "mox: mox_device_release: the device is not live: it was already released");
}

static void batches(void **state)
{
    (void)state;
    expect_abort("push_consumed_launch", "mox: mox_batch_push: the op is not live");
    expect_abort("end_batch_twice",
                 "mox: mox_batch_end: the batch is not live: it was already ended or discarded");
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        misuse(argv[1]);
        return 4; /* the check did not fire */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ops),
        cmocka_unit_test(buffers_and_devices),
        cmocka_unit_test(batches),
    };
#ifdef NDEBUG
    printf("release build (NDEBUG): the dead-object checks are compiled out\n");
    return 77;
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
