/* idle_cpu.c - the CPU an idle open device costs, by thread, in a process of
 * its own (docs/performance.md, "Runtime overhead").
 *
 *     idle_cpu raw|mox SECONDS
 *
 * raw: the CUDA driver alone (primary context retained and current, 1 MiB
 *      allocated, one memset on a stream, synchronized): the floor any
 *      CUDA program pays on this machine.
 * mox: mox_device_open (MOX_BACKEND honoured), two 1 MiB buffers and one
 *      mox_buffer_copy waited: every thread of the runtime started.
 *
 * Then nothing for SECONDS seconds, measured second by second: the whole
 * process (getrusage) and each thread by name (/proc/self/task/<tid>/comm
 * and .../schedstat, nanoseconds on a CPU). Threads named "mox-*" are the
 * runtime's own; this thread is the probe (reading /proc costs it about
 * 0.3 ms a second, counted apart); the rest are the driver's. Prints one
 * line per second and a summary `idle <mode>: <ms> ms CPU per s (<pct> %
 * of a core) without the probe: mox threads <ms>, driver threads <ms>; the
 * whole process <ms>` (means over the seconds after the first). Exit 77
 * when the mode's device cannot be opened (no driver, no GPU). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mox/mox.h>

#include "cuda/cuda_api.h"
#include "thread_cpu.h"

enum { MAX_SECONDS = 60 };

static double process_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e3 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e3;
}

static int thread_count(void)
{
    DIR *dir = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;)
        n += e->d_name[0] != '.';
    if (dir)
        closedir(dir);
    return n;
}

#define CU_OR_SKIP(x, what)                                                                        \
    do {                                                                                           \
        if ((x) != CUDA_SUCCESS) {                                                                 \
            printf("skipped: %s failed\n", what);                                                  \
            exit(77);                                                                              \
        }                                                                                          \
    } while (0)

static void open_raw(void)
{
    const char *why = NULL;
    const mox__cuda_api *cu = mox__cuda_api_get(&why);
    if (!cu) {
        printf("skipped: %s\n", why ? why : "no CUDA driver");
        exit(77);
    }
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUdeviceptr p;
    CU_OR_SKIP(cu->cuDeviceGet(&dev, 0), "cuDeviceGet");
    CU_OR_SKIP(cu->cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    CU_OR_SKIP(cu->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    CU_OR_SKIP(cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    CU_OR_SKIP(cu->cuMemAlloc(&p, 1u << 20), "cuMemAlloc");
    CU_OR_SKIP(cu->cuMemsetD32Async(p, 7u, (1u << 20) / 4, stream), "cuMemsetD32Async");
    CU_OR_SKIP(cu->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

static mox_device *open_mox(void)
{
    mox_device *dev = NULL;
    if (mox_device_open(&dev) != MOX_OK) {
        printf("skipped: mox_device_open: %s\n", mox_error_last_message());
        exit(77);
    }
    enum { N = (1u << 20) / 4 };
    mox_buffer *a = NULL, *b = NULL;
    if (mox_buffer_create(dev, &mox_type_u32, N, &a) != MOX_OK ||
        mox_buffer_create(dev, &mox_type_u32, N, &b) != MOX_OK) {
        fprintf(stderr, "idle_cpu: mox_buffer_create: %s\n", mox_error_last_message());
        exit(1);
    }
    mox_op *op = mox_buffer_copy(a, 0, b, 0, N);
    if (mox_op_wait(op) != MOX_OK) {
        fprintf(stderr, "idle_cpu: copy: %s\n", mox_error_last_message());
        exit(1);
    }
    mox_op_drop(op);
    /* Buffers and device stay open: the device is idle, not closed. */
    return dev;
}

static void sleep_until(const struct timespec *t)
{
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) != 0) {
    }
}

int main(int argc, char **argv)
{
    int seconds = argc == 3 ? atoi(argv[2]) : 0;
    if (argc != 3 || (strcmp(argv[1], "raw") != 0 && strcmp(argv[1], "mox") != 0) ||
        seconds < 2 || seconds > MAX_SECONDS) {
        fprintf(stderr, "usage: idle_cpu raw|mox SECONDS (2-%d)\n", MAX_SECONDS);
        return 2;
    }
    bool raw = strcmp(argv[1], "raw") == 0;
    mox_device *dev = NULL;
    if (raw)
        open_raw();
    else
        dev = open_mox();
    printf("idle_cpu %s: %d threads after the first work\n", argv[1], thread_count());
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double sum = 0, sum_mox = 0, sum_other = 0;
    bool per_thread = true;
    for (int s = 0; s < seconds; s++) {
        bench_thread_cpu t0, t1;
        double c0 = process_cpu_ms();
        per_thread = bench_thread_cpu_read(&t0) && per_thread;
        t.tv_sec += 1;
        sleep_until(&t);
        double c = process_cpu_ms() - c0;
        per_thread = bench_thread_cpu_read(&t1) && per_thread;
        double m = t1.mox_ms - t0.mox_ms, o = t1.other_ms - t0.other_ms;
        printf("  second %2d: process %.3f ms CPU; mox threads %.3f, driver threads %.3f, the probe "
               "%.3f\n",
               s + 1, c, m, o, t1.self_ms - t0.self_ms);
        if (s > 0) { /* the first second may still hold the start's tail */
            sum += c;
            sum_mox += m;
            sum_other += o;
        }
    }
    double n = seconds - 1;
    if (!per_thread)
        printf("idle %s: %.3f ms CPU per s, the whole process (no per-thread figures)\n", argv[1],
               sum / n);
    else
        printf("idle %s: %.3f ms CPU per s (%.4f %% of a core) without the probe: mox threads "
               "%.3f, driver threads %.3f; the whole process %.3f\n",
               argv[1], (sum_mox + sum_other) / n, (sum_mox + sum_other) / n / 10.0, sum_mox / n,
               sum_other / n, sum / n);
    mox_device_release(dev); /* NULL for raw: a no-op */
    return 0;
}
