/* alloc.c - the host allocator of libmox, its backends and the artifact
 * layer. Built twice: the release variant is malloc and friends; the test
 * variant (MOX_FAULT_INJECTION, linked into libmox_testing and
 * mox_artifact_testing only) adds the allocation-failure hook of
 * testing.h and routes jansson's and libcrypto's allocations through it. */
#include "alloc.h"

#include <pthread.h>
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

/* ---- block caches (alloc.h) ----
 * One cache per thread, found through one pointer of initial-exec
 * thread-local storage (a load off the thread pointer: the default model
 * of a shared library calls __tls_get_addr on every access, and 8 bytes of
 * static TLS are harmless even when libmox is dlopen'ed). The cache is made
 * on a thread's first free and handed back to malloc by a thread-specific
 * destructor when the thread ends; from then on the thread's frees go
 * straight to free(). A class keeps at most BLOCK_KEEP blocks. A thread
 * that frees what another allocates (the completion thread, the dispatches
 * and submissions the program's thread made) hands a full class, the whole
 * list at once, to the depot; a thread whose class is empty takes a list
 * back from there before it calls malloc. So a pipeline's blocks circulate
 * between its two threads, one lock per BLOCK_KEEP blocks, instead of
 * every block going through malloc on one thread and free on the other.
 * The depot holds at most DEPOT_LISTS lists per class; beyond that blocks
 * go back to malloc. */
enum { BLOCK_GRAIN = MOX__BLOCK_GRAIN, BLOCK_CLASSES = MOX__BLOCK_CLASSES,
       BLOCK_KEEP = MOX__BLOCK_KEEP, DEPOT_LISTS = 4 };

typedef mox__cached_block cached_block;

/* Lists of BLOCK_KEEP blocks each, poisoned as in a cache; a global, so
 * leak checkers see them as in use. */
static struct {
    pthread_mutex_t lock;
    cached_block *lists[BLOCK_CLASSES][DEPOT_LISTS];
    uint32_t count[BLOCK_CLASSES];
} depot = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Takes a full list of class k (BLOCK_KEEP blocks); false when the depot
 * has no room for it. */
static bool depot_put(size_t k, cached_block *list)
{
    pthread_mutex_lock(&depot.lock);
    bool room = depot.count[k] < DEPOT_LISTS;
    if (room)
        depot.lists[k][depot.count[k]++] = list;
    pthread_mutex_unlock(&depot.lock);
    return room;
}

/* A full list of class k, or NULL. */
static cached_block *depot_take(size_t k)
{
    pthread_mutex_lock(&depot.lock);
    cached_block *list = depot.count[k] ? depot.lists[k][--depot.count[k]] : NULL;
    pthread_mutex_unlock(&depot.lock);
    return list;
}

typedef mox__block_cache block_cache; /* alloc.h: mox__block_free is inline */

/* Every class counts as full, so mox__block_free's inline test sends the
 * frees of ended threads to the slow path, which frees them. */
#define FULL4 BLOCK_KEEP, BLOCK_KEEP, BLOCK_KEEP, BLOCK_KEEP
#define FULL16 FULL4, FULL4, FULL4, FULL4
_Static_assert(BLOCK_CLASSES == 32, "closed_cache's counts");
static const block_cache closed_cache = {.count = {FULL16, FULL16}, .closed = true};
#undef FULL16
#undef FULL4
_Thread_local block_cache *mox__block_tls __attribute__((tls_model("initial-exec")));
static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static bool cache_key_made;
/* Every live thread's cache, so that what the main thread (whose
 * thread-specific destructors never run) still caches at exit is reachable
 * from a global: leak checkers see it as in use, not lost. */
static block_cache *live_caches;
static pthread_mutex_t live_caches_lock = PTHREAD_MUTEX_INITIALIZER;

static void cache_release(void *arg)
{
    block_cache *c = arg;
    pthread_mutex_lock(&live_caches_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        live_caches = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&live_caches_lock);
    for (uint32_t k = 0; k < BLOCK_CLASSES; k++) {
        while (c->head[k]) {
            cached_block *b = c->head[k];
            MOX__UNPOISON(b, (k + 1) * BLOCK_GRAIN);
            c->head[k] = b->next;
            free(b);
        }
    }
    for (uint32_t i = 0; i < MOX__THREAD_SLOTS; i++)
        free(c->slots[i]);
    free(c);
    mox__block_tls = (block_cache *)&closed_cache; /* never written: closed, empty, every class full */
}

static void cache_key_create(void) { cache_key_made = pthread_key_create(&cache_key, cache_release) == 0; }

/* The calling thread's cache, made on first use; NULL when it cannot be. */
static block_cache *cache_open(void)
{
    pthread_once(&cache_key_once, cache_key_create);
    block_cache *c = cache_key_made ? calloc(1, sizeof *c) : NULL;
    if (c && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    if (c) {
        pthread_mutex_lock(&live_caches_lock);
        c->next = live_caches;
        if (live_caches)
            live_caches->prev = c;
        live_caches = c;
        pthread_mutex_unlock(&live_caches_lock);
    }
    mox__block_tls = c;
    return c;
}

/* The class of a block of `size` bytes (0-based), BLOCK_CLASSES when too big. */
static inline size_t block_class(size_t size)
{
    size_t k = size ? (size - 1) / BLOCK_GRAIN : 0;
    return k < BLOCK_CLASSES ? k : BLOCK_CLASSES;
}

/* An empty class: a list from the depot (the thread's cache made first,
 * on a thread that had never freed), else malloc. */
static __attribute__((noinline)) void *block_refill(block_cache *c, size_t k)
{
    if (!c)
        c = cache_open();
    cached_block *b = c && !c->closed ? depot_take(k) : NULL;
    if (!b)
        return malloc((k + 1) * BLOCK_GRAIN); /* any block of the class fits any size of it */
    MOX__UNPOISON(b, (k + 1) * BLOCK_GRAIN);
    c->head[k] = b->next;
    c->count[k] = BLOCK_KEEP - 1;
    return b;
}

void *mox__block_alloc(size_t size)
{
    if (should_fail())
        return NULL;
    size_t k = block_class(size);
    if (k == BLOCK_CLASSES)
        return malloc(size);
    block_cache *c = mox__block_tls;
    cached_block *b = c ? c->head[k] : NULL;
    if (!b)
        return block_refill(c, k);
    MOX__UNPOISON(b, (k + 1) * BLOCK_GRAIN);
    c->head[k] = b->next;
    c->count[k]--;
    return b;
}

/* mox__block_free's rare cases, out of line so that its common one saves
 * no registers: the thread's first free (the cache is made), a closed or
 * full class, a block too big for any class. */
static __attribute__((noinline)) void block_free_slow(void *block, size_t k)
{
    block_cache *c = mox__block_tls;
    if (!c && k < BLOCK_CLASSES)
        c = cache_open();
    if (k == BLOCK_CLASSES || !c || c->closed) {
        free(block);
        return;
    }
    if (c->count[k] >= BLOCK_KEEP) {
        if (!depot_put(k, c->head[k])) {
            free(block);
            return;
        }
        c->head[k] = NULL;
        c->count[k] = 0;
    }
    cached_block *b = block; /* room in the cache now */
    b->next = c->head[k];
    c->head[k] = b;
    c->count[k]++;
    MOX__POISON(b + 1, (k + 1) * BLOCK_GRAIN - sizeof *b);
}

void mox__block_free_slow(void *block, size_t size)
{
    if (block)
        block_free_slow(block, block_class(size));
}

void *mox__thread_block_slow(unsigned slot, size_t size)
{
    block_cache *c = mox__block_tls ? mox__block_tls : cache_open();
    if (!c || c->closed)
        return NULL;
    if (!c->slots[slot])
        c->slots[slot] = calloc(1, size);
    return c->slots[slot];
}
