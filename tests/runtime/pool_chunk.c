/* pool_chunk.c - the CPU backend's pool sizes a dispatch's chunks for the
 * workers: about four claims per worker, never less work per claim than
 * MOX__POOL_MIN_WORK threads, never more than the job; and a job pushed
 * runs every unit exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cpu/thread_pool.h"

static void chunks_follow_workers_and_work(void **state) {
    (void)state;
    mox__pool *one = mox__pool_create(1), *four = mox__pool_create(4);
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
    _Atomic int finished;
} counted;

static void run_units(mox__pool_job *job, uint64_t first, uint64_t count) {
    counted *c = (counted *)job;
    for (uint64_t u = first; u < first + count; u++) atomic_fetch_add(&c->ran[u], 1);
}

static void finish(mox__pool_job *job) { atomic_store(&((counted *)job)->finished, 1); }

static void every_unit_runs_once(void **state) {
    (void)state;
    mox__pool *pool = mox__pool_create(3);
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunks_follow_workers_and_work),
        cmocka_unit_test(every_unit_runs_once),
    };
    return cmocka_run_group_tests_name("pool_chunk", tests, NULL, NULL);
}
