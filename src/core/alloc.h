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
void mox__block_free(void *block, size_t size);

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

/* Per-thread memory of the runtime's per-thread memos (launch.c), kept with
 * the thread's block cache: one initial-exec thread-local load away (the
 * default model of a shared library calls __tls_get_addr per access), and
 * reachable from a global, so leak checkers do not call the main thread's
 * lost. The block of `slot` is `size` bytes, zeroed when first made, freed
 * when the thread ends; NULL when it cannot be made (no memory, or the
 * thread is ending): the caller then does without its memo. */
enum { MOX__SLOT_LAUNCH_MEMO, MOX__THREAD_SLOTS };
void *mox__thread_block(unsigned slot, size_t size);

/* jansson's parser misbehaves when one of its own allocations fails
 * (docs/errors.md, "What mox cannot guard against"), so while it runs the
 * hook leaves jansson's allocations alone and the whole parse stands for
 * one allocation instead: mox__alloc_parse_begin returns false when the
 * injected failure lands on it (the caller then reports out of memory as
 * the parser would). Always true, and free, in the release library. */
bool mox__alloc_parse_begin(void);
void mox__alloc_parse_end(void);

#endif
