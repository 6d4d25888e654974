/* block_cache.c - the per-thread block caches of src/core/alloc.h: a freed
 * block comes back for a size of its class (and only of its class), every
 * byte of it usable; blocks a thread cached are handed back when it ends
 * (the sanitizer stages' leak check sees them otherwise). */
#include <pthread.h>
#include <setjmp.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(freed_block_is_reused_within_its_class),
        cmocka_unit_test(large_blocks_bypass_the_cache),
        cmocka_unit_test(threads_hand_their_caches_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
