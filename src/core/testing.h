/* testing.h - hidden hooks for mox's own tests (exported, not part of the
 * public API; tests include this header from src/core). */
#ifndef MOX_CORE_TESTING_H
#define MOX_CORE_TESTING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <mox/device.h>
#include <mox/op.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Allocation-failure injection (alloc.c). Only in test builds: libmox_testing
 * and mox_artifact_testing define these, the release libmox does not. The
 * hook sees every allocation of the runtime, the backends, the artifact
 * layer and the module registry (mox__malloc and friends), and jansson's
 * and libcrypto's, counted from arming on every thread. A program links
 * libmox_testing or mox_artifact_testing, never both (two hooks). */
typedef enum mox__fault_mode {
    MOX__FAULT_OFF,
    MOX__FAULT_ONCE,  /* allocation k fails, the others succeed */
    MOX__FAULT_FROM,  /* allocation k and every later one fail (until disarmed) */
    MOX__FAULT_BURST  /* allocations k .. k+count-1 fail, then memory comes back */
} mox__fault_mode;

/* Arms the hook; k counts allocations from now, 0-based. `count` is the
 * burst length (BURST only). Resets the counters below. */
MOX_API void mox__testing_fault_arm(mox__fault_mode mode, long k, long count);
MOX_API void mox__testing_fault_disarm(void);
/* Allocations the hook saw since arming / failures it injected. */
MOX_API long mox__testing_fault_seen(void);
MOX_API long mox__testing_fault_injected(void);
/* Whether libcrypto accepted the hook's allocator (it refuses once it has
 * allocated); jansson's is always installed. */
MOX_API bool mox__testing_fault_reaches_dependencies(void);

/* ONCE at count; count < 0 disarms. */
MOX_API void mox__testing_fail_alloc_after(long count);

/* While held, submitted work does not start executing on the device (it is
 * queued); releasing starts it in submission order. Keeps a batch "in
 * flight" deterministically: command capacity (A3) and cross-batch failure
 * gating of an unfinished writer (A9) are tested with it.
 * Codes: MOX_ERR_INVALID_ARGUMENT, MOX_ERR_STATE (backend cannot hold). */
MOX_API mox_status mox__testing_hold(mox_device *device, bool hold);

/* A hook called on the completing thread as each execution's completion
 * reaches the core - its end on the device seen, its op not yet resolved
 * - with no lock held. Tests act inside that window with it: what they
 * submit then must still resolve after that op. `hook` is the caller's and
 * stays valid until removed (NULL) and no completion runs it any more. */
typedef struct mox__testing_hook {
    void (*fn)(void *ctx);
    void *ctx;
} mox__testing_hook;
MOX_API void mox__testing_on_complete(const mox__testing_hook *hook);

#ifndef __cplusplus
/* The runtime's side (completion.c): one load when unset. */
extern _Atomic(const mox__testing_hook *) mox__complete_hook;
static inline void mox__testing_complete_point(void)
{
    const mox__testing_hook *h = atomic_load_explicit(&mox__complete_hook, memory_order_acquire);
    if (__builtin_expect(h != NULL, 0))
        h->fn(h->ctx);
}
#endif

/* Batches submitted and not yet completed. */
MOX_API uint32_t mox__testing_in_flight(mox_device *device);

/* How many then ops deep `op` is, following the op each waits on (0 for
 * an op that is not a then op): then ops of then ops, and those their
 * callbacks return, are merged into one, so this is 1 for any chain. */
MOX_API uint32_t mox__testing_then_depth(const mox_op *op);

#ifdef __cplusplus
}
#endif
#endif
