/* worker.c - the device's preparation worker (rule A3) and the per-device
 * module table. First use of a module on a device queues it here; the
 * worker resolves the artifact, verifies the manifest and the bindings'
 * ABI hash, reads the verified bytes and has the backend load them, then
 * wakes every op that waited. Polling never blocks on any of this. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "artifact/manifest.h"
#include "artifact_path.h"
#include "error.h"
#include "module.h"
#include "submission.h"
#include "trace.h"

mox__devmod *mox__devmod_get(mox_device *device, const mox__modinfo *info)
{
    mox__lock(&device->lock);
    mox__devmod *dm = device->modules;
    while (dm && dm->info != info)
        dm = dm->next;
    if (!dm && (dm = mox__calloc(1, sizeof *dm)) != NULL) {
        dm->info = info;
        atomic_init(&dm->state, MOX__MOD_NONE);
        dm->next = device->modules;
        device->modules = dm;
    }
    mox__unlock(&device->lock);
    return dm;
}

void mox__devmod_request(mox_device *device, mox__devmod *dm)
{
    atomic_store(&dm->state, MOX__MOD_QUEUED);
    pthread_mutex_lock(&device->worker_lock);
    dm->queue_next = NULL;
    if (device->queue_tail)
        device->queue_tail->queue_next = dm;
    else
        device->queue_head = dm;
    device->queue_tail = dm;
    pthread_cond_signal(&device->worker_cond);
    pthread_mutex_unlock(&device->worker_lock);
}

void mox__devmod_retry_locked(mox__devmod *dm)
{
    if (atomic_load(&dm->state) == MOX__MOD_FAILED && dm->transient)
        atomic_store(&dm->state, MOX__MOD_NONE);
}

mox_error *mox__devmod_error(mox_device *device, mox__devmod *dm)
{
    mox__lock(&device->lock);
    mox_error *e = mox__error_ref(dm->error);
    mox__unlock(&device->lock);
    return e;
}

void mox__devmods_free(mox_device *device)
{
    mox__devmod *dm = device->modules;
    while (dm) {
        mox__devmod *next = dm->next;
        if (dm->handle)
            device->backend->vt->module_unload(device->backend, dm->handle);
        mox_error_release(dm->error);
        mox__free(dm);
        dm = next;
    }
    device->modules = NULL;
}

/* The artifact layer's failure: out of memory, or a bad artifact. */
static mox_status artifact_error(const char *module, const char *dir,
                                 const mox_artifact_error *aerr, mox_error **error)
{
    mox_status st = aerr->out_of_memory ? MOX_ERR_OUT_OF_MEMORY : MOX_ERR_ARTIFACT;
    *error = mox__error_new(st, "module '%s': artifact %s: %s", module, dir, aerr->message);
    return st;
}

mox_status mox__module_load(mox_device *device, const mox__modinfo *info, void **handle,
                            mox_error **error)
{
    const mox_module_desc *desc = info->desc;
    const char *name = desc->name ? desc->name : "(unnamed)";
    *handle = NULL;
    *error = NULL;
    if (info->error) {
        *error = mox__error_ref(info->error);
        return mox_error_code(info->error);
    }
    uint64_t trace_start = mox__trace_on() ? mox__trace_now() : 0;
    bool chosen = false;
    char *dir = mox__modinfo_artifact_dir(info, &chosen);
    if (!dir) {
        *error = mox__error_oom();
        return MOX_ERR_OUT_OF_MEMORY;
    }
    mox_manifest *m = NULL;
    void *bytes = NULL;
    size_t size = 0;
    mox_artifact_error aerr;
    mox_status st = MOX_OK;

    size_t plen = strlen(dir) + sizeof "/manifest.json";
    char *mpath = mox__malloc(plen);
    if (!mpath) {
        st = MOX_ERR_OUT_OF_MEMORY;
        *error = mox__error_oom();
        goto out;
    }
    snprintf(mpath, plen, "%s/manifest.json", dir);
    if (access(mpath, F_OK) != 0) {
        int e = errno;
        st = MOX_ERR_ARTIFACT;
        *error = mox__error_new(st,
                                "module '%s': no artifact at '%s' (manifest.json: %s); build it "
                                "with mox_add_kernels, deploy it next to the program (moxc deploy), "
                                "or point %s or mox_module_set_artifact_dir at it",
                                name, dir, strerror(e),
                                desc->artifact_env ? desc->artifact_env : "MOX_ARTIFACT_ROOT");
        mox__free(mpath);
        goto out;
    }
    if (access(mpath, R_OK) != 0) {
        int e = errno;
        st = MOX_ERR_IO;
        *error = mox__error_new(st, "module '%s': cannot read %s: %s", name, mpath, strerror(e));
        mox__free(mpath);
        goto out;
    }
    mox__free(mpath);
    if (!mox_manifest_load(dir, &m, &aerr)) {
        m = NULL;
        st = artifact_error(name, dir, &aerr, error);
        goto out;
    }
    if (!m->module || strcmp(m->module, name) != 0) {
        st = MOX_ERR_ARTIFACT;
        *error = mox__error_new(st, "module '%s': the artifact at '%s' holds module '%s'", name,
                                dir, m->module ? m->module : "");
        goto out;
    }
    const char *fp;
    size_t fp_len = mox__artifact_fingerprint(desc, &fp);
    if (!chosen && fp_len && (strlen(m->fingerprint) != fp_len || memcmp(m->fingerprint, fp, fp_len) != 0)) {
        /* Found by fingerprint (a deployed copy, the build directory,
         * MOX_ARTIFACT_ROOT): it must be the build the bindings name. */
        st = MOX_ERR_ARTIFACT;
        *error = mox__error_new(st,
                                "module '%s': the artifact at '%s' is build %.12s..., not %.*s... that the "
                                "program was built with; deploy the program's own artifacts (moxc deploy)",
                                name, dir, m->fingerprint, (int)(fp_len < 12 ? fp_len : 12), fp);
        goto out;
    }
    if (strcmp(m->abi_sha256, desc->abi_sha256) != 0) {
        st = MOX_ERR_ABI_MISMATCH;
        *error = mox__error_new(st,
                                "module '%s': generated bindings do not match the artifact ABI "
                                "(bindings %.12s..., artifact %.12s... at '%s'); rebuild the "
                                "program with its kernels",
                                name, desc->abi_sha256, m->abi_sha256, dir);
        goto out;
    }
    uint32_t missing = m->abi->required_features & ~device->info.features;
    if (missing) {
        st = MOX_ERR_UNSUPPORTED_DEVICE;
        *error = mox__error_new(st, "module '%s' needs %s%s, which %s lacks", name,
                                (missing & MOX_FEAT_ATOMICS) ? "atomics " : "",
                                (missing & MOX_FEAT_WARP_OPS) ? "warp_ops" : "",
                                device->info.name);
        goto out;
    }
    if (!mox_manifest_read_file(m, dir, device->info.module_file, &bytes, &size, &aerr)) {
        bytes = NULL;
        st = artifact_error(name, dir, &aerr, error);
        goto out;
    }
    mox__module_image img = {name, dir, m->abi, desc->abi_sha256, bytes, size};
    *error = device->backend->vt->module_load(device->backend, &img, handle);
    st = *error ? mox_error_code(*error) : MOX_OK;
out:
    if (trace_start && mox__trace_on())
        mox__trace_prepare(name, dir, st, trace_start);
    mox__free(bytes);
    if (m)
        mox_manifest_free(m);
    mox__free(dir);
    return st;
}

/* The debug delay; cut short when the device is being destroyed, so that
 * a release never waits for it. worker_lock held. */
static void delay_locked(mox_device *dev, uint32_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000u;
    until.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    while (!dev->worker_stop &&
           pthread_cond_timedwait(&dev->worker_cond, &dev->worker_lock, &until) != ETIMEDOUT) {
    }
}

static void *worker_main(void *p)
{
    mox_device *dev = p;
    /* It holds no reference of its own: destroy() stops and joins it
     * before it frees anything, so the device outlives every iteration.
     * What an iteration releases (a failed admission's batch) may still
     * drop the last reference here: destruction then happens on a thread
     * of its own, which joins this one. */
    mox__thread_mark_runtime("mox-worker");
    mox__trace_thread_name("mox preparation worker");
    pthread_mutex_lock(&dev->worker_lock);
    for (;;) {
        while (!dev->queue_head && !dev->worker_stop)
            pthread_cond_wait(&dev->worker_cond, &dev->worker_lock);
        if (dev->worker_stop)
            break;
        mox__devmod *dm = dev->queue_head;
        dev->queue_head = dm->queue_next;
        if (!dev->queue_head)
            dev->queue_tail = NULL;
        /* No reference left: the device is being destroyed (destroy() waits
         * in mox__worker_stop), nobody waits for the module any more. A
         * release during the load waits for the load: then a program that
         * waited for its work and released everything has no mox thread
         * left when mox_device_release returns (docs/async.md). */
        if (atomic_load(&dev->refs) == 0)
            break;
        if (dev->prepare_delay_ms)
            delay_locked(dev, dev->prepare_delay_ms);
        pthread_mutex_unlock(&dev->worker_lock);

        void *handle = NULL;
        mox_error *err = NULL;
        mox_status st = mox__module_load(dev, dm->info, &handle, &err);

        mox__lock(&dev->lock);
        if (st == MOX_OK) {
            dm->handle = handle;
            atomic_store(&dm->state, MOX__MOD_READY);
        } else {
            mox_error_release(dm->error); /* an earlier attempt's */
            dm->error = err;
            dm->transient = st == MOX_ERR_OUT_OF_MEMORY;
            atomic_store(&dm->state, MOX__MOD_FAILED);
        }
        mox__wait_list_wake_all(&dm->waiters, &dev->lock);
        bool queued = dev->admit_head != NULL;
        mox__unlock(&dev->lock);
        /* Batches waiting in the admission queue for this module (op.c):
         * the head may go now, or resolve with the module's failure. */
        if (queued)
            mox__admit_run(dev);
        mox__device_notify(dev);

        pthread_mutex_lock(&dev->worker_lock);
    }
    pthread_mutex_unlock(&dev->worker_lock);
    return NULL;
}

mox_status mox__worker_start(mox_device *device)
{
    int rc = pthread_create(&device->worker, NULL, worker_main, device);
    if (rc != 0)
        return mox__raise(MOX_ERR_BACKEND, "cannot start the preparation worker: %s", strerror(rc));
    device->worker_running = true;
    return MOX_OK;
}

void mox__worker_stop(mox_device *device)
{
    if (!device->worker_running)
        return;
    pthread_mutex_lock(&device->worker_lock);
    device->worker_stop = true;
    pthread_cond_signal(&device->worker_cond);
    pthread_mutex_unlock(&device->worker_lock);
    pthread_join(device->worker, NULL);
    device->worker_running = false;
}
