/* runner_fakecuda.h - what the files of the stand-in CUDA driver
 * libmox_bench_fakecuda.so share (the driver API is in runner_fakecuda.c):
 * a kernel computed in C from its launch geometry and parameters, found
 * by name among the quality suite's (runner_fakecuda_kernels.c) and the
 * workloads suite's (runner_fakecuda_ports.c). */
#ifndef MOX_BENCH_RUNNER_FAKECUDA_H
#define MOX_BENCH_RUNNER_FAKECUDA_H

#define API __attribute__((visibility("default")))

/* params as cuLaunchKernel gets them, without a generated entry's gate. */
typedef void (*fake_kernel)(void **p, unsigned gx, unsigned gy, unsigned bx, unsigned by);

/* The quality suite's kernel named base (ref_<base> and mox_entry_<base>
 * both run it); NULL when there is none. */
fake_kernel fake_quality_kernel(const char *base);
/* MOX_FAKECUDA_BREAK: after a run of the generated vec_add (run), turns
 * one bit of out[0] wrong so the runner must see the mismatch; nothing for
 * another kernel. */
void fake_quality_break(fake_kernel run, void **params);

/* The workloads suite's kernels by their full symbol: *gated when it is a
 * generated entry (its first parameter is the gate). NULL when unknown. */
fake_kernel fake_port_kernel(const char *name, int *gated);

#endif
