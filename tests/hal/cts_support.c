/* cts_support.c - see cts.h. Also the core's side of the boundary for this
 * suite: mox__execution_complete records the completion (after raising the
 * semaphore, as the core does), mox__thread_mark_runtime does nothing, and
 * mox__trace_wake (core/sync.c's trace of a waker cell, which only the
 * core's ops have) neither. The semaphores and the backends' spin locks are
 * the core's own (src/core/semaphore.c, sync.c). */
#include "cts.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/manifest.h"
#include "core/semaphore.h"
#include "core/trace.h"
#include "halk.h"

static _Atomic uint64_t completions; /* completion order across devices */

static void die(const char *what, mox_error *err)
{
    fprintf(stderr, "cts: %s: %s\n", what, err ? mox_error_message(err) : "");
    abort();
}

void mox__thread_mark_runtime(const char *name) { (void)name; }
void mox__trace_wake(const mox__waker_cell *cell) { (void)cell; }

void mox__execution_complete(mox__submission *pub, mox_error *error)
{
    cts_cb *cb = (cts_cb *)((char *)pub - offsetof(cts_cb, pub));
    /* The order of the calls: taken before the semaphore moves, since what
     * waits for it may complete (on another device's thread) at once. */
    uint64_t order = atomic_fetch_add(&completions, 1) + 1;
    mox__semaphore_signal(pub->signal.sem, pub->signal.value);
    pthread_mutex_lock(&cb->m);
    cb->status = error ? mox_error_code(error) : MOX_OK;
    cb->error = error;
    snprintf(cb->message, sizeof cb->message, "%s", error ? mox_error_message(error) : "");
    cb->order = order;
    cb->sem_value_at_completion = atomic_load(&pub->signal.sem->value);
    cb->done = true;
    pthread_cond_broadcast(&cb->c);
    pthread_mutex_unlock(&cb->m);
    mox_error_release(error);
}

static void load_module(cts *t)
{
    mox_manifest *m = NULL;
    mox_artifact_error aerr;
    const char *dir = halk_module.artifact_dir;
    if (!mox_manifest_load(dir, &m, &aerr)) {
        fprintf(stderr, "cts: manifest of %s: %s\n", dir, aerr.message);
        abort();
    }
    void *bytes = NULL;
    size_t size = 0;
    if (!mox_manifest_read_file(m, dir, t->info.module_file, &bytes, &size, &aerr)) {
        /* A CPU-only artifact (no nvcc at build time) has no fatbin. */
        printf("skip: the artifact has no code for this backend: %s\n", aerr.message);
        exit(CTS_SKIP);
    }
    mox__module_image img = {"halk", dir, m->abi, halk_module.abi_sha256, bytes, size};
    mox_error *err = t->be->vt->module_load(t->be, &img, &t->module);
    if (err)
        die("module_load", err);
    free(bytes);
    mox_manifest_free(m);
}

static mox_error *open_backend(cts *t, int ordinal)
{
    memset(t, 0, sizeof *t);
    const char *which = getenv("MOX_HAL_CTS_BACKEND");
    bool cuda = which && strcmp(which, "cuda") == 0;
    mox__backend_config cfg = {.context_id = 1u + (unsigned)(ordinal + 1), .ordinal = ordinal};
    return cuda ? mox__cuda_backend_open(&cfg, &t->be, &t->info)
                : mox__cpu_backend_open(&cfg, &t->be, &t->info);
}

static void open_rest(cts *t);

void cts_open(cts *t)
{
    mox_error *err = open_backend(t, -1);
    if (err && mox_error_code(err) == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("skip: %s\n", mox_error_message(err));
        exit(CTS_SKIP);
    }
    if (err)
        die("opening the backend", err);
    open_rest(t);
}

bool cts_open_ordinal(cts *t, int ordinal)
{
    mox_error *err = open_backend(t, ordinal);
    if (err && mox_error_code(err) == MOX_ERR_DEVICE_UNAVAILABLE) {
        printf("no device %d: %s\n", ordinal, mox_error_message(err));
        mox_error_release(err);
        return false;
    }
    if (err)
        die("opening the backend", err);
    open_rest(t);
    return true;
}

static void open_rest(cts *t)
{
    mox_error *err;
    if (t->info.queue_count == 0 || t->info.queue_count > CTS_MAX_QUEUES)
        die("queue_count out of range", NULL);
    for (uint32_t q = 0; q < t->info.queue_count; q++) {
        mox__semaphore_init(&t->sems[q], t->be, q);
        if (t->be->vt->semaphore_init && (err = t->be->vt->semaphore_init(t->be, &t->sems[q])))
            die("semaphore_init", err);
    }
    load_module(t);
}

void cts_close(cts *t)
{
    t->be->vt->module_unload(t->be, t->module);
    for (uint32_t q = 0; q < t->info.queue_count; q++) {
        if (t->be->vt->semaphore_fini)
            t->be->vt->semaphore_fini(t->be, &t->sems[q]);
        mox__semaphore_fini(&t->sems[q]);
    }
    t->be->vt->destroy(t->be);
}

void *cts_buffer(cts *t, uint32_t n, float value)
{
    void *handle = NULL, *address = NULL;
    mox_error *err = t->be->vt->buffer_alloc(t->be, 4ull * n, &handle, &address);
    if (err)
        die("buffer_alloc", err);
    float *v = malloc(4ull * n);
    for (uint32_t i = 0; i < n; i++)
        v[i] = value;
    if ((err = t->be->vt->buffer_upload(t->be, handle, 0, v, 4ull * n)))
        die("buffer_upload", err);
    free(v);
    if (handle != address)
        die("the suite assumes handle == address (both backends)", NULL);
    return address;
}

void cts_free(cts *t, void *address) { t->be->vt->buffer_free(t->be, address); }

void cts_read(cts *t, void *address, float *out, uint32_t n)
{
    cts_cb cb;
    cts_cb_init(t, &cb);
    cts_download(&cb, address, out, 4ull * n);
    cts_execute(t, &cb, 0);
    cts_wait(&cb);
    if (cb.status != MOX_OK)
        die("a download failed", NULL);
    cts_cb_fini(&cb);
}

static void *scratch(size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? size : 64) != 0)
        abort();
    memset(p, 0, size ? size : 64);
    return p;
}

void cts_cb_init(cts *t, cts_cb *cb)
{
    memset(cb, 0, sizeof *cb);
    pthread_mutex_init(&cb->m, NULL);
    pthread_cond_init(&cb->c, NULL);
    cb->be = scratch(t->info.submission_state_size);
    cb->pub.be = cb->be;
    cb->pub.dispatches = cb->dptr;
    cb->pub.preds = cb->preds;
    cb->pub.succs = cb->succs;
    cb->pub.gates = cb->gates;
    cb->pub.waits = cb->waits;
    for (uint32_t i = 0; i < CTS_MAX_CMDS; i++)
        cb->dbe[i] = scratch(t->info.dispatch_state_size);
}

void cts_cb_fini(cts_cb *cb)
{
    free(cb->be);
    for (uint32_t i = 0; i < CTS_MAX_CMDS; i++)
        free(cb->dbe[i]);
    pthread_cond_destroy(&cb->c);
    pthread_mutex_destroy(&cb->m);
}

static mox__dispatch *append(cts_cb *cb, mox__cmd_kind kind)
{
    uint32_t i = cb->pub.count++;
    if (i >= CTS_MAX_CMDS)
        abort();
    cb->pub.transfer_count += kind != MOX__CMD_KERNEL; /* as the core counts them (mox__sub_push) */
    mox__dispatch *d = &cb->d[i];
    cb->dptr[i] = d;
    d->kind = kind;
    d->index = i;
    d->be = cb->dbe[i];
    d->params = cb->params[i];
    d->pred_first = cb->npreds;
    d->gate_first = cb->ngates;
    return d;
}

uint32_t cts_dispatch(cts *t, cts_cb *cb, uint32_t kernel, uint32_t n)
{
    static const char *const names[] = {"hal_fill", "hal_add", "hal_fail", "hal_slow"};
    mox__dispatch *d = append(cb, MOX__CMD_KERNEL);
    d->module = t->module;
    d->kernel = kernel;
    d->kernel_name = names[kernel];
    d->kernel_features = kernel == K_FAIL ? MOX_KFEAT_FAIL : 0;
    d->config = mox_launch_config_make(mox_dim3_make((n + 63) / 64, 1, 1), mox_dim3_make(64, 1, 1));
    return d->index;
}

static void *arg_slot(cts_cb *cb)
{
    mox__dispatch *d = &cb->d[cb->pub.count - 1];
    uint32_t a = d->param_count++;
    cb->params[d->index][a] = &cb->store[d->index][a];
    return &cb->store[d->index][a];
}

void cts_ptr(cts_cb *cb, void *address) { memcpy(arg_slot(cb), &address, sizeof address); }
void cts_f32(cts_cb *cb, float v) { memcpy(arg_slot(cb), &v, sizeof v); }
void cts_u32(cts_cb *cb, uint32_t v) { memcpy(arg_slot(cb), &v, sizeof v); }

void cts_pred(cts_cb *cb, uint32_t from)
{
    cb->preds[cb->npreds++] = from;
    cb->d[cb->pub.count - 1].pred_count++;
}

void cts_gate(cts_cb *cb, const cts_cb *earlier, uint32_t i)
{
    cb->gates[cb->ngates++] = (mox__gate){&earlier->pub, i};
    cb->d[cb->pub.count - 1].gate_count++;
}

uint32_t cts_download(cts_cb *cb, void *address, void *host, uint64_t bytes)
{
    mox__dispatch *d = append(cb, MOX__CMD_DOWNLOAD);
    d->kernel_name = "(download)";
    d->buffer = address;
    d->address = address;
    d->bytes = bytes;
    d->host = host;
    return d->index;
}

uint32_t cts_copy(cts_cb *cb, const cts *from, void *src, void *dst, uint64_t bytes)
{
    mox__dispatch *d = append(cb, MOX__CMD_COPY);
    d->kernel_name = "(copy)";
    d->buffer = dst;
    d->address = dst;
    d->bytes = bytes;
    d->src_device = from->be;
    d->src_buffer = src;
    d->src_address = src;
    mox__copy_operands_set(d, &cb->operands[d->index].copy);
    return d->index;
}

uint32_t cts_fill(cts_cb *cb, void *dst, uint64_t bytes, const void *pattern, uint32_t size)
{
    mox__dispatch *d = append(cb, MOX__CMD_FILL);
    d->kernel_name = "(fill)";
    d->buffer = dst;
    d->address = dst;
    d->bytes = bytes;
    mox__fill_operands_set(d, &cb->operands[d->index].fill, pattern, size);
    return d->index;
}

uint32_t cts_upload(cts *t, cts_cb *cb, void *dst, const void *src, uint64_t bytes, void **lent)
{
    mox__dispatch *d = append(cb, MOX__CMD_UPLOAD);
    d->kernel_name = "(upload)";
    d->buffer = dst;
    d->address = dst;
    d->bytes = bytes;
    uint64_t at = 0;
    void *host = t->be->vt->host_alloc ? t->be->vt->host_alloc(t->be, (size_t)bytes, &at) : NULL;
    if (host) {
        d->src_address = (void *)(uintptr_t)at;
        mox__copy_operands_set(d, &cb->operands[d->index].copy);
    } else {
        host = malloc((size_t)bytes);
        if (!host)
            die("cts_upload: out of memory", NULL);
    }
    memcpy(host, src, (size_t)bytes);
    d->host = host;
    *lent = host;
    return d->index;
}

void cts_upload_done(cts *t, void *lent)
{
    if (t->be->vt->host_alloc)
        t->be->vt->host_free(t->be, lent);
    else
        free(lent);
}

void cts_wait_for(cts_cb *cb, const cts_cb *earlier)
{
    cb->waits[cb->pub.wait_count++] = earlier->pub.signal;
}

/* The inverse of preds, which the CPU backend walks. */
static void build_succs(cts_cb *cb)
{
    uint32_t at = 0;
    for (uint32_t i = 0; i < cb->pub.count; i++) {
        cb->d[i].succ_first = at;
        cb->d[i].succ_count = 0;
        for (uint32_t j = i + 1; j < cb->pub.count; j++)
            for (uint32_t k = 0; k < cb->d[j].pred_count; k++)
                if (cb->preds[cb->d[j].pred_first + k] == i) {
                    cb->succs[at++] = j;
                    cb->d[i].succ_count++;
                }
    }
}

void cts_execute(cts *t, cts_cb *cb, uint32_t queue)
{
    build_succs(cb);
    cb->pub.queue = queue;
    cb->pub.signal = (mox__sem_point){&t->sems[queue], ++t->values[queue]};
    cb->pub.serial = ++t->serial;
    t->be->vt->execute(t->be, &cb->pub);
}

void cts_wait(cts_cb *cb)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    pthread_mutex_lock(&cb->m);
    while (!cb->done)
        if (pthread_cond_timedwait(&cb->c, &cb->m, &ts) == ETIMEDOUT) {
            fprintf(stderr, "cts: an execution did not complete within 60 s\n");
            abort();
        }
    pthread_mutex_unlock(&cb->m);
}
