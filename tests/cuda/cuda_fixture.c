/* tests/cuda/cuda_fixture.c - see cuda_fixture.h. */
#include "cuda_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/abi.h"

static void die(const char *what)
{
    fprintf(stderr, "fixture: %s: %s\n", what, mox__cuda_last_message());
    abort();
}

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* The ABI of kernels.cu, by hand: only what the backend reads. */
static mox_abi_layout f32_layout = {4, 4, MOX_LAYOUT_SCALAR, MOX_SCALAR_F32, NULL, 0, NULL, NULL, 0};
static mox_abi_layout u32_layout = {4, 4, MOX_LAYOUT_SCALAR, MOX_SCALAR_U32, NULL, 0, NULL, NULL, 0};
#define BUF(name, acc) {(char *)name, 0, MOX_PARAM_BUFFER, acc, &f32_layout}
#define VAL(name) {(char *)name, 0, MOX_PARAM_VALUE, MOX_PARAM_READ, &u32_layout}
static mox_abi_param p_scale[] = {BUF("in", MOX_PARAM_READ), BUF("out", MOX_PARAM_WRITE), VAL("n")};
static mox_abi_param p_finish[] = {BUF("in", MOX_PARAM_READ), BUF("out", MOX_PARAM_WRITE), VAL("n")};
static mox_abi_param p_fail[] = {BUF("out", MOX_PARAM_WRITE), VAL("code"), VAL("spin")};
static mox_abi_param p_fault[] = {BUF("out", MOX_PARAM_WRITE), VAL("n")};
static mox_abi_param p_spin[] = {BUF("out", MOX_PARAM_WRITE), VAL("slot"), VAL("cycles")};
static mox_abi_kernel test_kernels[FX_KERNELS] = {
    {(char *)"bt_scale", p_scale, 3, true, {256, 1, 1}, 0},
    {(char *)"bt_finish", p_finish, 3, false, {0, 0, 0}, 0},
    {(char *)"bt_maybe_fail", p_fail, 3, false, {0, 0, 0}, MOX_KFEAT_FAIL},
    {(char *)"bt_fault", p_fault, 2, false, {0, 0, 0}, 0},
    {(char *)"bt_spin", p_spin, 3, false, {0, 0, 0}, 0},
    {(char *)"bt_defer_finish", p_finish, 3, false, {0, 0, 0}, MOX_KFEAT_GATE_DEFERRED},
    {(char *)"bt_defer_asks", p_finish, 3, false, {0, 0, 0}, 0},
};
static mox_abi test_abi = {1, 0, test_kernels, FX_KERNELS};

static void on_complete(mox__submission *pub, mox_error *error)
{
    fx_sub *s = (fx_sub *)pub;
    pthread_mutex_lock(&s->m);
    s->status = error ? mox_error_code(error) : MOX_OK;
    snprintf(s->message, sizeof s->message, "%s", error ? mox_error_message(error) : "");
    s->done = true;
    pthread_cond_broadcast(&s->c);
    pthread_mutex_unlock(&s->m);
    mox_error_release(error);
}

void fx_open(fx *f)
{
    memset(f, 0, sizeof *f);
    mox__test_complete_hook = on_complete;
    mox__backend_config cfg = {.context_id = 1, .ordinal = -1};
    mox_error *err = mox__cuda_backend_open(&cfg, &f->backend, &f->info);
    if (err && mox_error_code(err) == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skipped: %s\n", mox_error_message(err));
        mox_error_release(err);
        exit(FX_SKIP);
    }
    if (err) {
        fprintf(stderr, "fixture: opening the backend: %s\n", mox_error_message(err));
        abort();
    }
    for (uint32_t q = 0; q < MOX__CUDA_STREAMS; q++) {
        f->sems[q].owner = f->backend;
        f->sems[q].queue = q;
    }
    if (f->info.submission_state_size > sizeof(((fx_sub *)0)->be) ||
        f->info.dispatch_state_size > sizeof(((fx_sub *)0)->dbe[0]))
        die("submission or dispatch state larger than the fixture's");
    f->dev = (mox__cuda_dev *)f->backend;
    f->api = f->dev->api;
    size_t size = 0;
    void *image = read_file(FX_FATBIN_PATH, &size);
    if (!image) {
        fprintf(stderr, "fixture: cannot read %s\n", FX_FATBIN_PATH);
        abort();
    }
    mox__module_image mi = {"cudatest", "tests/cuda", &test_abi, "", image, size};
    void *handle = NULL;
    err = f->backend->vt->module_load(f->backend, &mi, &handle);
    free(image);
    if (err) {
        fprintf(stderr, "fixture: module_load: %s\n", mox_error_message(err));
        abort();
    }
    f->mod = handle;
}

void fx_close(fx *f)
{
    f->backend->vt->module_unload(f->backend, f->mod);
    f->backend->vt->destroy(f->backend);
    memset(f, 0, sizeof *f);
}

mox_error *fx_open_error(const char *var, const char *value)
{
    setenv(var, value, 1);
    mox__backend_config cfg = {.context_id = 1, .ordinal = -1};
    mox__backend *be = NULL;
    mox__backend_info info;
    mox_error *err = mox__cuda_backend_open(&cfg, &be, &info);
    unsetenv(var);
    if (err && mox_error_code(err) == MOX_ERR_DEVICE_UNAVAILABLE) {
        mox_error_release(err);
        exit(FX_SKIP);
    }
    if (be)
        be->vt->destroy(be);
    return err;
}

CUdeviceptr fx_alloc(fx *f, size_t bytes)
{
    void *h = NULL, *a = NULL;
    mox_error *err = f->backend->vt->buffer_alloc(f->backend, bytes, &h, &a);
    if (err) {
        fprintf(stderr, "fixture: buffer_alloc: %s\n", mox_error_message(err));
        abort();
    }
    return (CUdeviceptr)(uintptr_t)a;
}

void fx_free(fx *f, CUdeviceptr p)
{
    f->backend->vt->buffer_free(f->backend, (void *)(uintptr_t)p);
}

void fx_put(fx *f, CUdeviceptr dst, const void *src, size_t bytes)
{
    mox_error *err = f->backend->vt->buffer_upload(f->backend, (void *)(uintptr_t)dst, 0, src, bytes);
    if (err) {
        fprintf(stderr, "fixture: buffer_upload: %s\n", mox_error_message(err));
        abort();
    }
}

void fx_get(fx *f, void *dst, CUdeviceptr src, size_t bytes)
{
    if (mox__cuda_dev_enter(f->dev) != MOX_OK || f->api->cuMemcpyDtoH(dst, src, bytes) != CUDA_SUCCESS)
        die("cuMemcpyDtoH");
}

void fx_sub_init(fx_sub *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->c, NULL);
    s->pub.be = s->be;
    s->pub.dispatches = s->dptr;
    s->pub.preds = s->preds;
    s->pub.succs = s->succs;
    s->pub.gates = s->gates;
    s->pub.waits = s->points;
}

static mox__dispatch *last(fx_sub *s)
{
    return &s->disp[s->pub.count - 1];
}

uint32_t fx_kernel(fx_sub *s, fx *f, uint32_t kernel, uint32_t grid, uint32_t block)
{
    uint32_t i = s->pub.count++;
    mox__dispatch *d = &s->disp[i];
    s->dptr[i] = d;
    d->kind = MOX__CMD_KERNEL;
    d->index = i;
    d->module = f->mod;
    d->kernel = kernel;
    d->kernel_name = test_kernels[kernel].name;
    d->kernel_features = test_kernels[kernel].features;
    d->be = s->dbe[i];
    d->config = mox_launch_config_make(mox_dim3_make(grid, 1, 1), mox_dim3_make(block, 1, 1));
    d->params = s->params[i];
    d->pred_first = s->npreds;
    d->gate_first = s->ngates;
    return i;
}

void fx_ptr(fx_sub *s, CUdeviceptr p)
{
    mox__dispatch *d = last(s);
    uint32_t a = d->param_count++;
    memcpy(&s->store[d->index][a], &p, sizeof p);
    s->params[d->index][a] = &s->store[d->index][a];
}

void fx_u32(fx_sub *s, uint32_t v)
{
    mox__dispatch *d = last(s);
    uint32_t a = d->param_count++;
    memcpy(&s->store[d->index][a], &v, sizeof v);
    s->params[d->index][a] = &s->store[d->index][a];
}

void fx_pred(fx_sub *s, uint32_t from)
{
    s->preds[s->npreds++] = from;
    last(s)->pred_count++;
}

void fx_gate(fx_sub *s, fx_sub *earlier, uint32_t dispatch)
{
    s->gates[s->ngates++] = (mox__gate){&earlier->pub, dispatch};
    last(s)->gate_count++;
    fx_after(s, earlier);
}

void fx_gated_reader(fx_sub *s, fx *f, fx_sub *writer, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c)
{
    fx_sub_init(s);
    fx_kernel(s, f, FX_FINISH, 1, 32);
    fx_ptr(s, a);
    fx_ptr(s, b);
    fx_u32(s, 1);
    fx_gate(s, writer, 0);
    fx_kernel(s, f, FX_FINISH, 1, 32);
    fx_ptr(s, b);
    fx_ptr(s, c);
    fx_u32(s, 1);
    fx_pred(s, 0);
}

uint32_t fx_transfer(fx_sub *s, mox__cmd_kind kind, CUdeviceptr buf, uint64_t offset,
                     uint64_t bytes, void *host)
{
    uint32_t i = s->pub.count++;
    s->pub.transfer_count++; /* as the core counts them (mox__sub_push) */
    mox__dispatch *d = &s->disp[i];
    s->dptr[i] = d;
    d->kind = kind;
    d->index = i;
    d->kernel_name = kind == MOX__CMD_DOWNLOAD ? "(download)" : "(upload)";
    d->buffer = (void *)(uintptr_t)buf;
    d->address = (void *)(uintptr_t)buf;
    d->offset = offset;
    d->bytes = bytes;
    d->host = host;
    d->pred_first = s->npreds;
    d->gate_first = s->ngates;
    return i;
}

uint32_t fx_fill(fx_sub *s, CUdeviceptr buf, uint64_t offset, uint64_t bytes, const void *pattern,
                 uint32_t size)
{
    uint32_t i = fx_transfer(s, MOX__CMD_FILL, buf, offset, bytes, NULL);
    mox__dispatch *d = &s->disp[i];
    d->kernel_name = "(fill)";
    d->be = s->dbe[i];
    mox__fill_operands_set(d, &s->fill[i], pattern, size);
    return i;
}

void *fx_upload_lent(fx_sub *s, fx *f, CUdeviceptr buf, uint64_t offset, uint64_t bytes,
                     const void *src)
{
    uint64_t at = 0;
    void *host = mox__cuda_host_lend(f->dev, (size_t)bytes, &at);
    if (!host || at != (uint64_t)(uintptr_t)host) { /* unified addressing: the same */
        fprintf(stderr, "fx_upload_lent: no pinned memory lent (%p at %#llx)\n", host,
                (unsigned long long)at);
        abort();
    }
    memcpy(host, src, (size_t)bytes);
    uint32_t i = fx_transfer(s, MOX__CMD_UPLOAD, buf, offset, bytes, host);
    mox__dispatch *d = &s->disp[i];
    d->src_address = (void *)(uintptr_t)at;
    mox__copy_operands_set(d, &s->copy[i]);
    return host;
}

void fx_after(fx_sub *s, fx_sub *earlier)
{
    for (uint32_t i = 0; i < s->nafter; i++)
        if (s->after[i] == earlier)
            return;
    s->after[s->nafter++] = earlier;
}

static uint64_t serial;

void fx_submit(fx *f, fx_sub *s)
{
    for (uint32_t i = 0; i < s->pub.count; i++)
        s->disp[i].succ_count = 0;
    for (uint32_t k = 0; k < s->npreds; k++)
        s->disp[s->preds[k]].succ_count++;
    /* succs content is not read by the backend; counts are. */
    uint64_t latest = 0;
    uint32_t q = UINT32_MAX;
    for (uint32_t i = 0; i < s->nafter; i++)
        if (s->after[i]->pub.serial > latest) {
            latest = s->after[i]->pub.serial;
            q = s->after[i]->pub.queue;
        }
    if (q == UINT32_MAX) {
        q = f->next_queue;
        f->next_queue = (q + 1) % MOX__CUDA_STREAMS;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nafter; i++) {
        const mox__submission *e = &s->after[i]->pub;
        if (e->queue == q)
            continue;
        uint32_t k = 0;
        while (k < n && s->points[k].sem != e->signal.sem)
            k++;
        if (k == n)
            s->points[n++] = e->signal;
        else if (e->signal.value > s->points[k].value)
            s->points[k].value = e->signal.value;
    }
    s->pub.queue = q;
    s->pub.wait_count = n;
    s->pub.signal = (mox__sem_point){&f->sems[q], ++f->values[q]};
    s->pub.serial = ++serial;
    f->backend->vt->execute(f->backend, &s->pub);
}

void fx_wait(fx_sub *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    pthread_mutex_lock(&s->m);
    while (!s->done) {
        if (pthread_cond_timedwait(&s->c, &s->m, &ts) == ETIMEDOUT) {
            fprintf(stderr, "fixture: a submission did not complete within 60 s\n");
            abort();
        }
    }
    pthread_mutex_unlock(&s->m);
}

uint32_t fx_state(const fx_sub *s, uint32_t i)
{
    return s->disp[i].state;
}

uint32_t fx_code(const fx_sub *s, uint32_t i)
{
    return s->disp[i].fail_code;
}

void fx_spin_sub(fx_sub *s, fx *f, CUdeviceptr flags, uint32_t slot, uint32_t cycles)
{
    fx_sub_init(s);
    fx_kernel(s, f, FX_SPIN, 1, 32);
    fx_ptr(s, flags);
    fx_u32(s, slot);
    fx_u32(s, cycles);
}

uint64_t fx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
