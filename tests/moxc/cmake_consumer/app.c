/* app.c - the consumer's program: runs the generated demo_scale launch
 * (through use.c) on the default device and checks every output value.
 * The install tests build it against an installed mox, run it in the build
 * tree, then again from where it was installed after the build's artifact
 * cache is gone. Exits 0 when every value matches, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mox/mox.h>

/* The bindings of the static library it links: mox_add_kernels gives a
 * library's bindings directory to what links it. */
#include "demo.h"

mox_op *consumer_scale(mox_device *device, const mox_buffer *in, mox_buffer *out, uint32_t n);

static int fail(const char *what, mox_status st)
{
    fprintf(stderr, "consumer: %s: %s: %s\n", what, mox_status_name(st), mox_error_last_message());
    return 1;
}

int main(void)
{
    enum { N = 1000 };
    static float input[N], output[N];
    for (uint32_t i = 0; i < N; ++i)
        input[i] = (float)i * 0.5f;
    mox_device *dev = NULL;
    mox_buffer *in = NULL, *out = NULL;
    mox_status st = mox_device_open(&dev);
    if (st != MOX_OK)
        return fail("mox_device_open", st);
    if ((st = mox_buffer_create_from(dev, &mox_type_f32, N, input, &in)) != MOX_OK ||
        (st = mox_buffer_create(dev, &mox_type_f32, N, &out)) != MOX_OK)
        return fail("mox_buffer_create", st);
    (void)demo_scale; /* declared by the library's bindings */
    mox_op *op = consumer_scale(dev, in, out, N);
    st = mox_op_wait(op);
    if (st != MOX_OK) {
        const mox_error *err = mox_result_error(mox_op_result(op));
        fprintf(stderr, "consumer: demo_scale: %s: %s\n", mox_status_name(st),
                err ? mox_error_message(err) : "(no message)");
        return 1;
    }
    mox_op_drop(op);
    if ((st = mox_buffer_read(out, 0, N, output)) != MOX_OK)
        return fail("mox_buffer_read", st);
    for (uint32_t i = 0; i < N; ++i) {
        float want = input[i] * 2.0f + 1.0f;
        if (output[i] != want) {
            fprintf(stderr, "consumer: output[%u] = %g, want %g\n", i, (double)output[i], (double)want);
            return 1;
        }
    }
    printf("consumer: demo_scale of %d floats verified on %s\n", N, mox_device_name(dev));
    mox_buffer_release(in);
    mox_buffer_release(out);
    mox_device_release(dev);
    return 0;
}
