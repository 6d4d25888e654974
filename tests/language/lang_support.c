/* lang_support.c - see lang_support.h. */
#include "lang_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mox_device *lang_open(void)
{
    mox_device *dev = NULL;
    mox_status st = mox_device_open(&dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        fprintf(stderr, "skip: %s\n", mox_error_last_message());
        exit(LANG_SKIP);
    }
    if (st != MOX_OK) {
        fprintf(stderr, "mox_device_open: %s: %s\n", mox_status_name(st), mox_error_last_message());
        exit(1);
    }
    return dev;
}

mox_buffer *lang_buffer(mox_device *dev, const mox_type *type, size_t n, const void *data)
{
    mox_buffer *b = NULL;
    mox_status st = data ? mox_buffer_create_from(dev, type, n, data, &b) : mox_buffer_create(dev, type, n, &b);
    if (st != MOX_OK)
        fail_msg("buffer of %zu %s: %s", n, type->name, mox_error_last_message());
    return b;
}

void lang_read(mox_buffer *b, void *out)
{
    if (mox_buffer_read(b, 0, mox_buffer_length(b), out) != MOX_OK)
        fail_msg("read: %s", mox_error_last_message());
}

mox_status lang_run(mox_op *op)
{
    mox_status st = mox_op_wait(op);
    if (st != MOX_OK) {
        const mox_result *r = mox_op_result(op);
        const mox_error *e = r ? mox_result_error(r) : NULL;
        fprintf(stderr, "op failed: %s: %s\n", mox_status_name(st), e ? mox_error_message(e) : "?");
    }
    mox_op_drop(op);
    return st;
}

mox_launch_config lang_cfg(uint32_t n)
{
    mox_launch_config cfg;
    if (mox_launch_config_for_elements(64, n, &cfg) != MOX_OK)
        fail_msg("config for %u elements: %s", n, mox_error_last_message());
    return cfg;
}

void lang_expect_error(mox_op *op, mox_status code, const char *text)
{
    mox_status st = mox_op_wait(op);
    const char *msg = st == MOX_OK ? "" : mox_error_message(mox_result_error(mox_op_result(op)));
    if (st != code || !strstr(msg, text))
        fail_msg("got %s \"%s\", expected %s with \"%s\"", mox_status_name(st), msg, mox_status_name(code), text);
    mox_op_drop(op);
}

int lang_setup(void **state)
{
    *state = lang_open();
    return 0;
}

int lang_teardown(void **state)
{
    mox_device_release(*state);
    return 0;
}
