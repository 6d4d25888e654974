/* tests/cuda/test_cuda_commands.c - fills and uploads among kernels as
 * nodes of cached CUDA graphs (backend only, through the backend's
 * vtable): the first launch of such a shape goes on the stream and loads
 * the backend's copy and fill kernels, the later ones are graphs whose
 * fill or upload node runs them, patched where the operands changed;
 * uploads from memory the backend lent (hal.h) past
 * MOX_CUDA_UPLOAD_NODE_KIB keep the stream; a driver that refuses the
 * kernels' PTX is asked once. Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_fixture.h"

#define N 1000u

static fx F;
static CUdeviceptr tmp, out;

static unsigned long long stat(atomic_ullong *c)
{
    return atomic_load(c);
}

static int setup(void **state)
{
    (void)state;
    fx_open(&F);
    tmp = fx_alloc(&F, N * 4);
    out = fx_alloc(&F, N * 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fx_free(&F, tmp);
    fx_free(&F, out);
    fx_close(&F);
    return 0;
}

static void run_and_wait(fx_sub *s)
{
    fx_submit(&F, s);
    fx_wait(s);
    assert_int_equal(s->status, MOX_OK);
    for (uint32_t i = 0; i < s->pub.count; i++)
        assert_int_equal(fx_state(s, i), MOX_DISPATCH_OK);
}

/* fill tmp with v, finish tmp -> out (out = v + 1) */
static void fill_then_finish(fx_sub *s, float v)
{
    fx_sub_init(s);
    fx_fill(s, tmp, 0, N * 4, &v, sizeof v);
    fx_kernel(s, &F, FX_FINISH, (N + 127) / 128, 128);
    fx_ptr(s, tmp);
    fx_ptr(s, out);
    fx_u32(s, N);
    fx_pred(s, 0);
}

static void check_filled_with(const float *v)
{
    float got[N];
    fx_get(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != v[i] + 1.0f)
            fail_msg("out[%u] = %g, want %g", i, (double)got[i], (double)(v[i] + 1.0f));
}

static void check_filled(float v)
{
    float got[N];
    fx_get(&F, got, out, sizeof got);
    for (uint32_t i = 0; i < N; i++)
        if (got[i] != v + 1.0f)
            fail_msg("out[%u] = %g, want %g", i, (double)got[i], (double)(v + 1.0f));
}

/* A fill among kernels: the first such launch goes on the stream (a
 * memset) and loads the backend's fill kernel; from then on the shape is a
 * graph whose fill node runs that kernel, re-used with new parameters for
 * a new value (hal.h, "Operands of copies and fills"). */
static void fills_become_graph_nodes(void **state)
{
    (void)state;
    if (F.dev->mode == MOX__CUDA_LAUNCH_STREAM)
        skip(); /* every launch on the stream */
    fx_sub s;
    fill_then_finish(&s, 2.5f);
    unsigned long long g0 = stat(&F.dev->stats.graph_launches);
    run_and_wait(&s);
    check_filled(2.5f);
    assert_int_equal(stat(&F.dev->stats.graph_launches), g0); /* the stream: it loads the kernel */
    fill_then_finish(&s, 4.0f);
    run_and_wait(&s);
    check_filled(4.0f);
    assert_int_equal(stat(&F.dev->stats.graph_launches), g0 + 1);
    unsigned long long inst0 = stat(&F.dev->stats.instantiations);
    unsigned long long upd0 = stat(&F.dev->stats.node_updates);
    fill_then_finish(&s, -7.0f);
    run_and_wait(&s);
    check_filled(-7.0f);
    assert_int_equal(stat(&F.dev->stats.graph_launches), g0 + 2);
    assert_int_equal(stat(&F.dev->stats.instantiations), inst0);
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 1); /* the fill's value alone */
}

/* An upload from memory the backend lent (as mox_buffer_upload makes
 * them, hal.h) among kernels: the first launch of the shape goes on the
 * stream (a copy straight from that memory, no staging) and loads the
 * backend's copy kernel; from then on the shape is a graph whose upload
 * node is that kernel reading the lent memory in place, updated when the
 * memory moves. The simulated copy kernel faults on host memory that is
 * not pinned, as a GPU does. Past MOX_CUDA_UPLOAD_NODE_KIB an upload
 * keeps the stream, whatever its size in one plan. A lost device lends
 * no memory. */
static void lent_uploads_become_graph_nodes(void **state)
{
    (void)state;
    if (F.dev->mode == MOX__CUDA_LAUNCH_STREAM)
        skip(); /* every launch on the stream */
    mox__cuda_copy_unload(F.dev); /* as on a device that never loaded them */
    unsigned long long g0 = stat(&F.dev->stats.graph_launches);
    unsigned long long upd0 = 0;
    void *held = NULL;
    for (int round = 0; round < 4; round++) {
        float up[N];
        for (uint32_t i = 0; i < N; i++)
            up[i] = (float)i * 0.25f + (float)round;
        fx_sub s;
        fx_sub_init(&s);
        void *host = fx_upload_lent(&s, &F, tmp, 0, sizeof up, up);
        fx_kernel(&s, &F, FX_FINISH, (N + 127) / 128, 128);
        fx_ptr(&s, tmp);
        fx_ptr(&s, out);
        fx_u32(&s, N);
        fx_pred(&s, 0);
        if (round == 2)
            upd0 = stat(&F.dev->stats.node_updates);
        run_and_wait(&s);
        /* round 3 uploads from other memory than round 2 (held back) */
        if (round == 2)
            held = host;
        else
            mox__cuda_host_return(F.dev, host);
        float got[N];
        fx_get(&F, got, out, sizeof got);
        for (uint32_t i = 0; i < N; i++)
            if (got[i] != up[i] + 1.0f)
                fail_msg("round %d: out[%u] = %g, want %g", round, i, (double)got[i],
                         (double)(up[i] + 1.0f));
        assert_int_equal(stat(&F.dev->stats.graph_launches), g0 + (unsigned)(round > 0 ? round : 0));
    }
    assert_int_equal(stat(&F.dev->stats.node_updates), upd0 + 1); /* the upload's source alone */
    mox__cuda_host_return(F.dev, held);
    /* larger than the limit: the stream, a copy straight from the memory;
     * uploads of other sizes (other command shapes) there share the stream
     * launch's plan */
    enum { BIG = 16u * N };
    uint64_t limit = F.dev->upload_node_max;
    F.dev->upload_node_max = sizeof(float) * N / 2;
    float *big = malloc(BIG * sizeof *big);
    assert_non_null(big);
    for (uint32_t i = 0; i < BIG; i++)
        big[i] = -(float)i;
    CUdeviceptr bigbuf = fx_alloc(&F, BIG * sizeof *big);
    unsigned long long g1 = stat(&F.dev->stats.graph_launches), plans1 = 0;
    for (uint32_t k = 0; k < 3; k++) {
        fx_sub s;
        fx_sub_init(&s);
        void *host = fx_upload_lent(&s, &F, bigbuf, 0, (BIG - 4u * N * k) * sizeof *big, big);
        fx_kernel(&s, &F, FX_FINISH, (N + 127) / 128, 128);
        fx_ptr(&s, bigbuf);
        fx_ptr(&s, out);
        fx_u32(&s, N);
        fx_pred(&s, 0);
        run_and_wait(&s);
        mox__cuda_host_return(F.dev, host);
        if (k == 0)
            plans1 = stat(&F.dev->stats.plans);
    }
    F.dev->upload_node_max = limit;
    assert_int_equal(stat(&F.dev->stats.graph_launches), g1);
    assert_int_equal(stat(&F.dev->stats.plans), plans1);
    check_filled_with(big);
    fx_free(&F, bigbuf);
    free(big);
    /* a lost device lends nothing (its pool may be gone with its context) */
    atomic_store(&F.dev->lost, true);
    uint64_t at = 1;
    assert_null(mox__cuda_host_lend(F.dev, 64, &at));
    assert_int_equal(at, 0);
    atomic_store(&F.dev->lost, false);
}

/* A driver that cannot JIT the backend's copy and fill kernels (one too
 * old for their PTX version: the simulated driver with MOX_SIM_PTX=refuse)
 * is asked once per device: batches with a fill still run, on the stream
 * (a memset), and a fill only the kernel can do fails with the reason,
 * remembered, without a second JIT. */
static void refused_builtin_kernels_are_asked_once(void **state)
{
    (void)state;
    if (strncmp(F.dev->name, "Simulated", 9) != 0)
        skip(); /* a real driver JITs the PTX */
    mox__cuda_copy_unload(F.dev); /* as on a device that never loaded them */
    setenv("MOX_SIM_PTX", "refuse", 1);
    unsigned long long loads0 = stat(&F.dev->stats.builtin_loads);
    unsigned long long g0 = stat(&F.dev->stats.graph_launches);
    for (int i = 0; i < 3; i++) {
        fx_sub s;
        fill_then_finish(&s, (float)i);
        run_and_wait(&s);
        check_filled((float)i);
    }
    assert_int_equal(stat(&F.dev->stats.builtin_loads), loads0 + 1);
    assert_int_equal(stat(&F.dev->stats.graph_launches), g0); /* no fill kernel: the stream */
    for (int i = 0; i < 2; i++) {
        fx_sub s;
        fx_sub_init(&s);
        const double pattern = 1.5; /* repeats every 8 bytes: no memset */
        fx_fill(&s, tmp, 0, N * 4, &pattern, sizeof pattern);
        fx_submit(&F, &s);
        fx_wait(&s);
        assert_int_equal(s.status, MOX_ERR_MODULE_LOAD);
        assert_non_null(strstr(s.message, "cuModuleLoadData: CUDA_ERROR_UNSUPPORTED_PTX_VERSION"));
        assert_non_null(strstr(s.message, "(failed before; not tried again)"));
    }
    assert_int_equal(stat(&F.dev->stats.builtin_loads), loads0 + 1);
    unsetenv("MOX_SIM_PTX");
    F.dev->builtins_failure = MOX_OK; /* the later tests load them */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fills_become_graph_nodes),
        cmocka_unit_test(lent_uploads_become_graph_nodes),
        cmocka_unit_test(refused_builtin_kernels_are_asked_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
