/* alloc.c - host allocation wrappers and the allocation-failure test hook
 * (mox__testing_fail_alloc_after in testing.h). */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

/* < 0: disabled; otherwise the number of allocations that still succeed. */
static _Atomic long fail_countdown = -1;

void mox__testing_fail_alloc_after(long count) { atomic_store(&fail_countdown, count); }

static int should_fail(void)
{
    long n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
    if (n < 0)
        return 0;
    /* Fails exactly one allocation, then the hook disarms itself. */
    while (n >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &n, n > 0 ? n - 1 : -1))
            return n == 0;
    }
    return 0;
}

void *mox__malloc(size_t size)
{
    if (should_fail())
        return NULL;
    return malloc(size ? size : 1);
}

void *mox__calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *mox__realloc(void *ptr, size_t size)
{
    if (should_fail())
        return NULL;
    return realloc(ptr, size ? size : 1);
}

void mox__free(void *ptr) { free(ptr); }

char *mox__str_dup(const char *text)
{
    size_t n = strlen(text) + 1;
    char *p = mox__malloc(n);
    if (p)
        memcpy(p, text, n);
    return p;
}
