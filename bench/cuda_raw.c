/* cuda_raw.c - see cuda_raw.h. */
#define _GNU_SOURCE
#include "cuda_raw.h"

#include <string.h>

const mox__cuda_api *cu;

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

void raw_open(raw *r, const char *artifact_dir)
{
    const char *why = NULL;
    cu = mox__cuda_api_get(&why);
    if (!cu) {
        printf("skipped: %s\n", why);
        exit(77);
    }
    CUdevice dev;
    CHECK_CU(cu->cuDeviceGet(&dev, 0));
    CHECK_CU(cu->cuDevicePrimaryCtxRetain(&r->ctx, dev));
    CHECK_CU(cu->cuCtxSetCurrent(r->ctx));
    /* The artifact the bindings use: $MOX_ARTIFACT_CUDABENCH, else the
     * recorded directory, else $MOX_ARTIFACT_ROOT/<its basename>. */
    char path[4096];
    const char *dir = getenv("MOX_ARTIFACT_CUDABENCH");
    if (!dir || !dir[0])
        dir = artifact_dir;
    snprintf(path, sizeof path, "%s/kernels.fatbin", dir);
    size_t size = 0;
    void *image = read_file(path, &size);
    const char *root = getenv("MOX_ARTIFACT_ROOT");
    if (!image && root) {
        const char *base = strrchr(artifact_dir, '/');
        snprintf(path, sizeof path, "%s/%s/kernels.fatbin", root,
                 base ? base + 1 : artifact_dir);
        image = read_file(path, &size);
    }
    if (!image) {
        fprintf(stderr, "cannot read the cudabench fatbin (%s)\n", path);
        exit(1);
    }
    CHECK_CU(cu->cuModuleLoadData(&r->mod, image));
    free(image);
    CHECK_CU(cu->cuModuleGetFunction(&r->scale, r->mod, "mox_entry_scale_256"));
    CHECK_CU(cu->cuModuleGetFunction(&r->finish, r->mod, "mox_entry_finish_256"));
    CHECK_CU(cu->cuModuleGetFunction(&r->busy, r->mod, "mox_entry_busy"));
    CHECK_CU(cu->cuStreamCreate(&r->stream, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 8; i++)
        CHECK_CU(cu->cuStreamCreate(&r->side[i], CU_STREAM_NON_BLOCKING));
    CHECK_CU(cu->cuEventCreate(&r->t0, CU_EVENT_DEFAULT));
    CHECK_CU(cu->cuEventCreate(&r->t1, CU_EVENT_DEFAULT));
}

void stage_args_init(stage_args *a, CUdeviceptr in, CUdeviceptr out, uint32_t n)
{
    memset(a, 0, sizeof *a);
    a->in = in;
    a->out = out;
    a->n = n;
    a->p[0] = &a->gate;
    a->p[1] = &a->in;
    a->p[2] = &a->out;
    a->p[3] = &a->n;
}

void raw_launch(CUfunction f, uint32_t n, CUstream s, stage_args *a)
{
    CHECK_CU(cu->cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, a->p, NULL));
}

float raw_elapsed_ms(raw *r)
{
    float ms = 0.0f;
    CHECK_CU(cu->cuEventSynchronize(r->t1));
    CHECK_CU(cu->cuEventElapsedTime(&ms, r->t0, r->t1));
    return ms;
}

