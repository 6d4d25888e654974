/* alloc.h - the one host allocator of libmox, its backends and the artifact
 * layer. In test builds (MOX_FAULT_INJECTION: libmox_testing and
 * mox_artifact_testing, never the release library) it carries the
 * allocation-failure hook of testing.h, which also reaches jansson's and
 * libcrypto's allocations. */
#ifndef MOX_CORE_ALLOC_H
#define MOX_CORE_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

void *mox__malloc(size_t size);
void *mox__calloc(size_t count, size_t size);
void *mox__realloc(void *ptr, size_t size);
void mox__free(void *ptr);
char *mox__str_dup(const char *text);
/* posix_memalign through the hook: NULL on failure; release with mox__free. */
void *mox__aligned_alloc(size_t alignment, size_t size);

/* Blocks the runtime allocates and frees per dispatch (ops, submissions,
 * dispatches, results): a per-thread cache of freed blocks in size classes
 * of 64 bytes up to 2 KiB, in front of malloc. glibc's own per-thread cache
 * keeps 7 blocks per size, fewer than a pipeline frees before it allocates
 * again, so most of these went through the arena's slow paths. The memory
 * is uninitialised; `size` must be the same at free. Blocks freed on one
 * thread are reused by that thread, or, a full class at a time through a
 * shared depot, by a thread that ran out (the program's thread reuses what
 * the completion thread freed). Goes through the allocation-failure
 * hook like mox__malloc; under AddressSanitizer cached blocks are
 * poisoned (all but their first 8 bytes, the cache's link), so a use after
 * free is still caught. */
void *mox__block_alloc(size_t size);
/* mox__block_free's common case is inline (below): a block of a class
 * with room in the calling thread's open cache. Everything else (no
 * cache yet, a closed or full class, a block too big for any class, NULL)
 * goes here. */
void mox__block_free_slow(void *block, size_t size);

/* The block caches' shape (alloc.c owns them): classes of
 * MOX__BLOCK_GRAIN bytes, at most MOX__BLOCK_KEEP blocks each. */
enum { MOX__BLOCK_GRAIN = 64, MOX__BLOCK_CLASSES = 32, MOX__BLOCK_KEEP = 64 };
/* The slots of mox__thread_block (below). */
enum { MOX__SLOT_LAUNCH_MEMO, MOX__SLOT_RECORD_MEMO, MOX__THREAD_SLOTS };
typedef struct mox__cached_block {
    struct mox__cached_block *next;
} mox__cached_block;
typedef struct mox__block_cache {
    mox__cached_block *head[MOX__BLOCK_CLASSES];
    /* The closed cache of ended threads counts every class full, so the
     * inline test of room sends its frees to the slow path. */
    uint32_t count[MOX__BLOCK_CLASSES];
    bool closed; /* the closed cache of ended threads: caches nothing */
    void *slots[MOX__THREAD_SLOTS]; /* mox__thread_block */
    struct mox__block_cache *prev, *next; /* in alloc.c's list of live caches */
} mox__block_cache;
/* The calling thread's cache (NULL until its first free): initial-exec
 * thread-local storage, one load off the thread pointer. */
extern _Thread_local mox__block_cache *mox__block_tls __attribute__((tls_model("initial-exec")));

/* Whether the caller is the last of the objects that share one block (a
 * launch op and its dispatch: made by one allocation, ending
 * independently, on any thread), counted in *users; the last one frees
 * the block. The only user left needs no atomic read-modify-write. */
static inline bool mox__block_last_user(_Atomic uint32_t *users)
{
    return atomic_load_explicit(users, memory_order_acquire) == 1 ||
           atomic_fetch_sub_explicit(users, 1, memory_order_acq_rel) == 1;
}

/* Under AddressSanitizer: marks memory whose use is a bug (dead objects,
 * cached blocks) or no longer one; nothing otherwise. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define MOX__POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define MOX__UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define MOX__POISON(p, n) ((void)(p), (void)(n))
#define MOX__UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Gives a block back to the thread's cache (see mox__block_alloc). */
static inline void mox__block_free(void *block, size_t size)
{
    size_t k = size ? (size - 1) / MOX__BLOCK_GRAIN : 0;
    mox__block_cache *c = mox__block_tls;
    if (__builtin_expect(!block || k >= MOX__BLOCK_CLASSES || !c ||
                         c->count[k] >= MOX__BLOCK_KEEP, 0)) {
        mox__block_free_slow(block, size);
        return;
    }
    mox__cached_block *b = block;
    b->next = c->head[k];
    c->head[k] = b;
    c->count[k]++;
    /* All but the link: leak checkers do not follow pointers stored in
     * poisoned memory, and would report the rest of the list as lost. */
    MOX__POISON(b + 1, (k + 1) * MOX__BLOCK_GRAIN - sizeof *b);
}

/* Zeroes `size` bytes at p, `size` a constant (the fixed head of a block
 * made per launch or per batch): GCC unrolls it into 16-byte stores, one
 * instruction per 16 bytes, where a call to memset costs about 60 for a
 * launch's 600 bytes (its setup, and a loop of 128 bytes a turn). Any
 * alignment. */
static inline __attribute__((always_inline)) void mox__zero_fixed(void *p, size_t size)
{
    typedef unsigned long long v16 __attribute__((vector_size(16), aligned(1), may_alias));
    v16 *v = p;
#pragma GCC unroll 64
    for (size_t i = 0; i < size / 16; i++)
        v[i] = (v16){0, 0};
    for (size_t i = size & ~(size_t)15; i < size; i++)
        ((unsigned char *)p)[i] = 0;
}

/* Zeroes the first `size` bytes of p rounded up to a multiple of 16, which
 * p must have: a backend's scratch, up to 256 bytes with a jump into a run
 * of 16-byte stores (a call to memset costs about 25 for such sizes). */
#define MOX__ZERO_CHUNK(i)                                                     \
    case (i) + 1:                                                              \
        v[i] = z;                                                              \
        __attribute__((fallthrough));
static inline void mox__zero_small(void *p, size_t size)
{
    typedef unsigned long long v16 __attribute__((vector_size(16), aligned(1), may_alias));
    v16 *v = p;
    /* The zero in a register GCC may not make again at each case label (it
     * did: a pxor before every store, two instructions per 16 bytes). */
    v16 z = {0, 0};
    __asm__("" : "+x"(z));
    switch ((size + 15) / 16) {
        MOX__ZERO_CHUNK(15) MOX__ZERO_CHUNK(14) MOX__ZERO_CHUNK(13) MOX__ZERO_CHUNK(12)
        MOX__ZERO_CHUNK(11) MOX__ZERO_CHUNK(10) MOX__ZERO_CHUNK(9) MOX__ZERO_CHUNK(8)
        MOX__ZERO_CHUNK(7) MOX__ZERO_CHUNK(6) MOX__ZERO_CHUNK(5) MOX__ZERO_CHUNK(4)
        MOX__ZERO_CHUNK(3) MOX__ZERO_CHUNK(2) MOX__ZERO_CHUNK(1) MOX__ZERO_CHUNK(0)
    case 0:
        break;
    default:
        memset(p, 0, (size + 15) & ~(size_t)15);
    }
}
#undef MOX__ZERO_CHUNK

/* Per-thread memory of the runtime's per-thread memos (launch.c), kept with
 * the thread's block cache: one initial-exec thread-local load away (the
 * default model of a shared library calls __tls_get_addr per access), and
 * reachable from a global, so leak checkers do not call the main thread's
 * lost. The block of `slot` is `size` bytes, zeroed when first made, freed
 * when the thread ends; NULL when it cannot be made (no memory, or the
 * thread is ending): the caller then does without its memo. */
void *mox__thread_block_slow(unsigned slot, size_t size);
/* (Inline: every launch looks its memo up.) */
static inline void *mox__thread_block(unsigned slot, size_t size)
{
    mox__block_cache *c = mox__block_tls;
    if (__builtin_expect(c && c->slots[slot] != NULL, 1))
        return c->slots[slot];
    return mox__thread_block_slow(slot, size);
}

/* The calling thread's block of `slot` when it has one, else NULL (makes
 * nothing). */
static inline void *mox__thread_block_peek(unsigned slot)
{
    mox__block_cache *c = mox__block_tls;
    return c ? c->slots[slot] : NULL;
}

/* jansson's parser misbehaves when one of its own allocations fails
 * (docs/errors.md, "What mox cannot guard against"), so while it runs the
 * hook leaves jansson's allocations alone and the whole parse stands for
 * one allocation instead: mox__alloc_parse_begin returns false when the
 * injected failure lands on it (the caller then reports out of memory as
 * the parser would). Always true, and free, in the release library. */
bool mox__alloc_parse_begin(void);
void mox__alloc_parse_end(void);

#endif
