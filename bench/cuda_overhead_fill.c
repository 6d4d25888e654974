/* cuda_overhead_fill.c - section E of bench/cuda_overhead (see
 * cuda_overhead.c): mox_buffer_fill against the raw driver's
 * cuMemsetD32Async on the same GPU, in one process.
 *
 *  E. fills of 256 MiB (bandwidth: u32 elements, which mox turns into
 *     cuMemsetD32Async, and 12-byte f32x3 elements, which run the
 *     backend's fill kernel) and of 4 KiB (host overhead per fill),
 *     FILLS of them submitted back to back and waited once, wall clock
 *     per fill; the raw side's memsets on one stream, the same way; and
 *     256 MiB of u32 as a batch of two fills of its halves against one
 *     cuMemsetD32Async of 256 MiB (fills that large stay memsets on the
 *     stream; smaller ones in a batch become fill-kernel graph nodes,
 *     docs/cuda-backend.md).
 * Each mox fill's result is checked by reading a few elements back. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mox/mox.h>

#include "bench_check.h"
#include "cuda_overhead.h"

enum { FILLS = 200, E_TRIALS = 5 };

/* Waits for the last of `count` ops submitted since t0, then for each
 * (checking it) and drops them: wall microseconds per op. */
static double wait_all_us(mox_op **ops, int count, double t0)
{
    CHECK_MOX(mox_op_wait(ops[count - 1]));
    double us = (ovh_now_us() - t0) / count;
    for (int i = 0; i < count; i++) {
        CHECK_MOX(mox_op_wait(ops[i]));
        mox_op_drop(ops[i]);
    }
    return us;
}

/* Wall microseconds per fill of `count` fills of b, polled as made
 * (submitted), the last waited. */
static double mox_fills_us(mox_buffer *b, const void *value, int count)
{
    static mox_op *ops[FILLS];
    const mox_waker none = {NULL, NULL};
    size_t n = mox_buffer_length(b);
    double t0 = ovh_now_us();
    for (int i = 0; i < count; i++) {
        ops[i] = mox_buffer_fill(b, 0, n, value);
        (void)mox_op_poll(ops[i], none);
    }
    return wait_all_us(ops, count, t0);
}

/* The same, each a batch of two fills (the halves of b). */
static double mox_batch_fills_us(mox_device *dev, mox_buffer *b, const void *value, int count)
{
    static mox_op *ops[FILLS];
    const mox_waker none = {NULL, NULL};
    size_t n = mox_buffer_length(b), half = n / 2;
    double t0 = ovh_now_us();
    for (int i = 0; i < count; i++) {
        mox_batch *batch = NULL;
        CHECK_MOX(mox_batch_begin(dev, &batch));
        CHECK_MOX(mox_batch_push(batch, mox_buffer_fill(b, 0, half, value)));
        CHECK_MOX(mox_batch_push(batch, mox_buffer_fill(b, half, n - half, value)));
        CHECK_MOX(mox_batch_end(batch, &ops[i]));
        (void)mox_op_poll(ops[i], none);
    }
    return wait_all_us(ops, count, t0);
}

static void check_filled(mox_buffer *b, const void *value)
{
    size_t size = mox_buffer_type(b)->size;
    size_t n = mox_buffer_length(b);
    unsigned char got[16];
    size_t at[3] = {0, n / 2, n - 1};
    for (int i = 0; i < 3; i++) {
        CHECK_MOX(mox_buffer_read(b, at[i], 1, got));
        if (memcmp(got, value, size) != 0) {
            fprintf(stderr, "cuda_overhead: fill of %s wrong at element %zu\n",
                    mox_buffer_type(b)->name, at[i]);
            exit(1);
        }
    }
}

static double mox_median_us(mox_device *dev, const mox_type *type, size_t bytes, const void *value,
                            int count, bool batched)
{
    mox_buffer *b = NULL;
    CHECK_MOX(mox_buffer_create(dev, type, bytes / type->size, &b));
    /* warm: the fill kernel's module loads on first use, a batch's graph
     * is made on its second launch */
    (void)(batched ? mox_batch_fills_us(dev, b, value, 2) : mox_fills_us(b, value, 2));
    double t[E_TRIALS];
    for (int k = 0; k < E_TRIALS; k++)
        t[k] = batched ? mox_batch_fills_us(dev, b, value, count) : mox_fills_us(b, value, count);
    check_filled(b, value);
    mox_buffer_release(b);
    return ovh_median(t, E_TRIALS);
}

static double raw_median_us(raw *r, size_t bytes, uint32_t value, int count)
{
    CUdeviceptr p = 0;
    CHECK_CU(cu->cuMemAlloc(&p, bytes));
    double t[E_TRIALS];
    for (int k = -1; k < E_TRIALS; k++) {
        double t0 = ovh_now_us();
        for (int i = 0; i < count; i++)
            CHECK_CU(cu->cuMemsetD32Async(p, value, bytes / 4, r->stream));
        CHECK_CU(cu->cuStreamSynchronize(r->stream));
        if (k >= 0)
            t[k] = (ovh_now_us() - t0) / count;
    }
    CHECK_CU(cu->cuMemFree(p));
    return ovh_median(t, E_TRIALS);
}

static void row(const char *what, double us, size_t bytes)
{
    printf("   %-40s %8.2f us  %7.1f GB/s\n", what, us, (double)bytes / us / 1e3);
}

void ovh_section_e(mox_device *dev, raw *r)
{
    const size_t big = (size_t)256 << 20, small = 4096, big3 = big / 12 * 12;
    const uint32_t word = 0x3f800000u; /* 1.0f */
    const float three[3] = {1.0f, 2.0f, 3.0f};
    double mox_big = mox_median_us(dev, &mox_type_u32, big, &word, FILLS / 10, false);
    double mox_big3 = mox_median_us(dev, &mox_type_f32x3, big3, three, FILLS / 10, false);
    double mox_small = mox_median_us(dev, &mox_type_u32, small, &word, FILLS, false);
    double mox_halves = mox_median_us(dev, &mox_type_u32, big, &word, FILLS / 10, true);
    double raw_big = raw_median_us(r, big, word, FILLS / 10);
    double raw_small = raw_median_us(r, small, word, FILLS);
    printf("E. fills, submitted back to back (%d of 256 MiB, %d of 4 KiB), wall per fill\n",
           FILLS / 10, FILLS);
    row("mox_buffer_fill u32, 256 MiB (memset)", mox_big, big);
    row("mox_buffer_fill f32x3, 256 MiB (kernel)", mox_big3, big3);
    row("raw cuMemsetD32Async, 256 MiB", raw_big, big);
    row("mox batch: 2 fills u32, 256 MiB", mox_halves, big);
    row("mox_buffer_fill u32, 4 KiB", mox_small, small);
    row("raw cuMemsetD32Async, 4 KiB", raw_small, small);
    printf("   raw / mox: 256 MiB %.3f (kernel fill %.3f, batch of two %.3f), 4 KiB %.3f\n\n",
           raw_big / mox_big, raw_big / mox_big3, raw_big / mox_halves, raw_small / mox_small);
    ovh_json_num("e_mox_fill_256mib_us", mox_big);
    ovh_json_num("e_mox_fill_f32x3_256mib_us", mox_big3);
    ovh_json_num("e_raw_memset_256mib_us", raw_big);
    ovh_json_num("e_mox_batch_fills_256mib_us", mox_halves);
    ovh_json_num("e_mox_fill_4kib_us", mox_small);
    ovh_json_num("e_raw_memset_4kib_us", raw_small);
}
