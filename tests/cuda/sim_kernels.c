/* tests/cuda/sim_kernels.c - the kernels the simulated driver runs: those
 * of tests/cuda/kernels.cu (its deferred ones are in sim_kernels_defer.c),
 * the conformance suite's modules "conf", "conf2" and "mdk", the HAL
 * suite's "halk", the benchmarks' "cudabench" and "mgpu", the pipeline
 * examples' "stages" and the backend's own gated copy
 * (src/cuda/cuda_copy_kernel.cu), written again in C over a 1-D grid
 * (thread i is block * dim + t), with the same gate logic as
 * mox/kernel_cuda.h. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <mox/kernel_abi.h>

#include "sim_cuda.h"


static uint32_t atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}

/* mox__gate_enter of mox/kernel_cuda.h */
static int gate_enter(const mox_gate *g)
{
    if (!g->status)
        return 0;
    for (uint32_t i = 0; i < g->dep_count; i++) {
        if (__atomic_load_n(&g->status[2u * mox_gate_dep(g, i)], __ATOMIC_SEQ_CST) != MOX_DISPATCH_OK) {
            atomic_cas_u32(&g->status[2u * g->self], MOX_DISPATCH_OK, MOX_DISPATCH_GATED);
            return 1;
        }
    }
    return 0;
}

/* mox_fail of mox/kernel_cuda.h */
static void gate_fail(const mox_gate *g, uint32_t code)
{
    if (!g->status)
        return;
    if (atomic_cas_u32(&g->status[2u * g->self], MOX_DISPATCH_OK, MOX_DISPATCH_FAILED) ==
        MOX_DISPATCH_OK) {
        __atomic_store_n(&g->status[2u * g->self + 1u], code, __ATOMIC_SEQ_CST);
        if (g->host_flag)
            __atomic_store_n(g->host_flag, 1u, __ATOMIC_SEQ_CST);
    }
}

static void *arg_ptr(const sim_launch *l, int i)
{
    void *p;
    memcpy(&p, l->args[i], sizeof p);
    return p;
}

static uint32_t arg_u32(const sim_launch *l, int i)
{
    uint32_t v;
    memcpy(&v, l->args[i], sizeof v);
    return v;
}

static uint64_t threads_of(const sim_launch *l)
{
    return (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

static void sim_spin(uint32_t cycles)
{
    /* ~2 GHz clock: cycles / 2000 microseconds. */
    if (cycles >= 2000)
        usleep(cycles / 2000u);
}

static void k_scale(const sim_launch *l)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    if (gate_enter(g))
        return;
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    for (uint64_t i = 0; i < threads_of(l) && i < n; i++)
        out[i] = in[i] * 4.0f + 3.0f;
}

static void k_finish(const sim_launch *l)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    if (gate_enter(g))
        return;
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    for (uint64_t i = 0; i < threads_of(l) && i < n; i++)
        out[i] = in[i] + 1.0f;
}

static void k_maybe_fail(const sim_launch *l)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    if (gate_enter(g))
        return;
    float *out = arg_ptr(l, 1);
    uint32_t code = arg_u32(l, 2);
    sim_spin(arg_u32(l, 3));
    if (code)
        gate_fail(g, code);
    else
        out[0] = 1.0f;
}

static void k_fault(const sim_launch *l)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    if (gate_enter(g))
        return;
    sim_set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
}

static void k_spin(const sim_launch *l)
{
    const mox_gate *g = (const mox_gate *)(const void *)l->args[0];
    if (gate_enter(g))
        return;
    float *out = arg_ptr(l, 1);
    uint32_t slot = arg_u32(l, 2);
    sim_spin(arg_u32(l, 3));
    out[slot] = 1.0f;
}

/* ---- kernels of other modules, so that the core + backend can be run
 * end to end here: the conformance suite's module "conf" and the
 * benchmark's "cudabench" (1-D: thread i of the grid is i = block*dim+t). ---- */

#define GRID_LOOP(l, i) for (uint64_t i = 0; i < threads_of(l); i++)
#define GATE_OR_RETURN(l)                                                       \
    const mox_gate *g = (const mox_gate *)(const void *)(l)->args[0];           \
    if (gate_enter(g))                                                          \
        return

static float arg_f32(const sim_launch *l, int i)
{
    float v;
    memcpy(&v, l->args[i], sizeof v);
    return v;
}

static void c_scale(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    float f = arg_f32(l, 3);
    uint32_t n = arg_u32(l, 4);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] * f;
}

static void c_add(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *a = arg_ptr(l, 1), *b = arg_ptr(l, 2);
    float *out = arg_ptr(l, 3);
    uint32_t n = arg_u32(l, 4);
    GRID_LOOP(l, i) if (i < n) out[i] = a[i] + b[i];
}

static void c_step(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *buf = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    GRID_LOOP(l, i) if (i < n) buf[i] = buf[i] * 2.0f + 1.0f;
}

static void c_fill(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    float v = arg_f32(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = v;
}

static void c_fail_if_negative(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i)
    {
        if (i >= n)
            continue;
        if (in[i] < 0.0f)
            gate_fail(g, (uint32_t)(-in[i]));
        else
            out[i] = in[i] + 1.0f;
    }
}

static void c_slow_copy(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    uint32_t spins = arg_u32(l, 4);
    usleep(spins / 50u < 200000u ? spins / 50u : 200000u);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i];
}

static void c_count(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    uint32_t *counter = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    GRID_LOOP(l, i) if (i < n) __atomic_fetch_add(&counter[0], 1u, __ATOMIC_RELAXED);
}

static void c_iota(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    uint32_t *out = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    GRID_LOOP(l, i) if (i < n) out[i] = (uint32_t)i;
}

/* tests/conformance/kernels/conf2.c */
static void c_tenfold(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] * 10.0f + 1.0f;
}

/* tests/hal/kernels/halk.c */
static void h_fill(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    float v = arg_f32(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = v;
}

static void h_add(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    float v = arg_f32(l, 3);
    uint32_t n = arg_u32(l, 4);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] + v;
}

static void h_fail(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    uint32_t code = arg_u32(l, 2), n = arg_u32(l, 3);
    gate_fail(g, code);
    GRID_LOOP(l, i) if (i < n) out[i] = 1.0f;
}

static void h_slow(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    usleep(arg_u32(l, 4) / 100u < 200000u ? arg_u32(l, 4) / 100u : 200000u);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i];
}

static void c_fixed64(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    GRID_LOOP(l, i) if (i < n) out[i] = (float)l->block[0];
}

static void b_scale_256(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] * 4.0f + 3.0f;
}

static void b_finish_256(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] + 1.0f;
}

/* examples/pipeline/kernels/stages.c (scale_256 is the benchmark's below:
 * the same affine map) */
static void e_scale_128(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] * 2.0f + 3.0f;
}

static void e_finish(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3);
    GRID_LOOP(l, i) if (i < n) out[i] = in[i] * 5.0f + 7.0f;
}

/* bench/kernels/multi_gpu.c */
static void g_stage(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const float *in = arg_ptr(l, 1);
    float *out = arg_ptr(l, 2);
    uint32_t n = arg_u32(l, 3), iters = arg_u32(l, 4);
    GRID_LOOP(l, i)
    {
        if (i >= n)
            continue;
        float x = in[i];
        for (uint32_t k = 0; k < iters; k++)
            x = x * 0.999f + 0.5f;
        out[i] = x;
    }
}

static void g_maybe_fail(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    if (arg_u32(l, 3))
        gate_fail(g, 1);
    GRID_LOOP(l, i) if (i < n) out[i] = (float)i;
}

static void g_fill(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    uint32_t n = arg_u32(l, 2);
    GRID_LOOP(l, i) if (i < n) out[i] = (float)i;
}

/* tests/conformance/kernels/mdk.c: a wild write faults the device. */
static void c_wild_write(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    sim_set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* src/cuda/cuda_copy_kernel.cu: the whole range, whatever the grid (the
 * real kernel strides over it). Memory of another context without peer
 * access faults, as on a GPU, and so does host memory that is not pinned
 * (an upload's source must be the memory the backend lent). */
static void x_copy_gated(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    const unsigned char *src = arg_ptr(l, 1);
    unsigned char *dst = arg_ptr(l, 2);
    uint64_t bytes;
    memcpy(&bytes, l->args[3], sizeof bytes);
    CUcontext c = sim_kernel_ctx();
    if (!sim_can_touch(c, src) || !sim_can_touch(c, dst) || !sim_device_mem(dst) ||
        (!sim_device_mem(src) && !sim_host_pinned(src, (size_t)bytes))) {
        sim_set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
        return;
    }
    memcpy(dst, src, bytes);
}

/* src/cuda/cuda_copy_kernel.cu's fill: dst[0, bytes) set to the pattern's
 * first `size` bytes repeated. */
static void x_fill_gated(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    unsigned char *dst = arg_ptr(l, 1);
    uint64_t bytes;
    memcpy(&bytes, l->args[2], sizeof bytes);
    const unsigned char *pattern = l->args[3];
    uint32_t size = arg_u32(l, 4);
    if (!sim_can_touch(sim_kernel_ctx(), dst) || size == 0 || size > 128 || bytes % size) {
        sim_set_sticky(CUDA_ERROR_ILLEGAL_ADDRESS);
        return;
    }
    for (uint64_t k = 0; k < bytes; k++)
        dst[k] = pattern[k % size];
}

static void b_busy(const sim_launch *l)
{
    GATE_OR_RETURN(l);
    float *out = arg_ptr(l, 1);
    uint32_t slot = arg_u32(l, 2);
    usleep(arg_u32(l, 3) / 1000u);
    out[slot] = 1.0f;
}

#define GATE_SIZE ((uint32_t)sizeof(mox_gate))
struct CUfunc_st sim_funcs[] = {
    /* tests/cuda/kernels.cu */
    {"mox_entry_bt_scale", 4, {GATE_SIZE, 8, 8, 4}, k_scale, false},
    {"mox_entry_bt_finish", 4, {GATE_SIZE, 8, 8, 4}, k_finish, false},
    {"mox_entry_bt_maybe_fail", 4, {GATE_SIZE, 8, 4, 4}, k_maybe_fail, false},
    {"mox_entry_bt_fault", 3, {GATE_SIZE, 8, 4}, k_fault, false},
    {"mox_entry_bt_spin", 4, {GATE_SIZE, 8, 4, 4}, k_spin, false},
    {"mox_entry_bt_defer_finish", 4, {GATE_SIZE, 8, 8, 4}, sim_defer_finish, false},
    {"mox_entry_bt_defer_asks", 4, {GATE_SIZE, 8, 8, 4}, sim_defer_asks, false},
    /* tests/conformance/kernels/conf.c */
    {"mox_entry_scale", 5, {GATE_SIZE, 8, 8, 4, 4}, c_scale, false},
    {"mox_entry_add", 5, {GATE_SIZE, 8, 8, 8, 4}, c_add, false},
    {"mox_entry_step", 3, {GATE_SIZE, 8, 4}, c_step, false},
    {"mox_entry_fill", 4, {GATE_SIZE, 8, 4, 4}, c_fill, false},
    {"mox_entry_fail_if_negative", 4, {GATE_SIZE, 8, 8, 4}, c_fail_if_negative, false},
    {"mox_entry_slow_copy", 5, {GATE_SIZE, 8, 8, 4, 4}, c_slow_copy, false},
    {"mox_entry_count", 3, {GATE_SIZE, 8, 4}, c_count, false},
    {"mox_entry_iota", 3, {GATE_SIZE, 8, 4}, c_iota, false},
    {"mox_entry_fixed64", 3, {GATE_SIZE, 8, 4}, c_fixed64, false},
    {"mox_entry_tenfold", 4, {GATE_SIZE, 8, 8, 4}, c_tenfold, false},
    /* tests/conformance/kernels/mdefer.c (deferred, MOX_KFEAT_GATE_DEFERRED) */
    {"mox_entry_defer_inc", 4, {GATE_SIZE, 8, 8, 4}, sim_defer_finish, false},
    /* tests/conformance/kernels/mdk.c */
    {"mox_entry_wild_write", 3, {GATE_SIZE, 8, 4}, c_wild_write, false},
    /* examples/pipeline/kernels/stages.c */
    {"mox_entry_scale_128", 4, {GATE_SIZE, 8, 8, 4}, e_scale_128, false},
    {"mox_entry_finish", 4, {GATE_SIZE, 8, 8, 4}, e_finish, false},
    /* bench/kernels/multi_gpu.c */
    {"mox_entry_mg_stage", 5, {GATE_SIZE, 8, 8, 4, 4}, g_stage, false},
    {"mox_entry_mg_maybe_fail", 4, {GATE_SIZE, 8, 4, 4}, g_maybe_fail, false},
    {"mox_entry_mg_fill", 3, {GATE_SIZE, 8, 4}, g_fill, false},
    /* src/cuda/cuda_copy_kernel.cu */
    {"mox__copy_gated", 4, {GATE_SIZE, 8, 8, 8}, x_copy_gated, false},
    {"mox__fill_gated", 5, {GATE_SIZE, 8, 8, 128, 4}, x_fill_gated, false},
    /* tests/hal/kernels/halk.c */
    {"mox_entry_hal_fill", 4, {GATE_SIZE, 8, 4, 4}, h_fill, false},
    {"mox_entry_hal_add", 5, {GATE_SIZE, 8, 8, 4, 4}, h_add, false},
    {"mox_entry_hal_fail", 4, {GATE_SIZE, 8, 4, 4}, h_fail, false},
    {"mox_entry_hal_slow", 5, {GATE_SIZE, 8, 8, 4, 4}, h_slow, false},
    /* bench/kernels/cuda_bench.c */
    {"mox_entry_scale_256", 4, {GATE_SIZE, 8, 8, 4}, b_scale_256, false},
    {"mox_entry_finish_256", 4, {GATE_SIZE, 8, 8, 4}, b_finish_256, false},
    {"mox_entry_busy", 4, {GATE_SIZE, 8, 4, 4}, b_busy, false},
};

const size_t sim_func_count = sizeof sim_funcs / sizeof sim_funcs[0];

struct CUfunc_st sim_ungated_funcs[sizeof sim_funcs / sizeof sim_funcs[0]];

__attribute__((constructor)) static void make_ungated_funcs(void)
{
    for (size_t i = 0; i < sim_func_count; i++) {
        sim_ungated_funcs[i] = sim_funcs[i];
        sim_ungated_funcs[i].ungated = true;
    }
}
