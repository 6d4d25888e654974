/* tests/cuda/kernels.cu - kernels for the CUDA backend's own tests, written
 * the way moxc writes kernels_cuda.cu (a gated entry mox_entry_<name> per
 * kernel, gate first; for some also mox_entry_<name>__ungated), so the
 * backend can be tested on its own. Built with
 * nvcc into kernels.fatbin (sm_90 SASS + PTX). */
#include <mox/kernel.h>

/* out[i] = in[i] * 4 + 3 */
static __device__ void bt_scale(const float *in, float *out, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __fadd_rn(__fmul_rn(in[i], 4.0f), 3.0f);
}

/* out[i] = in[i] + 1 */
static __device__ void bt_finish(const float *in, float *out, uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = __fadd_rn(in[i], 1.0f);
}

/* Spins for `cycles` of a 2 GHz clock (cycles / 2 ns), on the GPU's global
 * nanosecond timer: clock64 counts the cycles of the SM the block runs on,
 * and a block that the GPU preempts (another process's time slice) and
 * resumes on another SM can see that count far behind its start, which
 * once kept a 100 ms spin going past the test's 60 s limit (H200, ctest -j
 * with other GPU tests). */
static __device__ void bt_spin_ns(uint32_t cycles)
{
    unsigned long long start, now, ns = cycles / 2u;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

/* Fails with `code` when code != 0, after spinning for `spin` cycles
 * (bt_spin_ns; so that later batches find it still running); writes
 * out[0] = 1 when it does not fail. */
static __device__ void bt_maybe_fail(float *out, uint32_t code, uint32_t spin)
{
    if (spin)
        bt_spin_ns(spin);
    if (code)
        mox_fail(code);
    else if (blockIdx.x == 0 && threadIdx.x == 0)
        out[0] = 1.0f;
}

/* The three above get both entries moxc writes: gated, and without the
 * gate check (MOX_ENTRY_UNGATED_SUFFIX) for launches no failure can reach;
 * both start with the wait for programmatic dependencies. */
#define BT_ENTRIES(bounds, name, publish, params, args)                                           \
    extern "C" __global__ void bounds mox_entry_##name(mox_gate g, MOX__EXPAND params)           \
    {                                                                                             \
        if (mox__gate_enter(&g))                                                                  \
            return;                                                                               \
        publish;                                                                                  \
        name args;                                                                                \
        mox__gate_leave(&g);                                                                      \
    }                                                                                             \
    extern "C" __global__ void bounds mox_entry_##name##__ungated(mox_gate g, MOX__EXPAND params) \
    {                                                                                             \
        mox__grid_dependency_wait();                                                              \
        publish;                                                                                  \
        name args;                                                                                \
        mox__gate_leave(&g);                                                                      \
    }
#define MOX__EXPAND(...) __VA_ARGS__

BT_ENTRIES(__launch_bounds__(256), bt_scale, (void)0, (const float *in, float *out, uint32_t n), (in, out, n))
BT_ENTRIES(, bt_finish, (void)0, (const float *in, float *out, uint32_t n), (in, out, n))
BT_ENTRIES(, bt_maybe_fail, MOX__GATE_PUBLISH(&g), (float *out, uint32_t code, uint32_t spin), (out, code, spin))

/* Writes through a wild pointer: a sticky CUDA_ERROR_ILLEGAL_ADDRESS. */
extern "C" __global__ void mox_entry_bt_fault(mox_gate g, float *out, uint32_t n)
{
    if (mox__gate_enter(&g))
        return;
    float *wild = (float *)(uintptr_t)0x10ull;
    wild[threadIdx.x + n] = 1.0f;
    out[0] = 2.0f;
    mox__gate_leave(&g);
}

/* Spins for `cycles` (bt_spin_ns), then stores 1 at out[slot] (overlap
 * measurements). */
extern "C" __global__ void mox_entry_bt_spin(mox_gate g, float *out, uint32_t slot, uint32_t cycles)
{
    if (mox__gate_enter(&g))
        return;
    bt_spin_ns(cycles);
    if (threadIdx.x == 0)
        out[slot] = 1.0f;
    mox__gate_leave(&g);
}

/* bt_finish as moxc's deferred copy of it (MOXC_GATE_DEFER=1): the store
 * is guarded, the value computed (its load issued) before the gate is
 * asked. */
static __device__ void bt_defer_finish__mox_deferred(mox__gate_view *mox__g, const float *in, float *out,
                                                     uint32_t n)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __fadd_rn(in[i], 1.0f);
        if (!mox__gate_bad(mox__g))
            out[i] = v;
    }
}

/* Its gated entries as moxc writes them: for a kernel with
 * MOX_KFEAT_GATE_DEFERRED (bt_defer_finish: nothing asked at the end, the
 * runtime derives the state of a launch that stored nothing), and as an
 * entry of a module without the bit (bt_defer_asks: thread 0 of each block
 * that asked nothing asks at the end). */
#define BT_DEFERRED_ENTRY(name, features)                                                       \
    extern "C" __global__ void mox_entry_##name(mox_gate g, const float *in, float *out, uint32_t n) \
    {                                                                                           \
        mox__grid_dependency_wait();                                                            \
        mox__gate_view gv = mox__gate_view_of(&g);                                              \
        bt_defer_finish__mox_deferred(&gv, in, out, n);                                         \
        mox__gate_leave_deferred(&gv, features);                                                \
        mox__gate_leave(&g);                                                                    \
    }
BT_DEFERRED_ENTRY(bt_defer_finish, MOX_KFEAT_GATE_DEFERRED)
BT_DEFERRED_ENTRY(bt_defer_asks, 0u)
