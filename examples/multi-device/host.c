/* host.c - the multi-device example: the pipeline example's two stages
 * (kernels of examples/pipeline, module "stages") split across two
 * devices. The input is cut into chunks; for each chunk, mox_buffer_upload
 * writes its input on device 0, stage 1 runs there, mox_buffer_copy moves
 * its output to device 1, and stage 2 runs there. Every op is submitted
 * before any is awaited: the runtime orders them from their buffer
 * accesses, across the devices too (stage 1 waits for the upload, the copy
 * for stage 1 on device 0, stage 2 for the copy; reusing a chunk's buffers
 * waits for their earlier readers), so device 0 computes chunk k+1 while
 * device 1 finishes chunk k. Outputs are verified exactly against the CPU
 * for blocks 128 and 256 and several sizes.
 *
 * Devices: two of the backend mox_device_open picks (MOX_BACKEND; on the
 * CPU, MOX_CPU_DEVICES=2 gives two virtual devices). Exit status: 0
 * verified, 1 mismatch or error, 77 with fewer than two devices. */
#include <stdio.h>
#include <stdlib.h>

#include <mox/mox.h>

#include "example.h"
#include "stages.h"

#define SETS 2 /* buffer sets in rotation: chunk k reuses chunk k-2's */

typedef struct chunk_set {
    mox_buffer *in, *mid0, *mid1, *out; /* in, mid0 on device 0; mid1, out on device 1 */
} chunk_set;

static float stage1(uint32_t block, float x) { return x * (block == 128 ? 2.0f : 4.0f) + 3.0f; }
static float expected(uint32_t block, float x) { return stage1(block, x) * 5.0f + 7.0f; }

static float input_value(uint32_t i) { return (float)(i % 1024) * 0.25f; }

#define CHUNK_OPS 4

/* The upload of `len` input values (copied by the call: `values` may be
 * reused at once), stage 1 on d0, the copy, stage 2 on d1: four ops,
 * submitted now (polled once), awaited later. */
static void submit_chunk(mox_device *d0, mox_device *d1, uint32_t block, chunk_set *s,
                         const float *values, uint32_t len, mox_op *ops[CHUNK_OPS])
{
    mox_launch_config c1 = ex_launch_config(block, len), c2 = ex_launch_config(256, len);
    ops[0] = mox_buffer_upload(s->in, 0, len, values);
    ops[1] = block == 128 ? stages_scale_128(d0, c1, s->in, s->mid0, len)
                          : stages_scale_256(d0, c1, s->in, s->mid0, len);
    ops[2] = mox_buffer_copy(s->mid0, 0, s->mid1, 0, len);
    ops[3] = stages_finish(d1, c2, s->mid1, s->out, len);
    for (int i = 0; i < CHUNK_OPS; i++)
        (void)mox_op_poll(ops[i], (mox_waker){NULL, NULL});
}

/* Waits for a chunk's ops and checks its output. */
static void finish_chunk(chunk_set *s, mox_op *ops[CHUNK_OPS], uint32_t block, uint32_t first,
                         uint32_t len)
{
    static const char *const what[CHUNK_OPS] = {"input upload", "stage 1", "copy", "stage 2"};
    for (int i = 0; i < CHUNK_OPS; i++)
        ex_wait_op(ops[i], what[i]);
    float *want = ex_xmalloc((size_t)len * sizeof *want);
    for (uint32_t i = 0; i < len; i++)
        want[i] = expected(block, input_value(first + i));
    ex_check_f32(s->out, want, len, len, 0.0f, "stage 2 output");
    free(want);
}

static void run_case(mox_device *d0, mox_device *d1, uint32_t block, uint32_t n, uint32_t chunks)
{
    uint32_t per = (n + chunks - 1) / chunks;
    chunk_set sets[SETS];
    for (int k = 0; k < SETS; k++) {
        sets[k].in = ex_buffer_new(d0, &mox_type_f32, per);
        sets[k].mid0 = ex_buffer_new(d0, &mox_type_f32, per);
        sets[k].mid1 = ex_buffer_new(d1, &mox_type_f32, per);
        sets[k].out = ex_buffer_new(d1, &mox_type_f32, per);
    }
    mox_op *ops[SETS][CHUNK_OPS] = {{NULL}};
    uint32_t first[SETS] = {0}, len[SETS] = {0};
    float *values = ex_xmalloc((size_t)per * sizeof *values);
    int failures = ex_failures();
    for (uint32_t c = 0, at = 0; c < chunks && at < n; c++, at += per) {
        chunk_set *s = &sets[c % SETS];
        if (ops[c % SETS][0]) /* the set's previous chunk: check it before reuse */
            finish_chunk(s, ops[c % SETS], block, first[c % SETS], len[c % SETS]);
        uint32_t l = n - at < per ? n - at : per;
        for (uint32_t i = 0; i < l; i++)
            values[i] = input_value(at + i);
        submit_chunk(d0, d1, block, s, values, l, ops[c % SETS]);
        first[c % SETS] = at;
        len[c % SETS] = l;
    }
    for (int k = 0; k < SETS; k++)
        if (ops[k][0])
            finish_chunk(&sets[k], ops[k], block, first[k], len[k]);
    if (ex_failures() == failures)
        printf("multi-device block=%u, n=%u in %u chunks: verified (stage 1 on %s, stage 2 on %s)\n",
               block, n, chunks, mox_device_name(d0), mox_device_name(d1));
    for (int k = 0; k < SETS; k++) {
        mox_buffer_release(sets[k].in);
        mox_buffer_release(sets[k].mid0);
        mox_buffer_release(sets[k].mid1);
        mox_buffer_release(sets[k].out);
    }
    free(values);
}

static mox_device *open_ordinal(uint32_t ordinal)
{
    mox_device_options o = {.use_ordinal = true, .ordinal = ordinal};
    mox_device *d = NULL;
    ex_check(mox_device_open_with(&o, &d), "cannot open a device");
    ex_check(mox_module_prepare(d, &stages_module), "cannot prepare module stages");
    return d;
}

int main(void)
{
    ex_init("multi-device");
    uint32_t count = 0;
    ex_check(mox_device_count(MOX_BACKEND_AUTO, &count), "cannot count the devices");
    if (count < 2) {
        printf("skipped: %u device(s); the example needs two (on the CPU, MOX_CPU_DEVICES=2)\n",
               count);
        return 77;
    }
    mox_device *d0 = open_ordinal(0), *d1 = open_ordinal(1);
    char u0[37], u1[37];
    mox_peer_link link;
    ex_check(mox_device_uuid(d0, u0), "mox_device_uuid");
    ex_check(mox_device_uuid(d1, u1), "mox_device_uuid");
    ex_check(mox_device_peer(d1, d0, &link), "mox_device_peer");
    printf("device 0: %s (%s)\ndevice 1: %s (%s)\ndevice 1 reaches device 0: %s\n",
           mox_device_name(d0), u0, mox_device_name(d1), u1, mox_peer_link_name(link));
    static const uint32_t blocks[] = {128, 256};
    static const uint32_t sizes[][2] = {{1, 1}, {257, 3}, {100000, 7}, {1000003, 8}};
    for (size_t b = 0; b < 2; b++)
        for (size_t i = 0; i < 4; i++)
            run_case(d0, d1, blocks[b], sizes[i][0], sizes[i][1]);
    mox_device_release(d0);
    mox_device_release(d1);
    return ex_finish();
}
