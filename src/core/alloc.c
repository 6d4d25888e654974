/* alloc.c - the host allocator of libmox, its backends and the artifact
 * layer. Built twice: the release variant is malloc and friends; the test
 * variant (MOX_FAULT_INJECTION, linked into libmox_testing and
 * mox_artifact_testing only) adds the allocation-failure hook of
 * testing.h and routes jansson's and libcrypto's allocations through it. */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if MOX_FAULT_INJECTION
#include <stdatomic.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "testing.h"

/* Armed state: allocation number `first` (counted from arming, 0-based)
 * and, unless the mode is FROM, the burst-1 after it fail. */
static _Atomic int mode = MOX__FAULT_OFF;
static _Atomic long first, burst;
static _Atomic long seen, injected;
static _Atomic bool reaches_dependencies;
static _Thread_local bool in_parse;

void mox__testing_fault_arm(mox__fault_mode m, long k, long count)
{
    atomic_store(&mode, MOX__FAULT_OFF);
    atomic_store(&first, k < 0 ? 0 : k);
    atomic_store(&burst, m == MOX__FAULT_ONCE ? 1 : count < 1 ? 1 : count);
    atomic_store(&seen, 0);
    atomic_store(&injected, 0);
    atomic_store(&mode, m);
}

void mox__testing_fault_disarm(void) { atomic_store(&mode, MOX__FAULT_OFF); }
long mox__testing_fault_seen(void) { return atomic_load(&seen); }
long mox__testing_fault_injected(void) { return atomic_load(&injected); }
bool mox__testing_fault_reaches_dependencies(void) { return atomic_load(&reaches_dependencies); }

void mox__testing_fail_alloc_after(long count)
{
    if (count < 0)
        mox__testing_fault_disarm();
    else
        mox__testing_fault_arm(MOX__FAULT_ONCE, count, 1);
}

static bool should_fail(void)
{
    int m = atomic_load(&mode);
    if (m == MOX__FAULT_OFF)
        return false;
    long i = atomic_fetch_add(&seen, 1);
    long k = atomic_load(&first);
    bool fail = i >= k && (m == MOX__FAULT_FROM || i - k < atomic_load(&burst));
    if (fail)
        atomic_fetch_add(&injected, 1);
    return fail;
}

bool mox__alloc_parse_begin(void)
{
    if (should_fail())
        return false;
    in_parse = true;
    return true;
}

void mox__alloc_parse_end(void) { in_parse = false; }

static void *json_alloc(size_t size) { return !in_parse && should_fail() ? NULL : malloc(size); }

static void *crypto_alloc(size_t size, const char *file, int line)
{
    (void)file;
    (void)line;
    return should_fail() ? NULL : malloc(size);
}

static void *crypto_realloc(void *ptr, size_t size, const char *file, int line)
{
    (void)file;
    (void)line;
    return should_fail() ? NULL : realloc(ptr, size);
}

static void crypto_free(void *ptr, const char *file, int line)
{
    (void)file;
    (void)line;
    free(ptr);
}

/* Before main: libcrypto accepts its allocator only before its first
 * allocation. */
__attribute__((constructor)) static void install_dependency_hooks(void)
{
    json_set_alloc_funcs(json_alloc, free);
    atomic_store(&reaches_dependencies,
                 CRYPTO_set_mem_functions(crypto_alloc, crypto_realloc, crypto_free) == 1);
}

#else

static inline bool should_fail(void) { return false; }
bool mox__alloc_parse_begin(void) { return true; }
void mox__alloc_parse_end(void) {}

#endif

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

void *mox__aligned_alloc(size_t alignment, size_t size)
{
    void *p = NULL;
    if (should_fail() || posix_memalign(&p, alignment, size ? size : 1) != 0)
        return NULL;
    return p;
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
