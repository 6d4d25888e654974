/* pool_chunk.c - the CPU backend's pool sizes a dispatch's chunks for the
 * workers: about four claims per worker, never less work per claim than
 * MOX__POOL_MIN_WORK threads, never more than the job; a job pushed runs
 * every unit exactly once; and the worker count is what
 * mox_device_options.cpu_threads asks for (0: one per online core), no
 * more threads running a job's chunks than that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu/thread_pool.h"

static void chunks_follow_workers_and_work(void **state) {
    (void)state;
    int rc;
    mox__pool *one = mox__pool_create(1, &rc), *four = mox__pool_create(4, &rc);
    assert_non_null(one);
    assert_non_null(four);
    /* 16384 blocks of 256 threads: four claims per worker */
    assert_int_equal(mox__pool_chunk(one, 16384, 256), 4096);
    assert_int_equal(mox__pool_chunk(four, 16384, 256), 1024);
    /* 64 blocks of 64 threads (4096 threads in all): one claim, one worker */
    assert_int_equal(mox__pool_chunk(four, 64, 64), 64);
    /* 1000 blocks of 32 threads: at least 8192 threads' worth per claim */
    assert_int_equal(mox__pool_chunk(four, 1000, 32), MOX__POOL_MIN_WORK / 32);
    /* big blocks: one per claim is enough work */
    assert_int_equal(mox__pool_chunk(four, 8, 1024), 8);
    assert_int_equal(mox__pool_chunk(four, 3, 0), 1);
    assert_int_equal(mox__pool_chunk(four, 1, 1), 1);
    mox__pool_destroy(one);
    mox__pool_destroy(four);
}

typedef struct counted {
    mox__pool_job job;
    _Atomic uint32_t ran[5000];
    pthread_t runner[5000];
    _Atomic int finished;
} counted;

static void run_units(mox__pool_job *job, uint64_t first, uint64_t count) {
    counted *c = (counted *)job;
    for (uint64_t u = first; u < first + count; u++) {
        c->runner[u] = pthread_self();
        atomic_fetch_add(&c->ran[u], 1);
    }
}

static void finish(mox__pool_job *job) { atomic_store(&((counted *)job)->finished, 1); }

static void every_unit_runs_once(void **state) {
    (void)state;
    int rc;
    mox__pool *pool = mox__pool_create(3, &rc);
    assert_non_null(pool);
    static counted c;
    c.job.total = 5000;
    c.job.chunk = 0;
    c.job.unit_work = 16;
    c.job.run = run_units;
    c.job.finish = finish;
    mox__pool_push(pool, &c.job);
    while (!atomic_load(&c.finished)) {
    }
    assert_int_equal(c.job.chunk, MOX__POOL_MIN_WORK / 16);
    for (int u = 0; u < 5000; u++) assert_int_equal(atomic_load(&c.ran[u]), 1);
    mox__pool_destroy(pool);
}

static void workers_are_cpu_threads(void **state) {
    (void)state;
    int rc;
    mox__pool *three = mox__pool_create(3, &rc), *cores = mox__pool_create(0, &rc);
    assert_non_null(three);
    assert_non_null(cores);
    assert_int_equal(mox__pool_threads(three), 3);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(mox__pool_threads(cores), online > 0 ? (uint32_t)online : 1u);
    mox__pool_destroy(cores);
    /* One unit per claim: as many claims as units, still only the three
     * workers run them, and never the thread that pushed the job. */
    static counted c;
    c.job.total = 5000;
    c.job.chunk = 1;
    c.job.unit_work = 0;
    c.job.run = run_units;
    c.job.finish = finish;
    mox__pool_push(three, &c.job);
    while (!atomic_load(&c.finished)) {
    }
    pthread_t seen[4];
    size_t distinct = 0;
    for (int u = 0; u < 5000; u++) {
        assert_int_equal(atomic_load(&c.ran[u]), 1);
        assert_false(pthread_equal(c.runner[u], pthread_self()));
        size_t k = 0;
        while (k < distinct && !pthread_equal(seen[k], c.runner[u])) k++;
        if (k == distinct) {
            assert_true(distinct < 3);
            seen[distinct++] = c.runner[u];
        }
    }
    mox__pool_destroy(three);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunks_follow_workers_and_work),
        cmocka_unit_test(every_unit_runs_once),
        cmocka_unit_test(workers_are_cpu_threads),
    };
    return cmocka_run_group_tests_name("pool_chunk", tests, NULL, NULL);
}
