/* block_cache.c - the per-thread block caches of src/core/alloc.h: a freed
 * block comes back for a size of its class (and only of its class), every
 * byte of it usable; blocks a thread cached are handed back when it ends
 * (the sanitizer stages' leak check sees them otherwise); what one thread
 * frees beyond its cache reaches another thread that runs out (the
 * depot). */
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/alloc.h"

static void freed_block_is_reused_within_its_class(void **state)
{
    (void)state;
    unsigned char *a = mox__block_alloc(100); /* class 65..128 bytes */
    assert_non_null(a);
    memset(a, 0xab, 100);
    mox__block_free(a, 100);
    unsigned char *b = mox__block_alloc(128);
    assert_ptr_equal(a, b);
    memset(b, 0xcd, 128); /* the whole class size belongs to it */
    unsigned char *c = mox__block_alloc(129); /* the next class: another block */
    assert_non_null(c);
    assert_ptr_not_equal(c, b);
    mox__block_free(b, 128);
    mox__block_free(c, 129);
}

static void large_blocks_bypass_the_cache(void **state)
{
    (void)state;
    unsigned char *a = mox__block_alloc(64 * 1024);
    assert_non_null(a);
    memset(a, 1, 64 * 1024);
    mox__block_free(a, 64 * 1024);
    mox__block_free(NULL, 100); /* NULL is ignored, like free */
}

static void *churn(void *p)
{
    (void)p;
    void *blocks[200];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 200; i++) {
            blocks[i] = mox__block_alloc((size_t)(i % 40) * 50 + 1);
            if (!blocks[i])
                return (void *)1;
        }
        for (int i = 0; i < 200; i++)
            mox__block_free(blocks[i], (size_t)(i % 40) * 50 + 1);
    }
    return NULL;
}

static void threads_hand_their_caches_back(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        void *failed = NULL;
        assert_int_equal(pthread_create(&t, NULL, churn, NULL), 0);
        pthread_join(t, &failed);
        assert_null(failed);
    }
}

enum { HANDED = 200, HANDED_SIZE = 1000 };

static void *free_all(void *p)
{
    void **blocks = p;
    for (int i = 0; i < HANDED; i++)
        mox__block_free(blocks[i], HANDED_SIZE);
    return NULL;
}

static void *alloc_one(void *p)
{
    void **out = p;
    *out = mox__block_alloc(HANDED_SIZE);
    if (*out)
        memset(*out, 0x5a, HANDED_SIZE); /* every byte of it is usable */
    return NULL;
}

/* A producer/consumer pair: the main thread allocates, a second thread
 * frees them all (more than its cache keeps); a third thread, whose cache
 * is empty, gets one of those blocks back rather than new memory. */
static void blocks_freed_on_one_thread_reach_another(void **state)
{
    (void)state;
    void *blocks[HANDED];
    for (int i = 0; i < HANDED; i++) {
        blocks[i] = mox__block_alloc(HANDED_SIZE);
        assert_non_null(blocks[i]);
        memset(blocks[i], i, HANDED_SIZE);
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, free_all, blocks), 0);
    pthread_join(t, NULL);
    void *got = NULL;
    assert_int_equal(pthread_create(&t, NULL, alloc_one, &got), 0);
    pthread_join(t, NULL);
    assert_non_null(got);
    bool reused = false;
    for (int i = 0; i < HANDED; i++)
        reused |= got == blocks[i];
    assert_true(reused);
    mox__block_free(got, HANDED_SIZE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(freed_block_is_reused_within_its_class),
        cmocka_unit_test(large_blocks_bypass_the_cache),
        cmocka_unit_test(threads_hand_their_caches_back),
        cmocka_unit_test(blocks_freed_on_one_thread_reach_another),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
