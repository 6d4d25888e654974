/* debug_check.h - debug builds catch use of a dead object: a double drop,
 * double release, use after release, pushing a consumed launch, ending a
 * batch twice. These are undefined behaviour (docs/async.md, Ownership);
 * where NDEBUG is not defined (CMAKE_BUILD_TYPE=Debug) each public entry
 * point checks the object's magic and aborts with a message naming the call.
 * A check sees an object whose memory was not reused yet (under ASan,
 * whose quarantine delays reuse, practically always); release builds
 * compile the checks away. */
#ifndef MOX_CORE_DEBUG_CHECK_H
#define MOX_CORE_DEBUG_CHECK_H

#include <stdint.h>

/* The `magic` field of live objects; MOX__DEAD once destroyed. */
#define MOX__MAGIC_OP UINT32_C(0x6d6f7830)
#define MOX__MAGIC_BATCH UINT32_C(0x6d6f7831)
#define MOX__MAGIC_BUFFER UINT32_C(0x6d6f7832)
#define MOX__MAGIC_DEVICE UINT32_C(0x6d6f7833)
#define MOX__DEAD UINT32_C(0xdeadd00d)

/* Kills the magic of an object about to be freed (in every build: one store). */
#define MOX__KILL(obj) ((obj)->magic = MOX__DEAD)

#ifdef NDEBUG
#define MOX__CHECK_IN(obj, kind, call) ((void)0)
#else
/* `obj` (NULL is the caller's own business) must be a live object of
 * `kind` (OP, BATCH, BUFFER, DEVICE); `call` is the public function. */
#define MOX__CHECK_IN(obj, kind, call) \
    mox__debug_check((obj) ? &(obj)->magic : NULL, MOX__MAGIC_##kind, call)
void mox__debug_check(const uint32_t *magic, uint32_t expected, const char *call);
#endif
/* The check at the top of a public entry point. */
#define MOX__CHECK(obj, kind) MOX__CHECK_IN(obj, kind, __func__)

#endif
