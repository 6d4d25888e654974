/* trace.c - the trace file: mox_trace_start / mox_trace_stop, MOX_TRACE,
 * and the writer the hooks (trace_hooks.c) append events with. The file is
 * a JSON array in the Trace Event Format (Chrome, Perfetto): "[", one event
 * per line, "]" at stop; a trace cut short by a crash still loads (the
 * closing bracket is optional in that format). Timestamps are microseconds
 * since the trace started; pid is the process, tid the calling thread, whose
 * name is written once per trace ("M" metadata event) before its first
 * event. The trace lock is a leaf: it is held only while stdio writes. */
#include "trace_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mox/trace.h>

#include "alloc.h"
#include "error.h"

atomic_bool mox__trace_active;
atomic_bool mox__trace_file_active;

static struct {
    pthread_mutex_t lock;
    FILE *file;                /* NULL when no trace is being written */
    char *path;
    uint64_t t0;               /* mox__trace_now() at start */
    unsigned epoch;            /* one per trace: threads name themselves once per trace */
    int write_errno;           /* errno of the first failed write (ENOMEM: an event could
                                  not be formatted); 0 while none failed */
    mox__trace_spans spans;    /* the async spans this trace began (trace_spans.c) */
} T = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local struct {
    long tid;
    unsigned named_epoch;
    const char *name;
} self;

uint64_t mox__trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mox__trace_thread_name(const char *name) { self.name = name; }

static long thread_id(void)
{
    if (!self.tid)
        self.tid = (long)syscall(SYS_gettid);
    return self.tid;
}

json_t *mox__trace_event(const char *ph, const char *cat, const char *name)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I}", "ph", ph, "cat", cat, "name", name, "pid",
                     (json_int_t)getpid(), "tid", (json_int_t)thread_id());
}

void mox__trace_id(char buf[MOX__TRACE_ID_SIZE], const void *p)
{
    snprintf(buf, MOX__TRACE_ID_SIZE, "%p", p);
}

/* The errno of a stdio call that just failed (EIO if it left none). */
static int failed_errno(void) { return errno ? errno : EIO; }

/* T.lock held: keeps the first failure's errno, which stop reports. */
static void note_failure(int e)
{
    if (!T.write_errno)
        T.write_errno = e;
}

/* T.lock held. */
static void write_json(json_t *ev)
{
    char *text = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(13));
    if (!text) {
        note_failure(ENOMEM);
        return;
    }
    errno = 0;
    if (fprintf(T.file, ",\n%s", text) < 0)
        note_failure(failed_errno());
    free(text);
}

/* T.lock held: the thread's name, once per trace. */
static void name_thread(void)
{
    if (self.named_epoch == T.epoch)
        return;
    self.named_epoch = T.epoch;
    char fallback[32] = "";
    const char *name = self.name;
    if (!name) {
        pthread_getname_np(pthread_self(), fallback, sizeof fallback);
        name = fallback;
    }
    json_t *m = json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M", "name", "thread_name", "pid",
                          (json_int_t)getpid(), "tid", (json_int_t)thread_id(), "args", "name", name);
    if (m)
        write_json(m);
    json_decref(m);
}

/* T.lock held, a trace being written. */
static void write_at(json_t *ev, uint64_t at_ns)
{
    uint64_t rel = at_ns > T.t0 ? at_ns - T.t0 : 0;
    json_object_set_new(ev, "ts", json_real((double)rel / 1000.0));
    name_thread();
    write_json(ev);
}

void mox__trace_emit(json_t *ev, uint64_t at_ns)
{
    if (!ev)
        return;
    pthread_mutex_lock(&T.lock);
    if (T.file)
        write_at(ev, at_ns);
    pthread_mutex_unlock(&T.lock);
    json_decref(ev);
}

/* T.lock held: whether the span's event belongs in this trace. */
static bool span_step(uint64_t track, mox__span_step step)
{
    switch (step) {
    case MOX__SPAN_BEGIN:
        if (mox__trace_spans_add(&T.spans, track))
            return true;
        note_failure(ENOMEM); /* the span is left out whole */
        return false;
    case MOX__SPAN_DURING:
        return mox__trace_spans_has(&T.spans, track);
    case MOX__SPAN_END:
        if (!mox__trace_spans_has(&T.spans, track))
            return false;
        mox__trace_spans_remove(&T.spans, track);
        return true;
    }
    return false;
}

void mox__trace_emit_on(json_t *ev, uint64_t at_ns, uint64_t track, mox__span_step step)
{
    if (!ev)
        return;
    pthread_mutex_lock(&T.lock);
    if (T.file && span_step(track, step))
        write_at(ev, at_ns);
    pthread_mutex_unlock(&T.lock);
    json_decref(ev);
}

void mox__trace_emit_pair(json_t *b, uint64_t b_ns, json_t *e, uint64_t e_ns, uint64_t track)
{
    pthread_mutex_lock(&T.lock);
    if (T.file && b && e && span_step(track, MOX__SPAN_DURING)) {
        write_at(b, b_ns);
        write_at(e, e_ns);
    }
    pthread_mutex_unlock(&T.lock);
    json_decref(b);
    json_decref(e);
}

/* The opening of the file: the array and the process's name. */
static bool write_header(FILE *f)
{
    json_t *m = json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M", "name", "process_name", "pid",
                          (json_int_t)getpid(), "tid", (json_int_t)0, "args", "name",
                          program_invocation_short_name);
    char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
    bool ok = text && fprintf(f, "[\n%s", text) >= 0;
    free(text);
    json_decref(m);
    return ok;
}

/* Opens `path` and starts the trace; `who` names the caller in messages and
 * `io_code` is the code of a file that cannot be written. */
static mox_status start_file(const char *path, const char *who, mox_status io_code)
{
    char *copy = mox__str_dup(path);
    if (!copy)
        return mox__raise(MOX_ERR_OUT_OF_MEMORY, "out of memory starting a trace");
    pthread_mutex_lock(&T.lock);
    if (T.file) {
        mox_status st = mox__raise(MOX_ERR_STATE, "%s: a trace is already being written to '%s'", who, T.path);
        pthread_mutex_unlock(&T.lock);
        mox__free(copy);
        return st;
    }
    FILE *f = fopen(path, "w");
    if (f) /* before any output: setvbuf may not follow it */
        setvbuf(f, NULL, _IOFBF, 1 << 20);
    if (!f || !write_header(f)) {
        int e = errno;
        if (f)
            fclose(f);
        pthread_mutex_unlock(&T.lock);
        mox__free(copy);
        return mox__raise(io_code, "%s: cannot write the trace file '%s': %s", who, path, strerror(e));
    }
    T.file = f;
    T.path = copy;
    T.t0 = mox__trace_now();
    T.epoch++;
    mox__trace_spans_clear(&T.spans); /* what began before is not this trace's */
    T.write_errno = 0;
    atomic_store_explicit(&mox__trace_file_active, true, memory_order_release);
    atomic_store_explicit(&mox__trace_active, true, memory_order_release);
    pthread_mutex_unlock(&T.lock);
    return MOX_OK;
}

mox_status mox_trace_start(const char *path)
{
    if (!path || !*path)
        return mox__raise(MOX_ERR_INVALID_ARGUMENT, "mox_trace_start: %s path", path ? "empty" : "NULL");
    return start_file(path, "mox_trace_start", MOX_ERR_IO);
}

mox_status mox_trace_stop(void)
{
    atomic_store_explicit(&mox__trace_file_active, false, memory_order_release);
    atomic_store_explicit(&mox__trace_active, mox__trace_nvtx_on(), memory_order_release);
    pthread_mutex_lock(&T.lock);
    FILE *f = T.file;
    char *path = T.path;
    int e = T.write_errno;
    T.file = NULL;
    T.path = NULL;
    mox__trace_spans_clear(&T.spans);
    pthread_mutex_unlock(&T.lock);
    if (!f)
        return mox__raise(MOX_ERR_STATE, "mox_trace_stop: no trace is being written");
    /* The first failure's errno (a full disk is ENOSPC, at whichever write,
     * flush or close it shows): ferror keeps no errno, so each call's is
     * read as it fails. */
    errno = 0;
    if (fprintf(f, "\n]\n") < 0 && !e)
        e = failed_errno();
    errno = 0;
    if (fflush(f) != 0 && !e)
        e = failed_errno();
    if (ferror(f) && !e)
        e = EIO;
    errno = 0;
    if (fclose(f) != 0 && !e)
        e = failed_errno();
    mox_status st = MOX_OK;
    if (e)
        st = mox__raise(MOX_ERR_IO, "mox_trace_stop: writing the trace file '%s' failed: %s", path,
                        strerror(e));
    mox__free(path);
    return st;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char env_message[600]; /* why MOX_TRACE failed; "" when it did not */

/* NVTX when a tool is injected; the file of MOX_TRACE, unless the program
 * already started a trace with mox_trace_start (that one wins). */
static void env_start(void)
{
    if (mox__trace_nvtx_start())
        atomic_store_explicit(&mox__trace_active, true, memory_order_release);
    const char *path = getenv("MOX_TRACE");
    if (!path || !*path || atomic_load(&mox__trace_file_active))
        return;
    if (start_file(path, "MOX_TRACE", MOX_ERR_CONFIG) == MOX_ERR_CONFIG)
        snprintf(env_message, sizeof env_message, "%s", mox_error_last_message());
}

mox_status mox__trace_env_start(void)
{
    pthread_once(&env_once, env_start);
    return env_message[0] ? mox__raise(MOX_ERR_CONFIG, "%s", env_message) : MOX_OK;
}

/* Finishes a trace still being written when the program exits (or libmox
 * is unloaded): MOX_TRACE's, or one the program did not stop. */
__attribute__((destructor)) static void finish_at_exit(void)
{
    if (atomic_load(&mox__trace_file_active))
        mox_trace_stop();
}
