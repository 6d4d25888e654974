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

/* Small blocks: malloc + memset, not calloc. glibc's calloc (2.36 here)
 * never takes from the per-thread cache (tcache), so every small calloc ran
 * the arena's slow path and every matching free overflowed the cache into
 * _int_free: about 1900 instructions per dispatch of the pipelined
 * two-stage sequence (ops, dispatches, submissions are all zeroed blocks
 * allocated per dispatch). Large blocks keep calloc, which can skip zeroing
 * fresh pages. */
enum { SMALL_BLOCK = 1024 }; /* glibc's largest tcache size class is 1032 */

void *mox__calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (!count)
        count = 1;
    if (!size)
        size = 1;
    if (count <= SMALL_BLOCK / size) {
        void *p = malloc(count * size);
        /* Hides where p came from: GCC would fuse malloc + memset back into calloc. */
        __asm__("" : "+r"(p));
        if (p)
            memset(p, 0, count * size);
        return p;
    }
    return calloc(count, size);
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
