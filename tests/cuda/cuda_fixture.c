/* tests/cuda/cuda_fixture.c - see cuda_fixture.h. */
#include "cuda_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void fx_open(fx *f)
{
    memset(f, 0, sizeof *f);
    mox_status st = mox__cuda_dev_open(0, &f->dev);
    if (st == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skipped: %s\n", mox__cuda_last_message());
        exit(FX_SKIP);
    }
    if (st != MOX_OK)
        die("mox__cuda_dev_open");
    f->api = f->dev->api;
    size_t size = 0;
    void *image = read_file(FX_FATBIN_PATH, &size);
    if (!image) {
        fprintf(stderr, "fixture: cannot read %s\n", FX_FATBIN_PATH);
        abort();
    }
    static const char *const names[] = {"scale", "finish", "maybe_fail", "fault", "spin"};
    static const uint32_t required[] = {256, 0, 0, 0, 0};
    st = mox__cuda_module_load(f->dev, image, size, names, required, 5, &f->mod);
    free(image);
    if (st != MOX_OK)
        die("mox__cuda_module_load");
    f->scale = &f->mod->kernels[0];
    f->finish = &f->mod->kernels[1];
    f->maybe_fail = &f->mod->kernels[2];
    f->fault = &f->mod->kernels[3];
    f->spin = &f->mod->kernels[4];
}

void fx_close(fx *f)
{
    mox__cuda_module_unload(f->mod);
    mox__cuda_dev_close(f->dev);
    memset(f, 0, sizeof *f);
}

CUdeviceptr fx_alloc(fx *f, size_t bytes)
{
    CUdeviceptr p = 0;
    if (mox__cuda_dev_enter(f->dev) != MOX_OK || f->api->cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
        die("cuMemAlloc");
    return p;
}

void fx_free(fx *f, CUdeviceptr p)
{
    mox__cuda_dev_enter(f->dev);
    f->api->cuMemFree(p);
}

void fx_upload(fx *f, CUdeviceptr dst, const void *src, size_t bytes)
{
    if (mox__cuda_dev_enter(f->dev) != MOX_OK || f->api->cuMemcpyHtoD(dst, src, bytes) != CUDA_SUCCESS)
        die("cuMemcpyHtoD");
}

void fx_download(fx *f, void *dst, CUdeviceptr src, size_t bytes)
{
    if (mox__cuda_dev_enter(f->dev) != MOX_OK || f->api->cuMemcpyDtoH(dst, src, bytes) != CUDA_SUCCESS)
        die("cuMemcpyDtoH");
}

void fx_set(fx_disp *x, const mox__cuda_kernel *k, uint32_t grid, uint32_t block)
{
    memset(x, 0, sizeof *x);
    x->d.kernel = k;
    x->d.grid[0] = grid;
    x->d.grid[1] = x->d.grid[2] = 1;
    x->d.block[0] = block;
    x->d.block[1] = x->d.block[2] = 1;
    x->d.args = x->argp;
    x->d.arg_sizes = x->sizes;
    x->d.deps = x->deps;
    x->d.ext = x->ext;
}

void fx_ptr(fx_disp *x, CUdeviceptr p)
{
    uint32_t i = x->d.arg_count++;
    memcpy(&x->store[i], &p, sizeof p);
    x->argp[i] = &x->store[i];
    x->sizes[i] = sizeof p;
}

void fx_u32(fx_disp *x, uint32_t v)
{
    uint32_t i = x->d.arg_count++;
    memcpy(&x->store[i], &v, sizeof v);
    x->argp[i] = &x->store[i];
    x->sizes[i] = sizeof v;
}

void fx_dep(fx_disp *x, uint32_t dispatch)
{
    x->deps[x->d.dep_count++] = dispatch;
}

void fx_ext(fx_disp *x, mox__cuda_sub *sub, uint32_t dispatch)
{
    x->ext[x->d.ext_count].sub = sub;
    x->ext[x->d.ext_count].dispatch = dispatch;
    x->d.ext_count++;
}

void fx_wait_init(fx_wait *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->m, NULL);
    pthread_cond_init(&w->c, NULL);
}

static void on_done(void *ctx, mox__cuda_sub *sub, const mox__cuda_outcome *o)
{
    (void)sub;
    fx_wait *w = ctx;
    pthread_mutex_lock(&w->m);
    w->status = o->status;
    w->count = o->count;
    for (uint32_t i = 0; i < o->count && i < 64; i++) {
        w->states[i] = o->states ? o->states[i] : MOX_DISPATCH_OK;
        w->codes[i] = o->codes ? o->codes[i] : 0;
    }
    w->done = true;
    pthread_cond_broadcast(&w->c);
    pthread_mutex_unlock(&w->m);
}

void fx_wait_for(fx_wait *w)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    pthread_mutex_lock(&w->m);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->c, &w->m, &ts) == ETIMEDOUT) {
            fprintf(stderr, "fixture: a submission did not complete within 60 s\n");
            abort();
        }
    }
    pthread_mutex_unlock(&w->m);
}

mox_status fx_submit(fx *f, fx_disp *disp, uint32_t n, mox__cuda_sub **waits, uint32_t nwaits,
                     fx_wait *w, mox__cuda_sub **sub)
{
    mox__cuda_dispatch d[16];
    for (uint32_t i = 0; i < n; i++)
        d[i] = disp[i].d;
    mox__cuda_batch b = {n, d, nwaits, waits};
    mox__cuda_sub *s = NULL;
    fx_wait_init(w);
    mox_status st = mox__cuda_submit(f->dev, &b, on_done, w, &s);
    if (sub)
        *sub = s;
    else if (s)
        mox__cuda_sub_release(s);
    return st;
}
